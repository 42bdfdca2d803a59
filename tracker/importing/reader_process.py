"""A file import's reader in a process of its own, beside the writer.

An import does two kinds of work per game: reading it (decompressing, decoding the JSON or
PGN, building and checking the record, digesting and compressing its raw text into the rows
to store: :func:`~tracker.store.games.prepare`) and writing it (the dedupe against the
stored copies and SQLite's or PostgreSQL's insert). On a machine with two cores the two can
run at once: :func:`read_in_child` forks a reader process that does the reading, exactly as
the import does it in one process (the same function, over the same opened file), and sends
the prepared games to this process, which writes them through the
:class:`~tracker.importing.runner.ImportRecorder` as usual: batches, run counts, the write
lock, the "never poorer" rule and resumability are the writer's, unchanged.

What the reader sends is small and plain (tuples of row values, the stored games a re-import
found unchanged, progress, then what it skipped or repaired), in messages of
:data:`SEND_EVERY` games; a message waits in the pipe while the writer is busy, so the reader
never runs more than a pipe's worth ahead and memory stays flat. Ctrl+C and SIGTERM are the
writer's: the reader ignores them, and the writer ends it (SIGKILL) however the import ends;
a writer killed outright ends it too (its next message fails on the closed pipe).

Used only where it can be: a ``fork`` start method (Linux; not macOS), the main thread (a fork
from a thread of a busy server such as the dashboard's is not safe), a database the child can
open (not an in-memory SQLite), and a file of at least :data:`MIN_BYTES` (below it the fork
costs more than it saves). ``TRACKER_READER_PROCESS=0`` turns it off.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import threading
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol

from tracker.errors import TrackerError
from tracker.store.games import PreparedGame, StoredGame, prepare

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from tracker.importing.runner import ImportRecorder, Progress
    from tracker.records import GameRecord
    from tracker.sources.files import InputFile, ReadLog
    from tracker.store.db import Store

#: Files smaller than this (bytes on disk) are read in the writer's process: ~1,400 games of
#: NDJSON, where the fork (~10 ms) and the messages cost as much as the reading they share.
MIN_BYTES: Final = 1 << 20
#: Games per message from the reader: ~340 KB pickled, a few ms of the writer's time to read.
SEND_EVERY: Final = 1000
#: Messages the reader may have queued for the pipe while the writer is busy: ~1.8 MB of
#: NDJSON games each (:data:`SEND_EVERY`), a batch of the writer's and more.
QUEUED: Final = 8
#: Set to ``0`` to read every file in the writer's process.
ENV_SWITCH: Final = "TRACKER_READER_PROCESS"


class ReaderProcessError(TrackerError):
    """The reader process stopped without finishing (killed, out of memory)."""


class Sink(Protocol):
    """What a reader hands its games to: the :class:`~tracker.importing.runner.ImportRecorder`
    itself, or in a reader process the :class:`_Sender` that forwards to it."""

    read: int

    @property
    def store(self) -> Store: ...

    def add(self, record: GameRecord) -> None: ...

    def add_unchanged(self, game: StoredGame) -> None: ...

    def skip(self, reason: str, n: int = 1) -> None: ...

    def repair(self, reason: str, n: int = 1) -> None: ...


#: ``read(file, sink, progress, bytes done before this file, total bytes)``: reads one opened
#: file into ``sink`` and returns what its reader skipped or repaired.
ReadFile = Callable[["InputFile", Sink, "Progress | None", int, int], "ReadLog"]


def usable(f: InputFile, store: Store) -> bool:
    """Whether ``f`` is read in a reader process (see the module's docstring)."""
    if os.environ.get(ENV_SWITCH, "1") == "0" or f.size < MIN_BYTES:
        return False
    if sys.platform == "darwin" or "fork" not in multiprocessing.get_all_start_methods():
        return False  # macOS: a fork is not safe once system libraries run threads
    if threading.current_thread() is not threading.main_thread():
        return False
    database = store.engine.url.database
    return not (store.is_sqlite and (not database or database == ":memory:"
                                     or "mode=memory" in store.url))


class _Feeder(threading.Thread):
    """Writes the reader's messages to the pipe from a queue of :data:`QUEUED` at most, so
    the reader keeps reading while the writer is busy with a batch (a pipe holds ~64 KB:
    without the queue the reader would wait for every batch to be written). The write is one
    blocking call a message, outside the GIL. A closed pipe (the writer gone) is kept as
    :attr:`error`; the queue is then drained, so the reader never waits on it."""

    def __init__(self, conn: Connection) -> None:
        super().__init__(name="tracker import reader feeder", daemon=True)
        self.conn = conn
        self.queue: queue.Queue[bytes | None] = queue.Queue(QUEUED)
        self.error: OSError | None = None

    def run(self) -> None:
        while (payload := self.queue.get()) is not None:
            if self.error is None:
                try:
                    self.conn.send_bytes(payload)
                except OSError as exc:
                    self.error = exc

    def send(self, message: tuple[Any, ...]) -> None:
        """Queue ``message`` (pickled here); raises the pipe's error once it is closed."""
        if self.error is not None:
            raise self.error
        self.queue.put(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))

    def close(self) -> None:
        """Send what is queued, then stop."""
        self.queue.put(None)
        self.join()


