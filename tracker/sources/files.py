"""Open anything a user drops on the tool: plain or compressed, any common encoding, PGN or NDJSON.

Compression is recognised by the file's first bytes (gzip, bzip2, zstd, xz), not by its name;
the format by the first lines, each voting (a game object → NDJSON, a tag or movetext → PGN:
one broken line never decides a file). The file is
streamed as raw byte lines (:meth:`InputFile.byte_lines`) and never held in memory: the readers
decode what they keep, UTF-8 first (with or without a byte-order mark) and cp1252/latin-1 as
the fallback for a game that is not UTF-8, counted as repaired. A UTF-16 file (Windows
"Unicode" text) is re-encoded to UTF-8 on the fly.

What a reader skips or repairs is counted by reason in a :class:`ReadLog`; the reasons are the
plain words the import summary and the import run show.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import json
import lzma
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Final, Literal, Protocol

import zstandard

from tracker.core.codec import compression_of
from tracker.core.errors import TrackerError
from tracker.sources.limits import (
    MAX_NDJSON_GAME_BYTES,
    MAX_PGN_GAME_BYTES,
    capped_blocks,
    capped_lines,
)

Format = Literal["pgn", "ndjson"]

# Reasons a game is skipped (not imported) or repaired (imported after a fix), in the words
# the import summary shows. The replay has its own reasons (tracker.report.selection).
SKIP_UNREADABLE: Final = "unreadable game"
SKIP_TRUNCATED: Final = "truncated or invalid line"
SKIP_STUDY: Final = "study chapter"
SKIP_CUT_GAME: Final = "cut game at the end of the file"
SKIP_NOT_PLAYER: Final = "not the player's game"
SKIP_INVALID: Final = "invalid value"
SKIP_NOT_A_GAME: Final = "not a game"
SKIP_TOO_LARGE: Final = "game too large"
REPAIRED_ENCODING: Final = "not UTF-8, read as cp1252"

_UTF8_BOM = codecs.BOM_UTF8
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_SNIFF_BYTES = 64 * 1024
#: Read size of the decompressed stream: big reads keep the per-line cost in C.
_BUFFER_BYTES = 1 << 20
#: Compressed bytes fed to zstd at a time: its whole output for one feed is held in memory.
#: A zstd block of 128 KB can be written in 4 bytes, so a feed of N bytes may expand to
#: ~32,000 N: 512 bytes bound one feed's output to ~16 MB even for a decompression bomb (a
#: 135 KB file of 4 GB of zeros), and are no slower than 64 KB on real dumps.
_ZSTD_READ_BYTES = 512
#: Messages kept per reader (the counts are always complete): memory stays flat on a file
#: where every line is broken.
MAX_MESSAGES: Final = 20


class InputError(TrackerError, ValueError):
    """A file that cannot be imported (missing, empty, unknown format); one-line message."""


#: The most digits a JSON integer is read with; a longer one (past Python's 4,300-digit limit
#: it would fail the whole line) reads as :data:`OUT_OF_RANGE`, of its sign.
_MAX_INT_DIGITS: Final = 40
OUT_OF_RANGE: Final = 10**40


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) <= _MAX_INT_DIGITS:
        return int(text)
    return -OUT_OF_RANGE if text.startswith("-") else OUT_OF_RANGE


def json_loads(text: str | bytes) -> Any:
    """``json.loads``, but an integer of more than 40 digits reads as a value out of range
    (:data:`OUT_OF_RANGE`) instead of failing the whole text (Python reads 4,300 digits at
    most). Raises ValueError for text that is not JSON."""
    try:
        return json.loads(text)
    except ValueError:  # rare: retried with every integer read by length first
        return json.loads(text, parse_int=_bounded_int)


@dataclass
class ReadLog:
    """What a reader skipped or repaired, counted by reason, with the first few messages.

    ``truncated`` is set when the input ends in the middle of a game (a cut NDJSON line, a
    compressed stream that stops early): what came before is imported, the run says so.
    """

    skipped: Counter[str] = field(default_factory=Counter)
    repaired: Counter[str] = field(default_factory=Counter)
    messages: list[str] = field(default_factory=list)
    truncated: str | None = None

    def skip(self, reason: str, message: str | None = None, n: int = 1) -> None:
        self.skipped[reason] += n
        self.note(message)

    def repair(self, reason: str, message: str | None = None) -> None:
        self.repaired[reason] += 1
        self.note(message)

    def note(self, message: str | None) -> None:
        if message is not None and len(self.messages) < MAX_MESSAGES:
            self.messages.append(message)


@dataclass
class InputFile:
    """An opened input: its format, its lines (raw bytes or decoded), and bytes read so far."""

    path: Path
    format: Format
    compression: str | None
    size: int  # bytes on disk
    _raw: BinaryIO
    _binary: BinaryIO
    warnings: list[str] = field(default_factory=list)
    #: Set when the (compressed) data ends early: a one-line description.
    truncated: str | None = None

    _stream: _Tolerant | None = None

    def byte_lines(self, max_line_bytes: int | None = None) -> Iterator[bytes]:
        """The file's lines as raw bytes (``\\n`` kept), decompressed, not decoded.

        A line longer than ``max_line_bytes`` (default: the cap on one game of the file's
        format, :mod:`tracker.sources.limits`) is never held: it comes as an
        :class:`~tracker.sources.limits.OversizedLine` and streams by. A compressed stream
        that is cut or corrupt ends the lines where it breaks and sets :attr:`truncated`, so
        the games before the break are still imported.
        """
        cap = max_line_bytes or (MAX_NDJSON_GAME_BYTES if self.format == "ndjson"
                                 else MAX_PGN_GAME_BYTES)
        yield from capped_lines(self._binary.read, cap)
        self._note_truncation()

    def _note_truncation(self) -> None:
        """Set :attr:`truncated` when the compressed stream was cut or damaged."""
        error = self._stream.error if self._stream is not None else None
        if error is not None:
            self.truncated = (
                f"{self.path.name}: the {self.compression} data ends early or is damaged "
                f"({error}); the games before that point were read"
            )

    def byte_blocks(self, max_line_bytes: int | None = None) -> Iterator[bytes]:
        """:meth:`byte_lines` in runs of whole lines
        (:func:`~tracker.sources.limits.capped_blocks`)."""
        cap = max_line_bytes or (MAX_NDJSON_GAME_BYTES if self.format == "ndjson"
                                 else MAX_PGN_GAME_BYTES)
        yield from capped_blocks(self._binary.read, cap)
        self._note_truncation()

    def byte_chunks(self, size: int = 1 << 22) -> Iterator[bytes]:
        """The file's bytes, decompressed, in chunks of ``size`` (lines cut anywhere); a cut or
        damaged compressed stream ends them and sets :attr:`truncated` as :meth:`byte_lines`."""
        read = self._binary.read
        while chunk := read(size):
            yield chunk
        self._note_truncation()

    @property
    def bytes_read(self) -> int:
        """Bytes of the file on disk consumed so far (for a progress bar by bytes)."""
        try:
            return self._raw.tell()
        except (OSError, ValueError):
            return 0

    def close(self) -> None:
        self._binary.close()
        self._raw.close()

    def __enter__(self) -> InputFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def decode_fallback(raw: bytes) -> str:
    """Bytes that are not UTF-8 → text: cp1252 (Windows), else latin-1 (which never fails)."""
    try:
        return raw.decode("cp1252")
    except UnicodeDecodeError:  # the five bytes cp1252 leaves undefined
        return raw.decode("latin-1")


class _Chunked(Protocol):
    """A decompressing reader: ``read1`` gives what is decompressed, up to ``size`` bytes."""

    def read1(self, size: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


class _Tolerant(io.RawIOBase):
    """A decompressed stream that ends, instead of raising, where the compressed data is cut
    or damaged; :attr:`error` keeps why. What was decompressed before the break is kept."""

    def __init__(self, inner: _Chunked) -> None:
        self._inner = inner
        self.error: str | None = None

    def readable(self) -> bool:
        return True

    # why the ignore: io hands readinto a bytearray or memoryview; typeshed types the
    # parameter as any writeable buffer, which this narrower signature does not accept
    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.error is not None:
            return 0
        try:
            data = self._inner.read1(len(buffer))  # read1: what is there, not all of len
        except (EOFError, OSError, zstandard.ZstdError, lzma.LZMAError) as exc:
            self.error = str(exc) or type(exc).__name__
            return 0
        n = len(data)
        buffer[:n] = data
        return n

    def close(self) -> None:
        self._inner.close()
        super().close()


class _ZstdStream(io.RawIOBase):
    """Zstandard frames (one or many, as ``zstd`` and the Lichess dumps write them) read as one
    stream; unlike ``stream_reader``, a file cut inside a frame raises EOFError at its end."""

    def __init__(self, f: BinaryIO) -> None:
        self._f = f
        self._dctx = zstandard.ZstdDecompressor()
        self._obj = self._dctx.decompressobj()
        self._in_frame = False  # bytes of an unfinished frame were fed
        self._pending = b""
        self._offset = 0

    def readable(self) -> bool:
        return True

    def read1(self, size: int = -1) -> bytes:
        while self._offset >= len(self._pending):
            chunk = self._f.read(_ZSTD_READ_BYTES)
            if not chunk:
                if self._in_frame:
                    raise EOFError("the zstd data ends inside a frame")
                return b""
            self._pending, self._offset = self._feed(chunk), 0
        end = len(self._pending) if size < 0 else self._offset + size
        data = self._pending[self._offset : end]
        self._offset += len(data)
        return data

    def _feed(self, chunk: bytes) -> bytes:
        out = []
        while chunk:
            out.append(self._obj.decompress(chunk))
            self._in_frame = not self._obj.eof
            if self._in_frame:
                break
            chunk = self._obj.unused_data  # the next frame starts here
            self._obj = self._dctx.decompressobj()
        return out[0] if len(out) == 1 else b"".join(out)  # no copy of a big output

    # why the ignore: io hands readinto a bytearray or memoryview; typeshed types the
    # parameter as any writeable buffer, which this narrower signature does not accept
    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read1(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._f.close()
        super().close()


class _Utf16ToUtf8(io.RawIOBase):
    """A UTF-16 text stream re-encoded as UTF-8 bytes, read lazily (constant memory)."""

    def __init__(self, binary: BinaryIO) -> None:
        self._text = io.TextIOWrapper(binary, encoding="utf-16", newline="")
        self._pending = b""

    def readable(self) -> bool:
        return True

    # why the ignore: io hands readinto a bytearray or memoryview; typeshed types the
    # parameter as any writeable buffer, which this narrower signature does not accept
    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = self._text.read(_BUFFER_BYTES // 4)
            if not chunk:
                return 0
            self._pending = chunk.encode("utf-8")
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        self._text.close()
        super().close()


def _decompressor(head: bytes) -> tuple[str | None, Callable[[BinaryIO], _Chunked] | None]:
    """The compression of a file starting with ``head`` and how to read it decompressed."""
    compression = compression_of(head)
    if compression == "gzip":
        return compression, lambda f: gzip.GzipFile(fileobj=f)
    if compression == "bzip2":
        return compression, lambda f: bz2.BZ2File(f)
    if compression == "zstd":
        return compression, lambda f: _ZstdStream(f)
    if compression == "xz":
        return compression, lambda f: lzma.LZMAFile(f)
    return None, None


_PGN_TAG = re.compile(rb"\[[A-Za-z0-9][A-Za-z0-9_+#=:-]*[ \t]+\"")


def _first_line(text: bytes) -> bytes:
    return text.split(b"\n", 1)[0].strip()


#: Lines of a file's head that vote on its format: one broken line never decides a file.
SNIFF_LINES: Final = 50


def _line_vote(line: bytes, last: bool) -> Format | None:
    """What one line of a file's head says of the format: ``"ndjson"`` for a Lichess game
    object (an ``id`` and ``players``, in any 8-bit encoding; the head's last line, cut by
    the sniff window, counts if it names an ``id``), ``"pgn"`` for a PGN tag (``[Name "…``)
    or movetext (``1.``), ``None`` for anything else."""
    if line.startswith(b"{"):
        try:
            obj = json_loads(line if line.isascii() else line.decode("latin-1"))
        except ValueError:  # a broken line, or one cut by the sniff window
            return "ndjson" if last and b'"id":' in line and len(line) > 20 else None
        if isinstance(obj, dict) and isinstance(obj.get("id"), str) and "players" in obj:
            return "ndjson"
        return None
    if _PGN_TAG.match(line) or line[:2] == b"1." or line[:3] == b"1 .":
        return "pgn"
    return None


def sniff_format(head: bytes) -> Format | None:
    """The format of a file from its first bytes (UTF-8, a byte-order mark is allowed).

    Up to :data:`SNIFF_LINES` non-blank lines vote (:func:`_line_vote`): a Lichess game object
    is a vote for ``"ndjson"``, a PGN tag or movetext for ``"pgn"``; the format with more
    votes wins (a tie: the first line's). So a garbled first line, or an NDJSON export that
    starts with ``[Event "x"``, is one bad line of its file, skipped by the reader under its
    reason, not the file's format. ``None`` when no line votes: a profile, rating history or
    pretty-printed JSON document is not a game export.
    """
    lines = [ln.strip() for ln in head.lstrip(_UTF8_BOM).split(b"\n")]
    cut = not head.endswith(b"\n")  # the window's last line may be cut short
    votes: list[Format] = []
    seen = 0
    for i, line in enumerate(lines):
        if not line:
            continue
        seen += 1
        vote = _line_vote(line, last=cut and i == len(lines) - 1)
        if vote is not None:
            votes.append(vote)
        if seen >= SNIFF_LINES:
            break
    if not votes:
        return None
    ndjson, pgn = votes.count("ndjson"), votes.count("pgn")
    if ndjson != pgn:
        return "ndjson" if ndjson > pgn else "pgn"
    return votes[0]


def not_a_game_file_reason(head: bytes) -> str:
    """Why a file whose format :func:`sniff_format` could not tell is not a game file."""
    text = head.lstrip(_UTF8_BOM).lstrip()
    line = _first_line(text)
    if line in (b"{", b"["):
        return "a pretty-printed JSON document, not a game export (NDJSON has one game a line)"
    if text.startswith(b"{") or (text.startswith(b"[") and _is_json(line)):
        return "JSON, but not Lichess games (a profile, rating history or other API answer?)"
    return "not a PGN or NDJSON game file"  # a "[section]" line: TOML or INI, not JSON


def _is_json(line: bytes) -> bool:
    try:
        json_loads(line)
    except ValueError:
        return False
    return True


def is_study_export(head: bytes) -> bool:
    """True when the first game of a PGN ``head`` is a Lichess study chapter.

    A study export's chapters carry ``[Site "https://lichess.org/study/…"]`` and, in newer
    exports, ``StudyName``/``ChapterName`` tags; a game history never does.
    """
    seen_tag = False
    for line in head.lstrip(_UTF8_BOM).splitlines()[:200]:
        line = line.strip()
        if line.startswith(b"["):
            seen_tag = True
            if line.startswith((b"[StudyName ", b"[ChapterName ", b"[ChapterURL ")) or (
                line.startswith(b"[Site ") and b"lichess.org/study/" in line
            ):
                return True
        elif line and seen_tag:
            return False  # the first game's movetext: its tags said nothing of a study
    return False


def open_input(path: str | os.PathLike[str]) -> InputFile:
    """Open a game file for reading, whatever its compression, encoding and format.

    Raises InputError (one line) for a missing file, a folder, an empty file, a file that is
    neither PGN nor NDJSON, and a Lichess study export (chapters are not a game history).
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if p.is_dir():
        raise InputError(f"{p}: is a folder, not a file")
    size = p.stat().st_size
    if size == 0:
        raise InputError(f"{p}: the file is empty")
    raw = p.open("rb")
    try:
        compression, wrap = _decompressor(raw.read(6))
        raw.seek(0)
        stream = _Tolerant(wrap(raw)) if wrap is not None else None
        binary: io.RawIOBase | BinaryIO = stream if stream is not None else raw
        buffered: io.BufferedReader[Any] = io.BufferedReader(binary, buffer_size=_BUFFER_BYTES)
        head = buffered.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]
        if head.startswith(_UTF16_BOMS):
            buffered = io.BufferedReader(_Utf16ToUtf8(buffered), buffer_size=_BUFFER_BYTES)
            head = buffered.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]
    except (OSError, EOFError, zstandard.ZstdError, lzma.LZMAError, UnicodeError) as exc:
        raw.close()
        raise InputError(f"{p}: cannot read the file ({exc})") from None
    fmt = sniff_format(head)
    if stream is not None and stream.error is not None and not head.strip():
        raw.close()
        raise InputError(f"{p}: cannot read the {compression} data ({stream.error})")
    if fmt is None or (fmt == "pgn" and is_study_export(head)):
        buffered.close()
        raw.close()
        if fmt == "pgn":
            raise InputError(
                f"{p}: this is a Lichess study export, not a game history; export your games "
                "instead (lichess.org/api/games/user/NAME, or the download link on your profile)"
            )
        if not head.strip(b"\xef\xbb\xbf \r\n\t"):
            raise InputError(f"{p}: the file is empty")
        raise InputError(f"{p}: {not_a_game_file_reason(head)}")
    return InputFile(p, fmt, compression, size, raw, buffered, _stream=stream)


def open_inputs(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    unreadable: list[str] | None = None,
) -> list[InputFile]:
    """Open one file or several with :func:`open_input`, every one checked before any is read.

    Raises InputError (one line) for no file at all. Without ``unreadable``, also for the
    first file that cannot be imported (the files opened before it are closed). With it, a
    file that cannot be imported is described there (its one-line reason, which names it) and
    the others are opened; InputError only when none can be.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    if not paths:
        raise InputError("no file given")
    inputs: list[InputFile] = []
    refused: list[InputError] = []
    try:
        for p in paths:
            try:
                inputs.append(open_input(p))
            except InputError as exc:
                if unreadable is None:
                    raise
                refused.append(exc)
    except InputError:
        for f in inputs:
            f.close()
        raise
    if not inputs:
        if len(refused) == 1:
            raise refused[0]
        raise InputError(f"none of the {len(refused)} files can be imported: "
                         + "; ".join(str(e) for e in refused))
    if unreadable is not None:
        unreadable.extend(str(e) for e in refused)
    return inputs
