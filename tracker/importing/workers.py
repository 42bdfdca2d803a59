"""``tracker analyse --worker``: one of many workers analysing a set of games on one
PostgreSQL database, each game once.

A club points every member's tracker at its PostgreSQL server and runs ``tracker analyse
--group club --worker`` on as many machines as it likes. Each worker runs ``jobs`` engine
threads (one engine process each, as :mod:`tracker.importing.analyse`); a thread claims the
newest free game (:func:`tracker.store.claims.claim_games`: ``SELECT … FOR UPDATE SKIP
LOCKED`` and a lease), analyses it and hands it to the calling thread, which stores it and
drops the claim in one transaction (:func:`~tracker.store.claims.finish_game`) and renews the
leases of the games in flight every third of a lease. A worker killed mid-game (``kill -9``,
a machine off) leaves a claim that ends with its lease: another worker then claims the game.
A worker ends when the set has no game left without evals; while other workers still hold
claims it waits for them (a dead one's lease ends, and its game is taken).

Ctrl+C, SIGTERM and ``stop`` end the run as for a local run: finished games are kept, the
games in flight are given back at once (:func:`~tracker.store.claims.release_claims`).
"""

from __future__ import annotations

import os
import queue
import secrets
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from tracker.core.errors import ArgumentError
from tracker.core.records import Analysis
from tracker.importing.analyse import (
    SKIP_MOVES,
    AnalyseProgress,
    AnalyseSummary,
    check_nodes_jobs,
    summary_run,
)
from tracker.importing.runner import interrupts_deferred
from tracker.sources.engine import (
    DEFAULT_NODES,
    EngineFailedError,
    EngineTime,
    LocalEngine,
    failure_message,
    find_engine,
)
from tracker.sources.game_text import read_game_text
from tracker.store.analysis import GameToAnalyse
from tracker.store.claims import (
    WORKER_MAX,
    ClaimScope,
    claim_games,
    finish_game,
    release_claims,
    renew_claims,
    require_shared,
    scope_analysed,
    scope_state,
    skip_game,
)
from tracker.store.db import Store

#: A worker's lease on a game by default (seconds): renewed every third of it while the
#: game is analysed, so a dead worker's game waits at most this long.
DEFAULT_LEASE: Final = 60.0
MIN_LEASE: Final = 1.0
MAX_LEASE: Final = 86_400.0
#: ``on_game(game id, what happened)``: after each game this worker finished: ``analysed``,
#: ``found`` (Lichess's evals in its text), ``skipped: why``, or ``already analysed``.
OnGame = Callable[[str, str], None]
#: Seconds between two counts of the games left (the progress bar's figures).
_COUNT_EVERY: Final = 1.0
_POLL: Final = 0.2


def check_lease(lease: float) -> None:
    """Raise ArgumentError (exit code 2) for a lease out of range."""
    if not MIN_LEASE <= lease <= MAX_LEASE:
        raise ArgumentError(f"--lease must be {MIN_LEASE:g} to {MAX_LEASE:,.0f} seconds, "
                            f"got {lease:g}")


def worker_id() -> str:
    """A new worker id: host name, process id and a random part (two containers may share
    both), at most 64 characters: ``host/1234-9f3a2c``."""
    tail = f"/{os.getpid()}-{secrets.token_hex(3)}"
    return socket.gethostname()[: WORKER_MAX - len(tail)] + tail


@dataclass(frozen=True, slots=True)
class _Done:
    """A thread's answer: a game and its analysis (``Analysis``), or why it was skipped
    (``detail``: where, for moves not readable: ``move 14.Qh6 is illegal there``)."""

    game: GameToAnalyse
    analysis: Analysis | None
    why: str | None = None
    spent: EngineTime | None = None
    detail: str = ""


