"""``tracker analyse``: a local engine's evals for a player's games that have none.

The runner lists the keys of the player's games without stored evals (:func:`tracker.store.
analysis.keys_to_analyse`), newest first, and reads their texts a batch at a time
(:data:`BATCH` games, the next batch while the engines still have work), so that a club's
run holds a batch of texts, not every member's games; a game whose stored text already holds
Lichess's evals (one imported before they were kept apart) gets those, without the engine.
The others go to ``jobs`` engine processes (:class:`~tracker.sources.engine.LocalEngine`, one
per worker thread: the search runs in the engine's process, so threads suffice; with several
jobs the longest games of a batch go first, so that the jobs finish together); every
finished game is written at once in its own transaction by the calling thread, so an
interrupted run keeps every finished game and the same command goes on with the rest. Games
Lichess analysed are never analysed again.

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

from tracker.analysis.engine_calibration import calibrated_budgets
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
    failure_message,
    find_engine,
)
from tracker.sources.game_text import read_game_text
from tracker.store.analysis import (
    GameToAnalyse,
    games_by_key,
    keys_to_analyse,
    write_engine_analysis,
    write_found_analysis,
)
from tracker.store.db import Store

#: ``progress(games done, games to do)``: called after each finished game (analysed, its
#: Lichess evals found in its text, or skipped), and once at start.
AnalyseProgress = Callable[[int, int], None]

#: Jobs allowed: one engine process each.
MAX_JOBS: Final = 64
#: Why a game was not analysed.
SKIP_MOVES: Final = "moves not readable"
#: Seconds the calling thread waits for a result before checking on the workers.
_POLL: Final = 0.2
#: Games whose texts are read at a time; the next batch is read when fewer than two games a
#: job are left to start.
BATCH: Final = 100


@dataclass
class AnalyseSummary:
    """What one ``tracker analyse`` run did.

    ``asked``: the player's games the run was asked about (analysable: standard chess with
    moves); ``had_evals``: of those, already analysed before the run; ``found``: Lichess evals
    found in the stored text and stored; ``analysed``: analysed by the engine and stored;
    ``skipped``: reason → games not analysed; ``unreadable``: one line per game skipped as
    :data:`SKIP_MOVES`, which says where (``game abcdEFGH: move 14.Qh6 is illegal there``),
    in the order met; ``status``: ``complete`` or ``partial``
    (stopped, or an engine failed: run it again to go on); ``seconds``: wall time;
    ``spent``: what the engines reported (their search time in seconds, summed over jobs);
    ``uncalibrated``: games analysed at an engine, version and budget no engine calibration
    covers (their levels are read from the raw evals: higher than Lichess's would give).
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
    unreadable: list[str] = field(default_factory=list)
    status: str = "running"
    message: str | None = None
    seconds: float = 0.0
    spent: EngineTime = field(default_factory=EngineTime)
    uncalibrated: int = 0

    def count_analysed(self, analysis: Analysis) -> None:
        """Count one game the engine analysed and stored (``analysis``: its evals' record)."""
        self.analysed += 1
        self.uncalibrated += analysis.calibration is None
        self.engine = f"{analysis.engine} {analysis.engine_version}".strip()

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
        if self.asked == 0 and self.status == "complete" and not self.message:
            # Nothing was there to analyse (exit code 1): not "complete", which reads as done.
            return text + (" — nothing to analyse: no game in the set asked for (see --perf, "
                           "--since)")
        text += f" in {self.seconds:.1f}s — {self.status}"
        text += f": {self.message}" if self.message else ""
        if self.uncalibrated:
            text += (f"; note: no engine calibration covers {self.engine} at "
                     f"{self.nodes:,} nodes: levels from these evals "
                     f"({plural(self.uncalibrated, 'game')}) read higher than Lichess's evals "
                     f"would (calibrated: {calibrated_budgets()})")
        return text


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


# A worker's answer: (task, analysis, spent) or (task, None, why the game was skipped: "reason"
# or "reason: where", :data:`SKIP_MOVES` and the bad move), or (None, None, why the worker
# stopped).
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
    the summary. ``progress(done, total)``: ``total`` the games without evals at the start.
    Raises ArgumentError for a bad budget or job count, EngineMissingError where no engine
    is installed and there is a game to analyse."""
    jobs = default_jobs() if jobs is None else jobs
    check_nodes_jobs(nodes, jobs)
    started = time.perf_counter()
    summary = AnalyseSummary(user if members is not None else user.lower(), perf, nodes, jobs)
    keys, summary.had_evals = keys_to_analyse(
        store, user if members is None else members, perf, since_ms=since_ms, last=last)
    summary.asked = summary.had_evals + len(keys)
    if progress is not None:
        progress(0, len(keys))
    with summary_run(summary, started):
        if keys:
            _analyse(store, keys, summary, engine_path, progress, stop or threading.Event())
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


def _analyse(store: Store, keys: Sequence[int], summary: AnalyseSummary,
             engine_path: str | None, progress: AnalyseProgress | None,
             stop: threading.Event) -> None:
    """Read the games a batch at a time, run the workers (from the first game for the
    engine on) and store each finished game as it comes."""
    run = _Run(store, summary, keys, progress)
    try:
        while run.done < run.total and not stop.is_set():
            if run.read < len(keys) and run.pending.qsize() < 2 * summary.jobs:
                run.read_batch(engine_path)  # the engines' next games, before they run out
                continue
            if not run.workers or run.alive == 0:
                break
            try:
                result = run.results.get(timeout=_POLL)
            except queue.Empty:
                continue
            run.take(result)
    finally:
        run.close()
    if run.done < run.total:
        summary.status = "partial"
        summary.message = ("stopped; run the same command again to go on" if stop.is_set()
                           else failure_message(run.failure or "the engine stopped"))


class _Run:
    """The state a run's threads share: the games to do, the results, the engines."""

    def __init__(self, store: Store, summary: AnalyseSummary, keys: Sequence[int],
                 progress: AnalyseProgress | None) -> None:
        self.store = store
        self.summary = summary
        self.keys = keys
        self.total = len(keys)
        self.read = 0  # games whose texts were read
        self.progress = progress
        self.workers: list[threading.Thread] = []
        # Games for the workers; ``None``: no more, the worker ends.
        self.pending: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self.results: queue.SimpleQueue[_Result] = queue.SimpleQueue()
        self.engines: list[LocalEngine] = []
        self.quit = threading.Event()
        self.done = 0
        self.alive = 0  # workers started and not ended
        self.failure: str | None = None
        self.skipped = Counter(summary.skipped)

    def read_batch(self, engine_path: str | None) -> None:
        """Read the next :data:`BATCH` games (see :meth:`feed`); the workers start with the
        first game for the engine, and each is told to end after the last one."""
        batch = self.keys[self.read:self.read + BATCH]
        self.read += len(batch)
        if self.feed(batch) and not self.workers:
            path = find_engine(engine_path)  # the one-line error before any thread starts
            self.workers = [threading.Thread(target=_work, args=(path, self.summary.nodes, self),
                                             name=f"tracker-analyse-{i}", daemon=True)
                            for i in range(min(self.summary.jobs, self.total))]
            self.alive = len(self.workers)
            for w in self.workers:
                w.start()
        if self.read == self.total:
            for _ in self.workers:
                self.pending.put(None)  # no more games: each worker ends

    def close(self) -> None:
        """Stop the workers (a search in flight ends at once) and take their last reports
        (the time their engines spent)."""
        self.quit.set()
        for engine in list(self.engines):
            engine.close()
        for w in self.workers:
            w.join(timeout=5)
        while True:
            try:
                self.take(self.results.get_nowait())
            except queue.Empty:
                break

    def feed(self, keys: Sequence[int]) -> int:
        """Read the games ``keys`` (newest first) and queue those for the engine (with
        several jobs, the batch's longest first); a game whose stored text holds Lichess's
        evals gets them stored instead, one whose moves cannot be read is skipped; both
        count as done. Returns the games queued."""
        with self.store.engine.connect() as conn:
            games = games_by_key(conn, keys)
        tasks: list[_Task] = []
        for game in games:
            text = read_game_text(game.raw, game.source)
            if text.analysis is not None:
                with interrupts_deferred():
                    write_found_analysis(self.store, game.pk, text.analysis)
                self.summary.found += 1
                self._finished()
            elif not text.sans or text.problem:
                self._skip(SKIP_MOVES, game.id, text.problem or "no moves")
            else:
                tasks.append(_Task(game, text.sans))
        self.done += len(keys) - len(games)  # deleted since they were listed: nothing to do
        for task in sorted(tasks, key=lambda t: -len(t.sans)) if self.summary.jobs > 1 else tasks:
            self.pending.put(task)
        return len(tasks)

    def _finished(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total)

    def _skip(self, why: str, game_id: str, detail: str) -> None:
        self.skipped[why] += 1
        if why == SKIP_MOVES:
            self.summary.unreadable.append(f"game {game_id}: {detail}")
        self.summary.skipped = dict(self.skipped)
        self._finished()

    def take(self, result: _Result) -> None:
        """Store one worker's result (a finished game is written at once), or note that a
        worker stopped."""
        task, got, why = result
        summary = self.summary
        if task is None:
            if isinstance(why, EngineTime):
                summary.spent.add(why)
            elif isinstance(why, str):
                self.failure = why  # its engine did not start
            self.alive -= 1
            return
        if isinstance(got, Analysis):
            with interrupts_deferred():  # Ctrl+C lands after the game's transaction
                write_engine_analysis(self.store, task.game.pk, got)
            summary.count_analysed(got)
            self._finished()
        else:
            reason, _, detail = str(why).partition(": ")
            self._skip(reason, task.game.id, detail)


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
                task = run.pending.get(timeout=_POLL)
            except queue.Empty:  # the next batch is being read
                continue
            if task is None:
                break
            try:
                game = engine.analyse_game(task.game.id, task.sans, task.game.initial_fen)
            except ValueError as exc:  # an illegal move in the stored moves: skipped, counted
                run.results.put((task, None, f"{SKIP_MOVES}: {exc}"))
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
