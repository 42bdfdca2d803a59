"""Import runs: records from any source → the store, in batches, with counts and a run record.

:class:`ImportRecorder` is the one write path every importer uses (files here, the Lichess API in
:mod:`tracker.sources.lichess`): it buffers records, writes a batch per transaction, counts what
was new, updated, unchanged or skipped (by reason), and records the run as ``complete``,
``partial`` or ``failed``. An import that dies keeps every finished batch.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from sqlalchemy.exc import SQLAlchemyError

from tracker.codec import raw_digest
from tracker.errors import Terminated
from tracker.records import GameRecord
from tracker.sources.files import (  # the skip reasons are re-exported from here
    SKIP_NOT_PLAYER,  # noqa: F401
    SKIP_TRUNCATED,  # noqa: F401
    SKIP_UNREADABLE,  # noqa: F401
    InputError,
    InputFile,
    ReadLog,
    open_input,
)
from tracker.sources.ndjson import read_ndjson
from tracker.sources.pgn import filter_chunks, read_pgn
from tracker.store.db import Store
from tracker.store.engine import DatabaseError
from tracker.store.games import BATCH_SIZE, StoredGame, WriteCounts
from tracker.utc import now_ms

LOG = logging.getLogger(__name__)

#: ``progress(games_read, units_done, units_total)``; units are bytes for files, games for the
#: API (``units_total`` may be ``None`` when unknown).
Progress = Callable[[int, int, int | None], None]

# Skip and repair reasons are defined with the readers (tracker.sources.files) and re-exported
# here; the replay has its own reasons (tracker.selection).


@dataclass
class ImportSummary:
    """The outcome of one import run (also stored as an ``import_runs`` row).

    ``status`` is ``complete``, ``partial`` (stopped early; what was read is kept) or
    ``failed``; ``skipped`` maps a reason to a count of games not imported, ``repaired`` a
    reason to a count of games imported after a repair; ``seconds`` is wall-clock time.
    ``player`` is the tracked player's user id and ``player_name`` their name as Lichess writes
    it; ``players``: the players met in the games (counted when no player was named and none
    is in most of them: a dump of many players' games, not one player's history).
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

    @property
    def stored(self) -> int:
        return self.new + self.updated + self.unchanged

    def line(self) -> str:
        """One line for people: ``player: read 2907, new 2907, updated 0, … (complete)``."""
        skipped = sum(self.skipped.values())
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(self.skipped.items()))
        text = (
            f"{self.player_name or self.player or 'games'}: read {self.read}, new {self.new}, "
            f"updated {self.updated}, unchanged {self.unchanged}, skipped {skipped}"
        )
        if reasons:
            text += f" ({reasons})"
        if self.repaired:
            fixes = ", ".join(f"{n} {r}" for r, n in sorted(self.repaired.items()))
            text += f", repaired {sum(self.repaired.values())} ({fixes})"
        text += f" in {self.seconds:.1f}s — {self.status}"
        if self.message:
            text += f": {self.message}"
        return text