class _Shared:
    """What a worker's threads share."""

    def __init__(self, store: Store, worker: str, scope: ClaimScope, lease_ms: int,
                 nodes: int, path: str) -> None:
        self.store, self.worker, self.scope = store, worker, scope
        self.lease_ms, self.nodes, self.path = lease_ms, nodes, path
        self.results: queue.SimpleQueue[_Done | str | EngineTime] = queue.SimpleQueue()
        self.quit = threading.Event()
        self.engines: list[LocalEngine] = []
        self.held: set[int] = set()
        self.lock = threading.Lock()

    def hold(self, pk: int, held: bool = True) -> None:
        with self.lock:
            (self.held.add if held else self.held.discard)(pk)

    def holding(self) -> list[int]:
        with self.lock:
            return sorted(self.held)


def run_worker(store: Store, label: str, members: Sequence[str], *, perf: str | None = None,
               since_ms: int | None = None, nodes: int = DEFAULT_NODES, jobs: int = 1,
               engine_path: str | None = None, lease: float = DEFAULT_LEASE,
               progress: AnalyseProgress | None = None, stop: threading.Event | None = None,
               on_game: OnGame | None = None) -> AnalyseSummary:
    """Work on the games of ``members`` (lowercase ids; ``label`` names them: a group, a
    player) without evals, of ``perf``, started at or after ``since_ms``, beside any other
    workers on the same PostgreSQL database, until none is left (see the module's
    docstring). ``lease``: seconds a claim lasts unrenewed. ``progress(done, total)`` counts
    every worker's games: ``total`` those left at the start. Raises SharedDatabaseError on
    SQLite, ArgumentError for a bad budget, job count or lease, EngineMissingError."""
    check_nodes_jobs(nodes, jobs)
    check_lease(lease)
    require_shared(store)
    started = time.perf_counter()
    summary = AnalyseSummary(label, perf, nodes, jobs)
    scope = ClaimScope(tuple(m.lower() for m in members), perf, since_ms)
    first = scope_state(store, scope)
    # Every game of the set, as a run alone counts them: those with evals already too (a
    # worker that comes when the club's work is done says so, not "0 games").
    summary.had_evals = scope_analysed(store, scope)
    summary.asked = summary.had_evals + first.to_do
    with summary_run(summary, started):
        if first.to_do:
            shared = _Shared(store, worker_id(), scope, int(lease * 1000), nodes,
                             find_engine(engine_path))
            _run(shared, summary, first.to_do, progress, on_game, stop or threading.Event())
        elif progress is not None:
            progress(0, 0)
    return summary


def _run(shared: _Shared, summary: AnalyseSummary, total: int,
         progress: AnalyseProgress | None, on_game: OnGame | None,
         stop: threading.Event) -> None:
    """The engine threads, and in this thread: each finished game stored, leases renewed,
    progress counted."""
    if progress is not None:
        progress(0, total)
    threads = [threading.Thread(target=_work, args=(shared,), name=f"tracker-worker-{i}",
                                daemon=True) for i in range(summary.jobs)]
    for t in threads:
        t.start()
    loop = _Loop(shared, summary, total, progress, on_game, len(threads))
    try:
        while loop.alive and not stop.is_set():
            try:
                got = shared.results.get(timeout=_POLL)
            except queue.Empty:
                got = None
            loop.take(got)
            loop.tick(isinstance(got, _Done))
    finally:
        shared.quit.set()
        for engine in list(shared.engines):
            engine.close()  # a search in flight ends at once
        for t in threads:
            t.join(timeout=5)
        while True:  # games finished as the run stopped are kept
            try:
                loop.take(shared.results.get_nowait())
            except queue.Empty:
                break
        release_claims(shared.store, shared.worker, shared.holding())
    if stop.is_set() or loop.failure is not None:
        summary.status = "partial"
        summary.message = ("stopped; run the same command again to go on" if stop.is_set()
                           else failure_message(str(loop.failure)))


