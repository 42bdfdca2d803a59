"""The import runner's core: records from any source → the store, in batches, as one import run.

:class:`ImportRecorder` is the one write path every importer uses (files in
:mod:`tracker.importing.files`, the Lichess API in :mod:`tracker.importing.lichess`): it
buffers records, writes a batch per transaction, counts what was new, updated, unchanged or
skipped (by reason), tracks the players the import is for, and records the run as
``complete``, ``partial`` or ``failed`` in an :class:`ImportSummary`. An import that dies keeps
every finished batch.
"""

from __future__ import annotations

import errno
import gc
import logging
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Final

from sqlalchemy.exc import SQLAlchemyError

from tracker.core import collector
from tracker.core.errors import DiskFullError, InterruptedRun, Terminated, TrackerError
from tracker.core.exact import plural
from tracker.core.records import GameRecord
from tracker.core.utc import now_ms
from tracker.importing.run_liveness import mark_interrupted, running_message
from tracker.store.db import Store
from tracker.store.engine import DatabaseError
from tracker.store.games import (
    BATCH_SIZE,
    P_BLACK,
    P_WHITE,
    PreparedGame,
    StoredGame,
    WriteCounts,
    WrittenGames,
    prepare,
)
from tracker.store.runs import RunStatus

LOG = logging.getLogger(__name__)

#: ``progress(games_read, units_done, units_total)``; units are bytes for files, games for the
#: API (``units_total`` may be ``None`` when unknown).
Progress = Callable[[int, int, int | None], None]

#: Games read but refused by the store when a stopped run wrote its last batch (a full disk,
#: a lost server): counted as skipped, so that read = new + updated + unchanged + skipped.
SKIP_NOT_STORED: Final = "not stored (the database refused the last batch)"

def interrupted_message(exc: KeyboardInterrupt) -> str:
    """The message of a run stopped by Ctrl+C (SIGINT) or SIGTERM (:class:`Terminated`)."""
    why = "stopped (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
    return f"{why}; run the import again to resume"


def failure_message(exc: BaseException) -> str:
    """One line on why a run failed: a TrackerError's own message, else the error's type too."""
    return str(exc) if isinstance(exc, TrackerError) else f"{type(exc).__name__}: {exc}"


@dataclass
class ImportSummary:
    """The outcome of one import run (also stored as an ``import_runs`` row).

    ``status`` is ``complete``, ``partial`` (stopped early; what was read is kept) or
    ``failed``; ``skipped`` maps a reason to a count of games not imported, ``repaired`` a
    reason to a count of games imported after a repair; ``seconds`` is wall-clock time.
    ``player`` is the tracked player's user id and ``player_name`` their name as Lichess writes
    it; ``players``: the players met in the games, counted when no player was named and none
    is in most of them (a dump of many players' games, not one player's history): then
    ``player`` is the one in most games, and nobody is tracked.
    """

    run_id: int
    source: str
    target: str
    player: str | None
    status: str
    read: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    message: str | None = None
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    repaired: dict[str, int] = field(default_factory=dict)
    player_name: str | None = None
    players: int = 0
    #: Games whose Lichess evals were stored (see :attr:`WriteCounts.evals_added`).
    evals: int = 0

    @property
    def stored(self) -> int:
        return self.new + self.updated + self.unchanged

    def line(self) -> str:
        """One line for people: ``player: read 2907, new 2907, updated 0, … (complete)``."""
        skipped = sum(self.skipped.values())
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(self.skipped.items()))
        text = (
            f"{'games' if self.players else self.player_name or self.player or 'games'}: "
            f"read {self.read}, new {self.new}, "
            f"updated {self.updated}, unchanged {self.unchanged}, skipped {skipped}"
        )
        if reasons:
            text += f" ({reasons})"
        if self.evals:
            text += f", Lichess evals stored for {self.evals}"
        if self.repaired:
            fixes = ", ".join(f"{n} {r}" for r, n in sorted(self.repaired.items()))
            text += f", repaired {sum(self.repaired.values())} ({fixes})"
        text += f" in {self.seconds:.1f}s — {self.status}"
        if self.message:
            text += f": {self.message}"
        return text