#: The signals held back while a batch is written: Ctrl+C and a polite kill.
DEFERRED_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl+C (SIGINT) and SIGTERM until the block ends, then act on the first one as
    its handler outside the block would (KeyboardInterrupt; ``tracker``'s SIGTERM handler
    raises :class:`~tracker.errors.Terminated`; the default SIGTERM action ends the process).

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
    ) -> None:
        self.store = store
        self.batch_size = batch_size
        self.player = player.lower() if player else None
        #: Further players the import is for (``--user`` given more than once): tracked too.
        self.also = [u.lower() for u in also]
        self.run_id = store.start_run(source, target, self.player)
        self.summary = ImportSummary(self.run_id, source, target, self.player, "running")
        self.counts = WriteCounts()
        self.skipped: Counter[str] = Counter()
        self.repaired: Counter[str] = Counter()  # reason -> games stored after a repair
        self.read = 0
        self._buffer: list[GameRecord] = []
        self._started = time.perf_counter()
        self.players: Counter[str] = Counter()  # user id → games, to name the player
        self.names: dict[str, str] = {}  # user id → display name as spelt in the games

    def add(self, record: GameRecord) -> None:
        self.read += 1
        for side in (record.white, record.black):
            if side.user_id:
                self.players[side.user_id] += 1
                if side.name and side.user_id not in self.names:
                    self.names[side.user_id] = side.name
        self._buffer.append(record)
        if len(self._buffer) >= self.batch_size:
            self.flush()

    def add_unchanged(self, game: StoredGame) -> None:
        """Count a game read again exactly as stored (same raw text): ``unchanged``, not
        written; its players count towards naming the player as if it had been added."""
        self.read += 1
        self.counts.unchanged += 1
        for user_id, name in (game.white, game.black):
            if user_id:
                self.players[user_id] += 1
                if name and user_id not in self.names:
                    self.names[user_id] = name

    def skip(self, reason: str, n: int = 1) -> None:
        self.read += n
        self.skipped[reason] += n

    def repair(self, reason: str, n: int = 1) -> None:
        """Count ``n`` games already added as repaired (they are stored; ``read`` is unchanged)."""
        self.repaired[reason] += n

    def flush(self) -> None:
        if self._buffer:
            with interrupts_deferred():  # a batch and its run counts: all or nothing
                self.counts.add(self.store.write_games(self._buffer))
                self._buffer = []
                self.store.update_run(
                    self.run_id,
                    read=self.read,
                    new=self.counts.new,
                    updated=self.counts.updated,
                    unchanged=self.counts.unchanged,
                    skipped=dict(self.skipped),
                    repaired=dict(self.repaired),
                )

    def finish(self, status: str = "complete", message: str | None = None) -> ImportSummary:
        """Write what is buffered, name the player, record the run's end; returns the summary."""
        if self._buffer:
            try:
                self.flush()
            except Exception as exc:
                if status == "complete":
                    raise
                self._buffer = []  # the store refuses them: the run ends without them
                message = f"{message}; the last {self.batch_size} games were not stored ({exc})"
        games = self.counts.new + self.counts.updated + self.counts.unchanged
        many = 0
        if self.player is None and self.players:
            top, in_games = self.players.most_common(1)[0]
            if 2 * in_games >= games:  # one player's history: they are in most of its games
                self.player = top
            else:  # a dump of many players' games: nobody is tracked unless named
                many = len(self.players)
                tracked = (f"{games} games of {many} players; tracked: none — use --user NAME"
                           f" (e.g. --user {self.names.get(top, top)})")
                message = f"{message}; {tracked}" if message else tracked
        # Track the named players who have games here (a misspelt name creates nobody).
        for uid in dict.fromkeys([self.player, *self.also]):
            if uid is not None and self.players.get(uid):
                self.store.ensure_player(uid, self.names.get(uid))
        s = self.summary
        s.player = self.player
        s.player_name = self.names.get(self.player) if self.player else None
        s.players = many
        s.status = status
        s.message = message
        s.read = self.read
        s.new, s.updated, s.unchanged = self.counts.new, self.counts.updated, self.counts.unchanged
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
        return s

    def __enter__(self) -> ImportRecorder:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 _tb: object) -> None:
        if exc_type is None:
            if self.summary.status == "running":
                self.finish("complete")
            return
        try:
            if isinstance(exc, KeyboardInterrupt):
                why = "stopped (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
                self.finish("partial", f"{why}; run the import again to resume")
                exc.summary = self.summary  # type: ignore[attr-defined]  # for the CLI's last line
            else:
                self.finish("failed", f"{type(exc).__name__}: {exc}")
        except (DatabaseError, SQLAlchemyError, OSError):
            # The store itself failed: the error leaving the block is the one to report.
            LOG.exception("could not record the end of import run %s", self.run_id)