class _Loop:
    """The calling thread's side of a worker: the threads' answers taken, the leases of the
    games in flight renewed every third of a lease, the progress counted."""

    def __init__(self, shared: _Shared, summary: AnalyseSummary, total: int,
                 progress: AnalyseProgress | None, on_game: OnGame | None, alive: int) -> None:
        self.shared, self.summary, self.total = shared, summary, total
        self.progress, self.on_game, self.alive = progress, on_game, alive
        self.skipped: Counter[str] = Counter()
        self.failure: str | None = None
        self.renewed = self.counted = time.monotonic()

    def take(self, got: _Done | str | EngineTime | None) -> None:
        if isinstance(got, _Done):
            _store(self.shared, got, self.summary, self.skipped, self.on_game)
        elif isinstance(got, EngineTime):  # a thread ended
            self.summary.spent.add(got)
            self.alive -= 1
        elif isinstance(got, str):  # a thread failed
            self.failure = got
            self.alive -= 1

    def tick(self, finished: bool) -> None:
        shared, now = self.shared, time.monotonic()
        if now - self.renewed >= shared.lease_ms / 3000:
            renew_claims(shared.store, shared.worker, shared.holding(), shared.lease_ms)
            self.renewed = now
        if self.progress is None:
            return
        if (finished and now - self.counted >= _COUNT_EVERY) or not self.alive:
            left = scope_state(shared.store, shared.scope).to_do
            self.progress(max(0, min(self.total, self.total - left)), self.total)
            self.counted = now


def _store(shared: _Shared, done: _Done, summary: AnalyseSummary, skipped: Counter[str],
           on_game: OnGame | None) -> None:
    """Store one game a thread finished (evals and the claim's end in one transaction)."""
    game = done.game
    if done.analysis is None:
        skip_game(shared.store, shared.worker, game.pk, done.why or SKIP_MOVES)
        skipped[done.why or SKIP_MOVES] += 1
        summary.skipped = dict(skipped)
        what = f"skipped: {done.why}" + (f" ({done.detail})" if done.detail else "")
    else:
        with interrupts_deferred():  # Ctrl+C lands after the game's transaction
            written = finish_game(shared.store, game.pk, done.analysis)
        if not written:
            what = "already analysed"
        elif done.analysis.source == "lichess":
            summary.found += 1
            what = "found"
        else:
            summary.count_analysed(done.analysis)
            what = "analysed"
    shared.hold(game.pk, False)
    if on_game is not None:
        on_game(game.id, what)


def _work(shared: _Shared) -> None:
    """One engine thread: claim a game, analyse it, hand it over; until none is left."""
    spent = EngineTime()
    try:
        engine = LocalEngine(shared.nodes, shared.path)
    except EngineFailedError as exc:
        shared.results.put(str(exc))
        return
    shared.engines.append(engine)
    wait = min(1.0, shared.lease_ms / 3000)
    try:
        while not shared.quit.is_set():
            games = claim_games(shared.store, shared.worker, shared.scope, shared.lease_ms)
            if not games:
                if scope_state(shared.store, shared.scope).to_do == 0:
                    break
                shared.quit.wait(wait)  # games held by others: theirs, or free at lease end
                continue
            game = games[0]
            shared.hold(game.pk)
            text = read_game_text(game.raw, game.source)
            if text.analysis is not None:
                shared.results.put(_Done(game, text.analysis))
                continue
            if not text.sans or text.problem:
                shared.results.put(_Done(game, None, SKIP_MOVES, detail=text.problem))
                continue
            try:
                result = engine.analyse_game(game.id, text.sans, game.initial_fen)
            except ValueError as exc:  # an illegal move in the stored moves: skipped, counted
                shared.results.put(_Done(game, None, SKIP_MOVES, detail=str(exc)))
                continue
            spent.add(result.spent)
            shared.results.put(_Done(game, result.analysis))
    except Exception as exc:  # closed by the runner, or the engine or database failed
        if not shared.quit.is_set():
            shared.results.put(str(exc) if isinstance(exc, EngineFailedError)
                               else f"the worker failed: {type(exc).__name__}: {exc}")
            spent = EngineTime()  # one answer per thread: the failure
            return
    finally:
        engine.close()
    shared.results.put(spent)
