"""The hard cap on one game's size, and reading lines without ever holding a longer one.

A Lichess game is ~1 KB of NDJSON (a long correspondence game with clocks and analysis
~30 KB) and ~2 KB of PGN (~50 KB with every comment and variation). A "game" far beyond that
is a broken or hostile file: a line of zeros a gigabyte long, a decompression bomb, an
unclosed ``{`` comment. So one game may hold at most :data:`MAX_NDJSON_GAME_BYTES` of NDJSON
and :data:`MAX_PGN_GAME_BYTES` of PGN; the rest of a larger game is read and thrown away as it
streams by (memory stays bounded) and the game is skipped as "game too large". The games
before and after it are read as usual.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from typing import Final

#: One NDJSON game (one line) may be at most this long: 1 MB, ~1,000 times a usual game.
MAX_NDJSON_GAME_BYTES: Final = 1 << 20
#: One PGN game (tags, moves, comments) may be at most this long: 4 MB.
MAX_PGN_GAME_BYTES: Final = 4 << 20
#: Bytes read at a time from a (decompressed) stream.
CHUNK_BYTES: Final = 1 << 20
#: Bytes of a too-large line kept to say which game it was.
_PREFIX_BYTES: Final = 256


def last_brace(data: bytes, before: bytes = b"") -> bytes:
    """The last ``{`` or ``}`` of ``data`` (``before`` when it has none): whether a PGN line
    ends inside a ``{…}`` comment, which do not nest (PGN spec 5)."""
    i = max(data.rfind(b"{"), data.rfind(b"}"))
    return data[i : i + 1] if i >= 0 else before


class OversizedLine(bytes):
    """A line longer than the cap, not held: its first bytes (to name it in a message).

    ``size`` is its full length in bytes, counted as it streams by (:meth:`grow`); ``ended``
    is False while no line end was seen (the stream ended inside it); ``brace`` is its last
    ``{`` or ``}`` (:func:`last_brace`), so a PGN reader knows whether a comment goes on
    after it."""

    size: int
    ended: bool
    brace: bytes

    def __new__(cls, first: bytes) -> OversizedLine:
        line = super().__new__(cls, first[:_PREFIX_BYTES])
        line.size, line.ended, line.brace = 0, False, b""
        return line

    def grow(self, data: bytes) -> None:
        """Count ``data``, the next bytes of the line (its ``\\n`` ends it)."""
        self.size += len(data)
        self.brace = last_brace(data, self.brace)
        self.ended = data.endswith(b"\n")


def capped_lines(read: Callable[[int], bytes], cap: int,
                 chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The lines of a binary stream (``read(n)`` gives up to ``n`` bytes, ``b""`` at its
    end), ``\\n`` kept, split on ``\\n`` only, in time linear in the stream; memory holds
    at most a chunk and ``cap`` bytes.

    A line that grows past ``cap`` before its end is yielded as an :class:`OversizedLine`
    (its first bytes) and the rest of it is skipped as it streams by. A line that ends within
    the chunk it started in may be longer than ``cap`` (up to a chunk): readers check the
    length of what they get. Complete lines are split in C (a ``BytesIO`` over each chunk's
    complete lines): as fast as iterating a buffered file.
    """
    return lines_of_blocks(capped_blocks(read, cap, chunk_bytes))


def lines_of_blocks(blocks: Iterable[bytes]) -> Iterator[bytes]:
    """The lines of :func:`capped_blocks`' runs (an :class:`OversizedLine` as it is)."""
    for block in blocks:
        if block.__class__ is OversizedLine:
            yield block
        else:
            yield from io.BytesIO(block)


def capped_blocks(read: Callable[[int], bytes], cap: int,
                  chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """:func:`capped_lines` in runs: each item is one or more whole lines (``\\n`` kept; the
    stream's last line may have none) or an :class:`OversizedLine`, for a reader that cuts
    lines itself (:func:`tracker.sources.pgn.scan_blocks`)."""
    pending = _Pending(cap)
    while chunk := read(chunk_bytes):
        if pending:  # the line the last chunk ended in goes on
            end = chunk.find(b"\n") + 1
            line = pending.add(chunk[:end] if end else chunk)
            if not end:
                continue
            if line is not None:
                yield line
            chunk = chunk[end:]
        cut = chunk.rfind(b"\n") + 1
        if cut:
            yield chunk[:cut]
        pending.start(chunk[cut:])
    last = pending.add(b"")
    if last:
        yield last


class _Pending:
    """The line a chunk ended in, for :func:`capped_lines`: held part by part (no copies)
    up to ``cap`` bytes, then an :class:`OversizedLine` that only counts what streams by."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[bytes] = []
        self.held = 0
        self.big: OversizedLine | None = None

    def __bool__(self) -> bool:
        return bool(self.parts) or self.big is not None

    def start(self, rest: bytes) -> None:
        """A new line starts with ``rest`` (maybe nothing)."""
        self.parts, self.held = ([rest], len(rest)) if rest else ([], 0)
        self._check()

    def add(self, head: bytes) -> bytes | None:
        """The line goes on with ``head``; when ``head`` ends it (or is ``b""``: the
        stream's end), the whole line (an :class:`OversizedLine` when too long) is
        returned and a new one begins."""
        if self.big is not None:
            self.big.grow(head)
        else:
            self.parts.append(head)
            self.held += len(head)
        if head.endswith(b"\n") or not head:
            line = self.big if self.big is not None else b"".join(self.parts)
            self.parts, self.held, self.big = [], 0, None
            return line
        self._check()
        return None

    def _check(self) -> None:
        if self.held > self.cap:
            self.big = _oversized(self.parts)
            self.parts, self.held = [], 0


def _oversized(parts: list[bytes]) -> OversizedLine:
    line = OversizedLine(parts[0])
    for part in parts:
        line.grow(part)
    return line


def capped_chunks(chunks: Iterable[bytes], cap: int) -> Iterator[bytes]:
    """The chunks of a byte stream (lines cut anywhere) with every line that runs on past
    ``cap`` bytes over several chunks cut to its first ``cap + 1`` bytes and the last brace
    of what was cut (:func:`last_brace`: a PGN comment's state after the line): a reader
    that joins chunks into lines (:func:`tracker.sources.pgn.filter_chunks`) then never
    holds more than ``cap`` and a chunk of one line, and finds the line too long (a line
    within one chunk is left whole: a chunk is bounded). Only the text of such a line is
    lost."""
    run = 0  # bytes of the line the last chunk ended in (past the cap: being dropped)
    brace = b""  # the last brace of the bytes dropped
    for chunk in chunks:
        if run > cap:  # inside a line already cut: drop up to its end
            end = chunk.find(b"\n")
            brace = last_brace(chunk if end < 0 else chunk[:end], brace)
            if end < 0:
                continue
            chunk, run, brace = brace + chunk[end:], 0, b""
        last = chunk.rfind(b"\n")
        tail = len(chunk) - last - 1  # bytes after the last line end (all if none)
        run = run + tail if last < 0 else tail
        if run > cap:  # the line the chunk ends in runs past the cap here: cut it
            keep = len(chunk) - (run - cap - 1)
            brace = last_brace(chunk[keep:])
            chunk = chunk[:keep]
        if chunk:
            yield chunk
    if run > cap and brace:  # the stream ends inside a cut line
        yield brace
