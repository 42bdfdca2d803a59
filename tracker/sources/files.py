"""Open anything a user drops on the tool: plain or compressed, UTF-8 or latin-1, PGN or NDJSON.

Compression is recognised by the file's first bytes (gzip, bzip2, zstd), not by its name; the
format by its first meaningful character (``{`` → NDJSON, ``[`` → PGN). Lines are decoded one
at a time, UTF-8 first (with or without a byte-order mark) and cp1252 as the fallback for a
line that is not UTF-8, with a warning, so a file is streamed and never held in memory.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal

import zstandard

from tracker.errors import TrackerError

Format = Literal["pgn", "ndjson"]

_GZIP = b"\x1f\x8b"
_BZIP2 = b"BZh"
_ZSTD = b"\x28\xb5\x2f\xfd"
_SNIFF_BYTES = 64 * 1024


class InputError(TrackerError, ValueError):
    """A file that cannot be imported (missing, empty, unknown format); one-line message."""


@dataclass
class InputFile:
    """An opened input: its format, its decoded lines, warnings, and bytes read so far."""

    path: Path
    format: Format
    compression: str | None
    size: int  # bytes on disk
    _raw: BinaryIO
    _binary: BinaryIO
    warnings: list[str] = field(default_factory=list)
    _fallback_lines: int = 0

    def lines(self) -> Iterator[str]:
        """Decoded lines (``\\n`` kept), UTF-8 or, line by line, cp1252 with a warning."""
        for lineno, raw in enumerate(self._binary, 1):
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError:
                self._fallback_lines += 1
                if self._fallback_lines == 1:
                    self.warnings.append(
                        f"{self.path.name}: line {lineno} is not UTF-8; read as cp1252/latin-1"
                    )
                yield raw.decode("cp1252", errors="replace")

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


def _decompressor(head: bytes) -> tuple[str | None, Callable[[BinaryIO], BinaryIO]]:
    if head.startswith(_GZIP):
        return "gzip", lambda f: gzip.GzipFile(fileobj=f)  # type: ignore[return-value]
    if head.startswith(_BZIP2):
        return "bzip2", lambda f: bz2.BZ2File(f)  # type: ignore[return-value]
    if head.startswith(_ZSTD):
        return "zstd", lambda f: zstandard.ZstdDecompressor().stream_reader(
            f, read_across_frames=True
        )  # type: ignore[return-value]
    return None, lambda f: f


def sniff_format(head: bytes) -> Format | None:
    """``"ndjson"`` if the first meaningful character is ``{``, ``"pgn"`` for ``[`` or a
    movetext start (``1.``), else ``None``."""
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if text.startswith(b"{"):
        return "ndjson"
    if text.startswith(b"[") and not text.startswith(b"[{") and not text.startswith(b"[]"):
        return "pgn"
    if text[:2] == b"1." or text[:3] == b"1 .":
        return "pgn"
    return None


def open_input(path: str | os.PathLike[str]) -> InputFile:
    """Open a game file for reading, whatever its compression, encoding and format.

    Raises InputError (one line) for a missing file, a folder, an empty file, or a file that
    is neither PGN nor NDJSON.
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
        compression, wrap = _decompressor(raw.read(4))
        raw.seek(0)
        binary = wrap(raw)
        buffered = io.BufferedReader(binary, buffer_size=1 << 20)  # type: ignore[arg-type]
        head = buffered.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]
    except (OSError, EOFError, zstandard.ZstdError) as exc:
        raw.close()
        raise InputError(f"{p}: cannot read the file ({exc})") from None
    fmt = sniff_format(head)
    if fmt is None:
        buffered.close()
        raw.close()
        if not head.strip(b"\xef\xbb\xbf \r\n\t"):
            raise InputError(f"{p}: the file is empty")
        raise InputError(f"{p}: not a PGN or NDJSON game file")
    return InputFile(p, fmt, compression, size, raw, buffered)  # type: ignore[arg-type]
