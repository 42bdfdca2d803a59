"""A file import's reader in a process of its own, beside the writer.

An import does two kinds of work per game: reading it (decompressing the file, decoding the
JSON or PGN, building and checking the record, turning it into the rows to store with its raw
text digested and compressed: :func:`~tracker.store.games.prepare`) and writing it (the
dedupe against the stored copies, SQLite's or PostgreSQL's insert). On a machine with two cores the
two run at once: :func:`read_in_child` reads the file in a child process
(:func:`tracker.core.forked.beside`), exactly as the import reads it in one process (the same
function, over the same opened file), and this process writes what it sends through the
:class:`~tracker.importing.runner.ImportRecorder` as usual: batches, run counts, the write
lock, the "never poorer" rule and resumability are the writer's, unchanged.

The reader sends messages of :data:`SEND_EVERY` games (tuples of row values, with the players
counted), the stored games a re-import found unchanged and the progress, then what it skipped
or repaired and how the file ended; it runs at most a few messages ahead of the writer, so
memory stays flat. Ctrl+C and SIGTERM are the writer's: it stores what it received, and the
reader is ended with the import.

Used where a fork is (:func:`tracker.core.forked.available`: Linux, the main thread, not
``TRACKER_PROCESSES=1``), for a database the child can open (not an in-memory SQLite) and a
file of at least :data:`MIN_BYTES` (below it the fork costs more than it saves).
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Protocol

from tracker.core import forked
from tracker.importing.runner import count_players
from tracker.store.games import PreparedGame, StoredGame, prepare

if TYPE_CHECKING:
    from tracker.core.records import GameRecord
    from tracker.importing.runner import ImportRecorder, Progress
    from tracker.sources.files import InputFile, ReadLog
    from tracker.store.db import Store

#: Files smaller than this (bytes on disk) are read in the writer's process: ~1,400 games of
#: NDJSON, where the fork (~10 ms) and the messages cost as much as the reading they share.
MIN_BYTES: Final = 1 << 20
#: Games per message from the reader: ~400 KB pickled, a few ms of the writer's time to read.
SEND_EVERY: Final = 1000
#: Messages the reader may have queued while the writer is busy: 8,000 games, more than a
#: batch of the writer's (:data:`~tracker.store.games.FILE_BATCH_SIZE`), ~3 MB.
QUEUED: Final = 8


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
    return f.size >= MIN_BYTES and not store.in_memory and forked.available()


class _Sender:
    """The reader process's sink: prepares each record and sends games in messages."""

    def __init__(self, send: forked.Send, store: Store) -> None:
        self._send = send
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
        game = prepare(record)
        self.games.append(game)
        count_players(self.players, self.names, game)
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
            self._send(("games", self.games, self.players, self.names, self.unchanged,
                        self.bytes_done))
            self.games, self.unchanged, self.players, self.names = [], [], Counter(), {}
            if not gc.isenabled():  # paused by the writer's run, and so in this fork of it
                gc.collect(1)  # (see ImportRecorder)


def _reader(read: ReadFile, f: InputFile, store: Store, done: int, total: int
            ) -> Callable[[forked.Send], None]:
    """The reader process's work: ``read`` the file into a :class:`_Sender`, then say how the
    file ended and what was skipped or repaired (also when the read fails: the games read
    before the error are sent, and counted, before it is raised)."""

    def work(send: forked.Send) -> None:
        # The writer's pooled connections are its own: new ones here (SQLAlchemy's fork recipe).
        store.engine.dispose(close=False)
        sender = _Sender(send, store)
        try:
            log = read(f, sender, sender.progress, done, total)
        finally:
            sender.send()
            send(("counts", sender.skipped, sender.repaired))
        send(("end", log, f.truncated, f.warnings))

    return work


def read_in_child(read: ReadFile, f: InputFile, recorder: ImportRecorder,
                  progress: Progress | None, done: int, total: int) -> ReadLog:
    """``read(f, …)`` in a reader process, its games written here through ``recorder``;
    returns the reader's log, with ``f``'s ``truncated`` and ``warnings`` as the reader set
    them. Raises what the reader raised, or ForkedProcessError when it died."""
    with forked.beside(_reader(read, f, recorder.store, done, total), name="reader",
                       then="run the import again to resume", queued=QUEUED) as messages:
        log: ReadLog | None = None
        for message in messages:
            kind = message[0]
            if kind == "games":
                _, games, players, names, unchanged, bytes_done = message
                for game in unchanged:
                    recorder.add_unchanged(game)
                recorder.add_read(games, players, names)
                if progress is not None:
                    progress(recorder.read, bytes_done, total)
            elif kind == "counts":
                for reason, n in message[1].items():
                    recorder.skip(reason, n)
                for reason, n in message[2].items():
                    recorder.repair(reason, n)
            else:
                _, log, f.truncated, warnings = message
                f.warnings[:] = warnings
        assert log is not None  # the reader's last message, unless it raised
        return log