def _count_sides(players: Counter[str], names: dict[str, str],
                 sides: Iterable[tuple[str | None, str | None]]) -> None:
    for user_id, name in sides:
        if user_id:
            players[user_id] += 1
            if name and user_id not in names:
                names[user_id] = name


def count_players(players: Counter[str], names: dict[str, str], game: PreparedGame) -> None:
    """Count the players of ``game`` in ``players`` (user id → games) and keep each one's
    name as first spelt in ``names``: what names the player of an import."""
    white, black = game[P_WHITE], game[P_BLACK]  # side rows: colour, user id, name, …
    _count_sides(players, names, ((white[1], white[2]), (black[1], black[2])))


#: The signals held back while a batch is written: Ctrl+C and a polite kill.
DEFERRED_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl+C (SIGINT) and SIGTERM until the block ends, then act on the first one as
    its handler outside the block would (KeyboardInterrupt; ``tracker``'s SIGTERM handler
    raises :class:`~tracker.core.errors.Terminated`; the default SIGTERM action ends the process).

    A batch is written in one transaction; an interrupt in the middle of the driver's work can
    leave the connection holding SQLite's write lock, so the run could not be recorded. Held
    back, the interrupt lands between batches. Only in the main thread (where signal handlers
    live); elsewhere (the dashboard's import) the block runs as is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, _frame: caught.append(signum))
                for sig in DEFERRED_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
    if caught:
        sig = signal.Signals(caught[0])
        handler = previous[sig]
        if callable(handler):
            handler(sig, None)  # raises, as it would have in the block
        elif handler == signal.SIG_DFL:
            if sig == signal.SIGINT:
                raise KeyboardInterrupt
            os.kill(os.getpid(), sig)  # the default action, now that the batch is written


def is_disk_full(exc: BaseException) -> bool:
    """True for the database's "disk full" errors: SQLite's SQLITE_FULL ("database or disk is
    full"), PostgreSQL's disk_full (SQLSTATE 53100), and an OS ENOSPC or EDQUOT."""
    inner = getattr(exc, "orig", None) or exc
    if isinstance(inner, OSError) and inner.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if getattr(inner, "sqlstate", None) == "53100":
        return True
    text = str(inner).lower()
    return "database or disk is full" in text or "no space left on device" in text


class ImportRecorder:
    """Buffers records and writes them in batches as one import run.

    >>> store = Store("sqlite://")
    >>> with ImportRecorder(store, "file", "x.ndjson") as rec:
    ...     pass
    >>> rec.summary.status
    'complete'

    Leaving the ``with`` block through an exception writes the buffered (complete) games, marks
    the run ``partial`` (interrupt) or ``failed`` (error), and re-raises; a KeyboardInterrupt
    carries the run's :class:`ImportSummary` as its ``summary`` attribute.
    """

    def __init__(
        self,
        store: Store,
        source: str,
        target: str,
        *,
        player: str | None = None,
        also: Sequence[str] = (),
        batch_size: int = BATCH_SIZE,
        written: WrittenGames | None = None,
    ) -> None:
        self.store = store
        #: Where the games written are kept for the passes after the import (see
        #: :class:`~tracker.store.games.WrittenGames`), when given.
        self.written = written
        if written is not None:
            written.begin(store)
        self.batch_size = batch_size
        self.player = player.lower() if player else None
        #: Further players the import is for (``--user`` given more than once): tracked too.
        self.also = [u.lower() for u in also]
        mark_interrupted(store)  # earlier runs whose process was killed
        # the run and the process running it: one transaction (one commit), not two
        self.run_id = store.start_run(source, target, self.player, running_message())
        #: Called with the summary once the run's end is recorded (see :meth:`on_finish`).
        self._on_finish: list[Callable[[ImportSummary], None]] = []
        self.summary = ImportSummary(self.run_id, source, target, self.player, "running")
        self.counts = WriteCounts()
        self.skipped: Counter[str] = Counter()
        self.repaired: Counter[str] = Counter()  # reason -> games stored after a repair
        self.read = 0
        self._buffer: list[PreparedGame] = []
        self._started = time.perf_counter()
        self._gc_paused = False  # set by __enter__
        self._gc_pause = ExitStack()
        self.players: Counter[str] = Counter()  # user id → games, to name the player
        self.names: dict[str, str] = {}  # user id → display name as spelt in the games

    def add(self, record: GameRecord) -> None:
        """Count a game read and buffer its rows (:func:`~tracker.store.games.prepare`) for the
        next batch."""
        self.add_prepared(prepare(record))

    def add_prepared(self, game: PreparedGame) -> None:
        """:meth:`add` of a record already prepared."""
        self.read += 1
        count_players(self.players, self.names, game)
        self._buffer.append(game)
        if len(self._buffer) >= self.batch_size:
            self.flush()

    def add_read(self, games: Sequence[PreparedGame], players: Mapping[str, int],
                 names: Mapping[str, str]) -> None:
        """:meth:`add_prepared` of games an import's reader process prepared and counted:
        ``players`` the games of each user id among them, ``names`` their names as first
        spelt. Batches are cut where :meth:`add_prepared` one by one would cut them."""
        self.players.update(players)
        for user_id, name in names.items():
            self.names.setdefault(user_id, name)
        start = 0
        while start < len(games):
            part = games[start:start + self.batch_size - len(self._buffer)]
            start += len(part)
            self.read += len(part)
            self._buffer.extend(part)
            if len(self._buffer) >= self.batch_size:
                self.flush()

    def add_unchanged(self, game: StoredGame) -> None:
        """Count a game read again exactly as stored (same raw text): ``unchanged``, not
        written; its players count towards naming the player as if it had been added."""
        self.read += 1
        self.counts.unchanged += 1
        _count_sides(self.players, self.names, (game.white, game.black))

    def skip(self, reason: str, n: int = 1) -> None:
        self.read += n
        self.skipped[reason] += n

    def repair(self, reason: str, n: int = 1) -> None:
        """Count ``n`` games already added as repaired (they are stored; ``read`` is unchanged)."""
        self.repaired[reason] += n

    def _run_fields(self, batch: WriteCounts) -> dict[str, object]:
        """The run's counts once ``batch`` is written (stored in the batch's transaction)."""
        return {
            "read": self.read,
            "new": self.counts.new + batch.new,
            "updated": self.counts.updated + batch.updated,
            "unchanged": self.counts.unchanged + batch.unchanged,
            "skipped": dict(self.skipped),
            "repaired": dict(self.repaired),
        }

    def flush(self) -> None:
        if self._buffer:
            with interrupts_deferred(), self.store.counting_run((self.run_id, self._run_fields)):
                try:  # a batch and its run counts: one transaction
                    self.counts.add(self.store.write_prepared(self._buffer, self.written))
                except Exception as exc:
                    if is_disk_full(exc):
                        kept = self.counts.new + self.counts.updated + self.counts.unchanged
                        raise DiskFullError(f"the disk is full at {self.store_location()}: "
                                            f"{plural(kept, 'game')} kept") from None
                    raise
                self._buffer = []
        if self._gc_paused:
            gc.collect(1)  # the batch's young objects (see __enter__)

    def store_location(self) -> str:
        """Where the database lives: its file, or its URL (password hidden)."""
        url = self.store.url
        if url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
            return url.removeprefix("sqlite:///").split("?", 1)[0]
        return self.store.display_url

    def on_finish(self, hook: Callable[[ImportSummary], None]) -> None:
        """Call ``hook(summary)`` after the run's end is recorded, however it ends (an API
        import moves its sync cursor there, over the games that were stored)."""
        self._on_finish.append(hook)

    def finish(self, status: RunStatus = "complete", message: str | None = None
               ) -> ImportSummary:
        """Write what is buffered, name the player, record the run's end, run the
        :meth:`on_finish` hooks; returns the summary."""
        if self._buffer:
            try:
                self.flush()
            except Exception as exc:
                if status == "complete":
                    raise
                lost = len(self._buffer)
                self._buffer = []  # the store refuses them: the run ends without them
                self.skipped[SKIP_NOT_STORED] += lost  # read, so counted: the sums add up
                last = "the last game was" if lost == 1 else f"the last {lost} games were"
                message = f"{message}; {last} not stored ({exc})"
        games = self.counts.new + self.counts.updated + self.counts.unchanged
        many = 0
        most: str | None = None  # the player in most games of a many-player file: not tracked
        if self.player is None and self.players:
            top, in_games = self.players.most_common(1)[0]
            if 2 * in_games >= games:  # one player's history: they are in most of its games
                self.player = top
            else:  # a dump of many players' games: nobody is tracked unless named
                many = len(self.players)
                most = top
                tracked = (f"{plural(games, 'game')} of {many} players; tracked: none — use "
                           f"--user NAME (e.g. --user {self.names.get(top, top)})")
                message = f"{message}; {tracked}" if message else tracked
        # Track the named players who have games here (a misspelt name creates nobody).
        for uid in dict.fromkeys([self.player, *self.also]):
            if uid is not None and self.players.get(uid):
                self.store.ensure_player(uid, self.names.get(uid))
        s = self.summary
        s.player = self.player or most
        s.player_name = self.names.get(s.player) if s.player else None
        s.players = many
        s.status = status
        s.message = message
        s.read = self.read
        s.new, s.updated, s.unchanged = self.counts.new, self.counts.updated, self.counts.unchanged
        s.evals = self.counts.evals_added
        s.skipped = dict(self.skipped)
        s.repaired = dict(self.repaired)
        s.seconds = time.perf_counter() - self._started
        self.store.update_run(
            self.run_id,
            player_id=self.player,
            status=status,
            message=message,
            read=s.read,
            new=s.new,
            updated=s.updated,
            unchanged=s.unchanged,
            skipped=s.skipped,
            repaired=s.repaired,
            finished_at_ms=now_ms(),
        )
        for hook in self._on_finish:
            hook(s)
        return s

    def __enter__(self) -> ImportRecorder:
        # Python's cyclic collector paused for the run where the process allows it (the
        # ``tracker`` command; see :mod:`tracker.core.collector`): an import builds millions
        # of objects (records, rows) and none of them is in a cycle, yet the collector walks
        # every live object again and again as they pile up (8 % of a 100k-game import). The
        # young generations are then collected after each batch (:meth:`flush`), so what
        # cycles a batch leaves are freed as before.
        self._gc_paused = self._gc_pause.enter_context(collector.paused())
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 _tb: object) -> None:
        try:
            self._exit(exc_type, exc)
        finally:
            self._gc_pause.close()
        if isinstance(exc, KeyboardInterrupt) and not isinstance(exc, InterruptedRun):
            raise InterruptedRun.of(exc, self.summary) from exc  # for the caller's last line

    def _exit(self, exc_type: type[BaseException] | None, exc: BaseException | None) -> None:
        if exc_type is None:
            if self.summary.status == "running":
                self.finish("complete")
            return
        try:
            if isinstance(exc, KeyboardInterrupt):
                self.finish("partial", interrupted_message(exc))
            elif isinstance(exc, DiskFullError):
                self.finish("partial", f"{exc}; free some space and run the import again")
            else:
                assert exc is not None  # exc_type is not None
                self.finish("failed", failure_message(exc))
        except (DatabaseError, SQLAlchemyError, OSError):
            # The store itself failed: the error leaving the block is the one to report.
            LOG.exception("could not record the end of import run %s", self.run_id)
