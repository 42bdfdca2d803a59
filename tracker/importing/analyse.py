"""``tracker analyse``: a local engine's evals for a player's games that have none.

The runner picks the player's games without stored evals (:func:`tracker.store.analysis.
games_to_analyse`), newest first; a game whose stored text already holds Lichess's evals (one
imported before they were kept apart) gets those, without the engine. The others go to
``jobs`` engine processes (:class:`~tracker.sources.engine.LocalEngine`, one per worker
thread: the search runs in the engine's process, so threads suffice; with several jobs the
longest games go first, so that the jobs finish together); every finished game is
written at once in its own transaction by the calling thread, so an interrupted run keeps
every finished game and the same command goes on with the rest. Games Lichess analysed are
never analysed again.

Ctrl+C and SIGTERM (raised in the calling thread as KeyboardInterrupt /
:class:`~tracker.core.errors.Terminated`): the engines are closed, the games in flight are dropped,
the summary so far rides on the exception (``exc.summary``). ``stop`` (an Event) does the
same from another thread (the dashboard), returning a partial summary.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Final

from tracker.core.errors import ArgumentError, InterruptedRun
from tracker.core.exact import plural
from tracker.core.records import Analysis
from tracker.importing.runner import interrupts_deferred
from tracker.sources.engine import (
    DEFAULT_NODES,
    MAX_NODES,
    MIN_NODES,
    EngineFailedError,
    EngineTime,
    LocalEngine,
    find_engine,
)
from tracker.sources.game_text import read_game_text
from tracker.store.analysis import (
    GameToAnalyse,
    games_to_analyse,
    write_engine_analysis,
    write_found_analysis,
)
from tracker.store.db import Store

#: ``progress(games done, games to do)``: called after each finished game, and once at start.
AnalyseProgress = Callable[[int, int], None]

#: Jobs allowed: one engine process each.
MAX_JOBS: Final = 64
#: Why a game was not analysed.
SKIP_MOVES: Final = "moves not readable"
#: Seconds the calling thread waits for a result before checking on the workers.
_POLL: Final = 0.2


@dataclass
class AnalyseSummary:
    """What one ``tracker analyse`` run did.

    ``asked``: the player's games the run was asked about (analysable: standard chess with
    moves); ``had_evals``: of those, already analysed before the run; ``found``: Lichess evals
    found in the stored text and stored; ``analysed``: analysed by the engine and stored;
    ``skipped``: reason → games not analysed; ``status``: ``complete`` or ``partial``
    (stopped, or an engine failed: run it again to go on); ``seconds``: wall time;
    ``spent``: what the engines reported (their search time in seconds, summed over jobs).
    """

    player: str
    perf: str | None
    nodes: int
    jobs: int
    engine: str = ""
    asked: int = 0
    had_evals: int = 0
    found: int = 0
    analysed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    status: str = "running"
    message: str | None = None
    seconds: float = 0.0
    spent: EngineTime = field(default_factory=EngineTime)

    @property
    def games_per_second(self) -> float:
        return self.analysed / self.seconds if self.seconds > 0 else 0.0

    @property
    def overhead(self) -> float | None:
        """The share of the engines' wall time (jobs × seconds) not spent searching, or
        ``None`` before any search."""
        if self.spent.positions == 0 or self.seconds <= 0:
            return None
        return max(0.0, 1.0 - self.spent.seconds / (self.jobs * self.seconds))

    def line(self) -> str:
        """One line for people."""
        perf = f" {self.perf}" if self.perf else ""
        text = (f"{self.player}{perf}: {plural(self.asked, 'game')}, {self.had_evals} already "
                "analysed, "
                f"{self.found} with Lichess evals found, {self.analysed} analysed")
        if self.engine and self.analysed:
            text += (f" by {self.engine} at {self.nodes:,} nodes a position ({self.jobs} "
                     f"job{'s' if self.jobs != 1 else ''}, {self.games_per_second:.2f} "
                     "games/s)")
        if self.skipped:
            text += ", skipped " + ", ".join(f"{n} {r}" for r, n in sorted(self.skipped.items()))
        text += f" in {self.seconds:.1f}s — {self.status}"
        return text + (f": {self.message}" if self.message else "")


def default_jobs() -> int:
    """The jobs a run takes when not told: the cores this process may use (its CPU affinity,
    which a container or ``taskset`` narrows; all the machine's where the platform does not
    say), at most :data:`MAX_JOBS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows: no affinity
        cores = os.cpu_count() or 1
    return max(1, min(MAX_JOBS, cores))


def check_nodes_jobs(nodes: int, jobs: int) -> None:
    """Raise ArgumentError (exit code 2) for a node budget or job count out of range."""
    if not MIN_NODES <= nodes <= MAX_NODES:
        raise ArgumentError(f"--nodes must be {MIN_NODES:,} to {MAX_NODES:,}, got {nodes:,}")
    if not 1 <= jobs <= MAX_JOBS:
        raise ArgumentError(f"--jobs must be 1 to {MAX_JOBS}, got {jobs}")


@dataclass(frozen=True, slots=True)
class _Task:
    game: GameToAnalyse
    sans: tuple[str, ...]


# A worker's answer: (task, analysis, spent) or (task, None, why the game was skipped), or
# (None, None, why the worker stopped).
_Result = tuple[_Task | None, Analysis | EngineTime | None, str | EngineTime | None]


def run_analyse(store: Store, user: str, *, perf: str | None = None,
                since_ms: int | None = None, last: int | None = None,
                nodes: int = DEFAULT_NODES, jobs: int | None = None,
                engine_path: str | None = None, progress: AnalyseProgress | None = None,
                stop: threading.Event | None = None,
                members: Sequence[str] | None = None) -> AnalyseSummary:
    """Analyse the player's games without evals (see the module's docstring); ``jobs``
    defaults to :func:`default_jobs`; with ``members`` (lowercase ids), the games of every
    member instead, each game once, newest first, ``user`` naming them (a group's name) in
    the summary. Raises ArgumentError for a bad budget or job count, EngineMissingError
    where no engine is installed and there is a game to analyse."""
    jobs = default_jobs() if jobs is None else jobs
    check_nodes_jobs(nodes, jobs)
    started = time.perf_counter()
    summary = AnalyseSummary(user if members is not None else user.lower(), perf, nodes, jobs)
    todo, summary.had_evals = games_to_analyse(
        store, user if members is None else members, perf, since_ms=since_ms, last=last)
    summary.asked = summary.had_evals + len(todo)
    tasks = _tasks(store, todo, summary)
    if progress is not None:
        progress(0, len(tasks))
    with summary_run(summary, started):
        if tasks:
            _analyse(store, tasks, summary, engine_path, progress, stop or threading.Event())
    return summary


@contextmanager
def summary_run(summary: AnalyseSummary, started: float) -> Iterator[None]:
    """The run of an analysis (one player's, a group's, a worker's) around its work: complete
    when it ends still running, partial after Ctrl+C (raised again as InterruptedRun with the
    summary, for the caller's last line), its wall time in ``summary.seconds`` (s, from
    ``started``, a ``time.perf_counter()``) however it ends."""
    try:
        yield
        if summary.status == "running":
            summary.status = "complete"
    except KeyboardInterrupt as exc:
        summary.status = "partial"
        summary.message = "stopped; run the same command again to go on"
        summary.seconds = time.perf_counter() - started
        raise InterruptedRun.of(exc, summary) from exc
    finally:
        summary.seconds = time.perf_counter() - started


def _tasks(store: Store, todo: list[GameToAnalyse], summary: AnalyseSummary) -> list[_Task]:
    """The games for the engine; a game whose stored text holds Lichess's evals gets them
    stored instead, one whose moves cannot be read is skipped (counted)."""
    skipped: Counter[str] = Counter()
    tasks: list[_Task] = []
    for game in todo:
        text = read_game_text(game.raw, game.source)
        if text.analysis is not None:
            write_found_analysis(store, game.pk, text.analysis)
            summary.found += 1
        elif not text.sans or text.problem:
            skipped[SKIP_MOVES] += 1
        else:
            tasks.append(_Task(game, text.sans))
    summary.skipped = dict(skipped)
    return tasks


def _analyse(store: Store, tasks: list[_Task], summary: AnalyseSummary,
             engine_path: str | None, progress: AnalyseProgress | None,
             stop: threading.Event) -> None:
    """Run the workers and store each finished game as it comes."""
    path = find_engine(engine_path)  # the one-line error before any thread starts
    run = _Run(store, summary, len(tasks))
    # With several jobs the longest games first: the jobs then finish together instead of
    # one job analysing the last long game alone while the others wait.
    for task in sorted(tasks, key=lambda t: -len(t.sans)) if summary.jobs > 1 else tasks:
        run.pending.put(task)
    workers = [threading.Thread(target=_work, args=(path, summary.nodes, run),
                                name=f"tracker-analyse-{i}", daemon=True)
               for i in range(min(summary.jobs, len(tasks)))]
    for w in workers:
        w.start()
    alive = len(workers)
    try:
        while run.done < len(tasks) and alive and not stop.is_set():
            try:
                result = run.results.get(timeout=_POLL)
            except queue.Empty:
                continue
            alive -= run.take(result)
            if progress is not None and result[0] is not None:
                progress(run.done, len(tasks))
    finally:
        run.quit.set()
        for engine in list(run.engines):
            engine.close()  # a search in flight ends at once
        for w in workers:
            w.join(timeout=5)
        while True:  # the workers' last reports: the time their engines spent
            try:
                run.take(run.results.get_nowait())
            except queue.Empty:
                break
    if run.done < len(tasks):
        summary.status = "partial"
        summary.message = ("stopped; run the same command again to go on" if stop.is_set()
                           else f"{run.failure or 'the engine stopped'}; run the same command "
                           "again to go on")


class _Run:
    """The state a run's threads share: the games to do, the results, the engines."""

    def __init__(self, store: Store, summary: AnalyseSummary, total: int) -> None:
        self.store = store
        self.summary = summary
        self.total = total
        self.pending: queue.SimpleQueue[_Task] = queue.SimpleQueue()
        self.results: queue.SimpleQueue[_Result] = queue.SimpleQueue()
        self.engines: list[LocalEngine] = []
        self.quit = threading.Event()
        self.done = 0
        self.failure: str | None = None
        self.skipped = Counter(summary.skipped)

    def take(self, result: _Result) -> int:
        """Store one worker's result (a finished game is written at once); 1 when the
        result says the worker stopped, else 0."""
        task, got, why = result
        summary = self.summary
        if task is None:
            if isinstance(why, EngineTime):
                summary.spent.add(why)
            elif isinstance(why, str):
                self.failure = why  # its engine did not start
            return 1
        self.done += 1
        if isinstance(got, Analysis):
            with interrupts_deferred():  # Ctrl+C lands after the game's transaction
                write_engine_analysis(self.store, task.game.pk, got)
            summary.analysed += 1
            summary.engine = f"{got.engine} {got.engine_version}".strip()
        else:
            self.skipped[str(why)] += 1
            summary.skipped = dict(self.skipped)
        return 0


def _work(path: str, nodes: int, run: _Run) -> None:
    """One worker: its own engine process, games from ``run.pending`` until none is left."""
    spent = EngineTime()
    try:
        engine = LocalEngine(nodes, path)
    except EngineFailedError as exc:
        run.results.put((None, None, str(exc)))
        return
    run.engines.append(engine)
    try:
        while not run.quit.is_set():
            try:
                task = run.pending.get_nowait()
            except queue.Empty:
                break
            try:
                game = engine.analyse_game(task.game.id, task.sans, task.game.initial_fen)
            except ValueError:  # an illegal move in the stored moves: skipped, counted
                run.results.put((task, None, SKIP_MOVES))
                continue
            spent.add(game.spent)
            run.results.put((task, game.analysis, None))
    except Exception as exc:  # closed by the runner, or the engine died
        if not run.quit.is_set():  # died: the run is partial, and says why
            run.failure = (str(exc) if isinstance(exc, EngineFailedError)
                           else f"the engine failed: {type(exc).__name__}: {exc}")
    finally:
        engine.close()
        run.results.put((None, None, spent))