def import_file(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    store: Store | None = None,
    db: str | None = None,
    user: str | Sequence[str] | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import Lichess NDJSON or PGN files (any compression) into the database.

    ``paths``: one path or several, imported as one run. ``user``: whose history it is (one
    name or several); with it, only games of those players are kept (the rest are counted as
    skipped, and in a PGN file only their ``White``/``Black`` tags are read: this is how the
    Lichess open database is filtered), without it the player in most games is taken.
    ``progress`` is called with (games read, bytes read, total bytes). The format is
    recognised by content.

    Every game skipped or repaired is counted by reason in the summary and the run. A file
    that ends in the middle of a game (a cut download) imports what it holds and ends the run
    as ``partial``, saying so.

    Returns an :class:`ImportSummary`. Raises InputError (one line) for a missing, empty or
    unrecognised file, or a Lichess study export, *before* anything is written.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    users = [user] if isinstance(user, str) else list(user or [])
    if not paths:
        raise InputError("no file given")
    inputs = [open_input(p) for p in paths]  # every file is checked before anything is written
    store = store or Store(db)
    total = sum(f.size for f in inputs)
    target = ", ".join(str(f.path) for f in inputs)
    recorder = ImportRecorder(store, "file", target, player=users[0] if users else None,
                              also=users[1:])
    warnings: list[str] = []
    truncated: list[str] = []
    with recorder:
        done_bytes = 0
        for f in inputs:
            with f:
                log = _import_one(f, recorder, users, progress, done_bytes, total)
                warnings.extend(f"{f.path.name}: {m}" for m in log.messages)
                warnings.extend(f.warnings)
                for why in (f.truncated, log.truncated and f"{f.path.name}: {log.truncated}"):
                    if why:
                        truncated.append(why)
                done_bytes += f.size
        if progress is not None:
            progress(recorder.read, total, total)
        if recorder.read == 0:
            message = "no games found in " + ", ".join(Path(p).name for p in map(str, paths))
            summary = recorder.finish("failed", "; ".join([message, *truncated]))
        elif truncated:
            summary = recorder.finish("partial", "; ".join(truncated))
        else:
            summary = recorder.finish("complete")
    for u in users:
        if not recorder.players.get(u.lower()):
            warnings.append(f"no games of {u!r} in {target}: check the spelling of --user")
    summary.warnings = warnings
    return summary


def _import_one(f: InputFile, recorder: ImportRecorder, users: Sequence[str],
                progress: Progress | None, done_bytes: int, total: int) -> ReadLog:
    """Stream one opened file into ``recorder``; returns what its reader skipped or repaired."""
    log = ReadLog()
    base = recorder.read

    def report(seen: int) -> None:
        if progress is not None:
            progress(base + seen, done_bytes + f.bytes_read, total)

    records: Iterable[GameRecord]
    if f.format == "ndjson":
        lines = _screen_known(f.byte_lines(), recorder, {u.lower() for u in users})
        records = read_ndjson(lines, players=users or None, log=log, progress=report)
    elif users:  # a dump filtered by player: searched in big chunks, not line by line
        records = read_pgn(filter_chunks(f.byte_chunks(), users), players=users, log=log,
                           progress=report)
    else:
        records = read_pgn(f.byte_lines(), log=log, progress=report)
    try:
        for rec in records:
            recorder.add(rec)
    finally:  # counted even when the import is interrupted
        for reason, n in log.skipped.items():
            recorder.skip(reason, n)
        for reason, n in log.repaired.items():
            recorder.repair(reason, n)
    return log


#: The start of a Lichess NDJSON game line: the game id is its first key.
_NDJSON_ID = re.compile(rb'\{"id":"([A-Za-z0-9]{8})"')


def _screen_known(lines: Iterable[bytes], recorder: ImportRecorder, wanted: set[str],
                  chunk: int = BATCH_SIZE) -> Iterator[bytes]:
    """NDJSON lines with every game already stored byte for byte taken out (a re-import).

    Per chunk of lines, one query finds the games whose stored raw digest is that of the line:
    they are counted ``unchanged`` on the recorder without being parsed, and replaced by an
    empty line so the reader's line numbers stay right. Every other line (new, changed, not
    UTF-8, repeated within the chunk, of another player when ``wanted`` names players) goes to
    the reader as it is, so what is stored and counted is what a full parse would give.

    Once a chunk holds no stored game (a first import), the next chunks are probed by their
    first and last game only, until one of those is stored: each probe reads index pages the
    import's own writes have just pushed out of the cache, ~12% of a first import's time.
    """
    buf: list[bytes] = []
    state = {"probe_all": True}
    for line in lines:
        buf.append(line)
        if len(buf) >= chunk:
            yield from _screen_chunk(buf, recorder, wanted, state)
            buf = []
    if buf:
        yield from _screen_chunk(buf, recorder, wanted, state)


def _screen_chunk(buf: list[bytes], recorder: ImportRecorder, wanted: set[str],
                  state: dict[str, bool]) -> Iterator[bytes]:
    ids: dict[int, str] = {}
    seen: dict[str, int] = {}
    for i, line in enumerate(buf):
        m = _NDJSON_ID.match(line.lstrip())
        if m is not None:
            gid = m.group(1).decode("ascii")
            ids[i] = gid
            seen[gid] = seen.get(gid, 0) + 1
    if not seen:
        yield from buf
        return
    if not state["probe_all"]:
        ends = list(ids.values())
        if not recorder.store.stored_digests([ends[0], ends[-1]]):
            yield from buf
            return
    stored = recorder.store.stored_digests(list(seen))
    state["probe_all"] = bool(stored)
    same: dict[int, str] = {}  # line → id of a game stored with exactly this text
    for i, gid in ids.items():
        digest = stored.get(gid)
        if digest is None or seen[gid] > 1:  # new, or repeated here: the last copy wins
            continue
        text = buf[i].strip()
        if text.endswith(b"}") and raw_digest(text) == digest:
            same[i] = gid
    games = recorder.store.stored_games(list(same.values())) if same else {}
    for i, line in enumerate(buf):
        game = games.get(same[i]) if i in same else None
        if game is None:
            yield line
        elif wanted and game.white[0] not in wanted and game.black[0] not in wanted:
            yield line  # another player's game: the reader counts it as such
        else:
            recorder.add_unchanged(game)
            yield b"\n"