class _Sender:
    """The reader process's sink: prepares each record and sends games in messages."""

    def __init__(self, conn: _Feeder, store: Store) -> None:
        self._conn = conn
        self._store = store
        self.read = 0
        self.games: list[PreparedGame] = []
        self.unchanged: list[StoredGame] = []
        #: The players of :attr:`games` (user id → games) and their names as first spelt.
        self.players: Counter[str] = Counter()
        self.names: dict[str, str] = {}
        self.skipped: Counter[str] = Counter()
        self.repaired: Counter[str] = Counter()
        self.bytes_done = 0

    @property
    def store(self) -> Store:
        return self._store

    def add(self, record: GameRecord) -> None:
        self.read += 1
        self.games.append(prepare(record))
        for side in (record.white, record.black):
            if side.user_id:
                self.players[side.user_id] += 1
                if side.name and side.user_id not in self.names:
                    self.names[side.user_id] = side.name
        if len(self.games) >= SEND_EVERY:
            self.send()

    def add_unchanged(self, game: StoredGame) -> None:
        self.read += 1
        self.unchanged.append(game)
        if len(self.unchanged) >= SEND_EVERY:
            self.send()

    def skip(self, reason: str, n: int = 1) -> None:
        self.read += n
        self.skipped[reason] += n

    def repair(self, reason: str, n: int = 1) -> None:
        self.repaired[reason] += n

    def progress(self, _games: int, bytes_done: int, _total: int | None) -> None:
        self.bytes_done = bytes_done

    def send(self) -> None:
        if self.games or self.unchanged:
            self._conn.send(("games", self.games, self.players, self.names, self.unchanged,
                             self.bytes_done))
            self.games, self.unchanged, self.players, self.names = [], [], Counter(), {}
            gc.collect(1)  # the collector is off, as in the writer (see ImportRecorder)


def _child(conn: Connection, read: ReadFile, f: InputFile, store: Store, done: int,
           total: int) -> None:
    """The reader process: ``read`` the file into a :class:`_Sender`, then say how it ended."""
    for sig in (signal.SIGINT, signal.SIGTERM):  # the writer's to act on (see the docstring)
        signal.signal(sig, signal.SIG_IGN)
    # The writer's pooled connections are its own: new ones here (SQLAlchemy's fork recipe).
    store.engine.dispose(close=False)
    feeder = _Feeder(conn)
    feeder.start()
    sender = _Sender(feeder, store)
    try:
        log = read(f, sender, sender.progress, done, total)
        sender.send()
        feeder.send(("end", log, f.truncated, f.warnings, sender.skipped, sender.repaired))
    except BaseException as exc:  # every error goes to the writer, which raises it
        try:
            pickle.dumps(exc)
        except Exception:  # an error that does not pickle: its one line
            exc = TrackerError(f"{type(exc).__name__}: {exc}")
        try:
            sender.send()  # the games read before the error are the writer's to store
            feeder.send(("error", exc, sender.skipped, sender.repaired))
        except OSError:
            pass  # the writer is gone: nobody to tell
    finally:
        feeder.close()
        conn.close()


def read_in_child(read: ReadFile, f: InputFile, recorder: ImportRecorder,
                  progress: Progress | None, done: int, total: int) -> ReadLog:
    """``read(f, …)`` in a reader process, its games written here through ``recorder``;
    returns the reader's log, with ``f``'s ``truncated`` and ``warnings`` as the reader set
    them. Raises what the reader raised, or ReaderProcessError when it died."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, read, f, recorder.store, done, total),
                              name="tracker import reader", daemon=True)
    process.start()
    send.close()  # the reader's end: closed here, so its end of the pipe is the only one
    try:
        while True:
            try:
                message: tuple[Any, ...] = receive.recv()
            except EOFError:
                process.join()
                raise ReaderProcessError(
                    f"the import's reader process stopped (exit code {process.exitcode}) "
                    "before the end of the file; run the import again to resume") from None
            kind = message[0]
            if kind == "games":
                _, games, players, names, unchanged, bytes_done = message
                for game in unchanged:
                    recorder.add_unchanged(game)
                recorder.add_read(games, players, names)
                if progress is not None:
                    progress(recorder.read, bytes_done, total)
            else:  # "end" or "error": what was skipped or repaired is counted either way
                skipped, repaired = message[-2:]
                for reason, n in skipped.items():
                    recorder.skip(reason, n)
                for reason, n in repaired.items():
                    recorder.repair(reason, n)
                if kind == "error":
                    raise message[1]
                _, log, f.truncated, warnings, *_ = message
                f.warnings[:] = warnings
                return log  # type: ignore[no-any-return]  # a ReadLog, as the reader sent it
    finally:
        receive.close()
        if process.is_alive():
            process.kill()
        process.join()
