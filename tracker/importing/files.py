"""Import files: NDJSON or PGN (any compression, any encoding) → the store, as one run.

The sources read (:func:`~tracker.sources.files.open_inputs`, :func:`read_ndjson`,
:func:`read_pgn`); the runner's :class:`~tracker.importing.runner.ImportRecorder` writes.
A re-import of an NDJSON file skips parsing every game already stored byte for byte.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

from tracker.core.codec import raw_digest
from tracker.core.errors import ArgumentError
from tracker.core.records import GameRecord, player_name_problem
from tracker.importing import reader_process
from tracker.importing.reader_process import Sink
from tracker.importing.runner import ImportRecorder, ImportSummary, Progress
from tracker.sources.files import InputFile, ReadLog, open_inputs
from tracker.sources.limits import MAX_NDJSON_GAME_BYTES, MAX_PGN_GAME_BYTES, capped_chunks
from tracker.sources.ndjson import EVALS_DROPPED, read_ndjson
from tracker.sources.pgn import filter_chunks, read_pgn
from tracker.store.db import Store
from tracker.store.games import BATCH_SIZE, FILE_BATCH_SIZE, KEPT_GAMES, WrittenGames


def import_file(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    store: Store,
    user: str | Sequence[str] | None = None,
    progress: Progress | None = None,
    max_game_bytes: int | None = None,
) -> ImportSummary:
    """Import Lichess NDJSON or PGN files (any compression) into ``store``.

    One game may be at most 1 MB of NDJSON or 4 MB of PGN (:mod:`tracker.sources.limits`;
    ``max_game_bytes`` sets another cap for both, as the tests do): a larger one streams by
    without being held and is skipped as "game too large".

    ``paths``: one path or several, imported as one run. ``user``: whose history it is (one
    name or several); with it, only games of those players are kept (the rest are counted as
    skipped, and in a PGN file only their ``White``/``Black`` tags are read: this is how the
    Lichess open database is filtered), without it the player in most games is taken.
    ``progress`` is called with (games read, bytes read, total bytes). The format is
    recognised by content.

    Every game skipped or repaired is counted by reason in the summary and the run. A file
    that ends in the middle of a game (a cut download) imports what it holds and ends the run
    as ``partial``, saying so.

    Of several files, every one that can be read is imported; one that cannot (missing,
    empty, unrecognised, a Lichess study export) is named with its reason in the run's
    message and makes the run ``partial``.

    Returns an :class:`ImportSummary`. Raises InputError (one line) when no file can be
    imported, *before* anything is written.
    """
    unreadable: list[str] = []
    inputs = open_inputs(paths, unreadable=unreadable)
    return import_inputs(inputs, store=store, user=user, progress=progress,
                         max_game_bytes=max_game_bytes, unreadable=unreadable)


def _check_users(users: Sequence[str], inputs: Sequence[InputFile]) -> None:
    """Refuse (ArgumentError, the inputs closed) a ``--user`` no column takes, before
    anything is written: see :func:`~tracker.core.records.player_name_problem`."""
    for u in users:
        why = player_name_problem(u)
        if why:
            for f in inputs:
                f.close()
            raise ArgumentError(f"--user {u!r} cannot be a player's name: {why}")


def import_inputs(
    inputs: Sequence[InputFile],
    *,
    store: Store,
    user: str | Sequence[str] | None = None,
    progress: Progress | None = None,
    max_game_bytes: int | None = None,
    unreadable: Sequence[str] = (),
    written: WrittenGames | None = None,
) -> ImportSummary:
    """Import files already opened (and so checked) by :func:`~tracker.sources.files.open_inputs`
    into ``store`` as one run; see :func:`import_file`. Closes them. ``unreadable``: one line
    per file given that could not be opened (named in the run's message; it ends
    ``partial``). ``written``: keeps the games written, for the passes after the import (see
    :class:`~tracker.store.games.WrittenGames`)."""
    users = [user] if isinstance(user, str) else list(user or [])
    _check_users(users, inputs)
    total = sum(f.size for f in inputs)
    target = ", ".join(str(f.path) for f in inputs)
    if total > KEPT_GAMES * 1000:  # ~1 KB a game at most: more games than are ever kept
        written = None
    recorder = ImportRecorder(store, "file", target, player=users[0] if users else None,
                              also=users[1:], batch_size=FILE_BATCH_SIZE, written=written)
    warnings: list[str] = []
    # a file that could not be read is named, with its reason, where the run says how it ended
    truncated: list[str] = [f"not imported: {why}" for why in unreadable]
    with recorder:
        done_bytes = 0
        for f in inputs:
            with f:
                log = _read_file(f, recorder, users, progress, done_bytes, total,
                                 max_game_bytes)
                warnings.extend(f"{f.path.name}: {m}" for m in log.messages)
                warnings.extend(f.warnings)
                for why in (f.truncated, log.truncated and f"{f.path.name}: {log.truncated}"):
                    if why:
                        truncated.append(why)
                done_bytes += f.size
        if progress is not None:
            progress(recorder.read, total, total)
        if recorder.read == 0:
            message = "no games found in " + ", ".join(f.path.name for f in inputs)
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


def _read_file(f: InputFile, recorder: ImportRecorder, users: Sequence[str],
               progress: Progress | None, done_bytes: int, total: int,
               max_game_bytes: int | None) -> ReadLog:
    """Read one opened file into ``recorder``: in a reader process beside this one where it
    can be (:mod:`tracker.importing.reader_process`), else here; returns what its reader
    skipped or repaired."""

    def read(f: InputFile, sink: Sink, progress: Progress | None, done: int, total: int
             ) -> ReadLog:
        return _import_one(f, sink, users, progress, done, total, max_game_bytes)

    if reader_process.usable(f, recorder.store):
        return reader_process.read_in_child(read, f, recorder, progress, done_bytes, total)
    return read(f, recorder, progress, done_bytes, total)


def _import_one(f: InputFile, recorder: Sink, users: Sequence[str],
                progress: Progress | None, done_bytes: int, total: int,
                max_game_bytes: int | None = None) -> ReadLog:
    """Stream one opened file into ``recorder``; returns what its reader skipped or repaired."""
    log = ReadLog()
    base = recorder.read

    def report(seen: int) -> None:
        if progress is not None:
            progress(base + seen, done_bytes + f.bytes_read, total)

    records: Iterable[GameRecord]
    if f.format == "ndjson":
        cap = max_game_bytes or MAX_NDJSON_GAME_BYTES
        lines = _screen_known(f.byte_lines(cap), recorder, {u.lower() for u in users})
        records = read_ndjson(lines, players=users or None, log=log, progress=report,
                              max_line_bytes=cap)
    elif users:  # a dump filtered by player: searched in big chunks, not line by line
        cap = max_game_bytes or MAX_PGN_GAME_BYTES
        # a line is never held past the cap, nor a run of lines without a game start
        chunks = capped_chunks(f.byte_chunks(), cap)
        records = read_pgn(filter_chunks(chunks, users, carry_limit=cap), players=users,
                           log=log, progress=report, max_game_bytes=cap)
    else:
        cap = max_game_bytes or MAX_PGN_GAME_BYTES
        records = read_pgn(f.byte_blocks(cap), log=log, progress=report, max_game_bytes=cap,
                           blocks=True)
    try:
        for rec in records:
            recorder.add(rec)
            if rec.analysis is not None and rec.analysis.dropped:
                recorder.repair(EVALS_DROPPED)
    finally:  # counted even when the import is interrupted
        for reason, n in log.skipped.items():
            recorder.skip(reason, n)
        for reason, n in log.repaired.items():
            recorder.repair(reason, n)
    return log


#: The start of a Lichess NDJSON game line: the game id is its first key.
_NDJSON_ID = re.compile(rb'\{"id":"([A-Za-z0-9]{8})"')


def _screen_known(lines: Iterable[bytes], recorder: Sink, wanted: set[str],
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


def _screen_chunk(buf: list[bytes], recorder: Sink, wanted: set[str],
                  state: dict[str, bool]) -> Iterator[bytes]:
    same = _unchanged_lines(buf, recorder.store, state)
    games = recorder.store.stored_games(list(same.values())) if same else {}
    for i, line in enumerate(buf):
        game = games.get(same[i]) if i in same else None
        if game is None or (wanted and game.white[0] not in wanted
                            and game.black[0] not in wanted):
            yield line  # to the reader (another player's game: it counts it as such)
        else:
            recorder.add_unchanged(game)
            yield b"\n"


def _end_ids(buf: list[bytes]) -> list[str]:
    """The game ids of the first and the last line of ``buf`` that have one."""
    ends: list[str] = []
    for lines in (buf, reversed(buf)):
        for line in lines:
            m = _NDJSON_ID.match(line.lstrip())
            if m is not None:
                ends.append(m.group(1).decode("ascii"))
                break
    return ends


def _unchanged_lines(buf: list[bytes], store: Store, state: dict[str, bool]) -> dict[int, str]:
    """``{line index: game id}`` of the lines of ``buf`` whose game is stored with exactly
    this text (a game twice in ``buf`` is not: the last copy wins); see :func:`_screen_known`
    for the probing of a first import."""
    if not state["probe_all"]:  # a first import so far: the chunk's ends decide, unmatched
        ends = _end_ids(buf)
        if not ends or not store.stored_digests(ends):
            return {}
    ids: dict[int, str] = {}
    for i, line in enumerate(buf):
        m = _NDJSON_ID.match(line.lstrip())
        if m is not None:
            ids[i] = m.group(1).decode("ascii")
    if not ids:
        return {}
    seen = Counter(ids.values())
    stored = store.stored_digests(list(seen))
    state["probe_all"] = bool(stored)
    same: dict[int, str] = {}
    for i, gid in ids.items():
        digest = stored.get(gid)
        if digest is None or seen[gid] > 1:  # new, or repeated here: the last copy wins
            continue
        text = buf[i].strip()
        if text.endswith(b"}") and raw_digest(text) == digest:
            same[i] = gid
    return same
