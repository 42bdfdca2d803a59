"""Bytes codecs shared by the sources and the store: compression formats and the raw text.

- The **magic numbers** of the compressed files a user may drop (gzip, bzip2, zstd, xz): the
  file reader recognises compression by them, not by a file's name.
- The **stored raw text** of a game (the NDJSON line or PGN game, UTF-8): a zstd frame
  (:func:`compress_raw`), read back with :func:`decompress_raw`, which also reads the zlib
  streams of older databases.
- The **raw digest** (:func:`raw_digest`): how a re-import tells a game it already holds byte
  for byte without decompressing it.
"""

from __future__ import annotations

import hashlib
import threading
import zlib
from typing import Final

import zstandard

GZIP_MAGIC: Final = b"\x1f\x8b"
BZIP2_MAGIC: Final = b"BZh"
#: Never a valid zlib header (its check bits fail), so stored zstd and zlib blobs are told apart.
ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"
XZ_MAGIC: Final = b"\xfd7zXZ\x00"

#: zstd level for the raw text. Level 1 compresses a Lichess game (~730 bytes of NDJSON) to
#: ~480 bytes in ~4 µs, a third of zlib's time at any level (zlib's output is ~440 bytes).
RAW_COMPRESSION_LEVEL: Final = 1
#: Bytes of the BLAKE2b raw digest (16 hex digits).
DIGEST_BYTES: Final = 8

#: One zstd (de)compressor per thread: they are not thread-safe, and making one per call
#: costs twice the compression itself.
_zstd = threading.local()


def compression_of(head: bytes) -> str | None:
    """The compression of data starting with ``head`` (its first 6 bytes suffice):
    ``"gzip"``, ``"bzip2"``, ``"zstd"``, ``"xz"``, or ``None`` for uncompressed data."""
    for name, magic in (("gzip", GZIP_MAGIC), ("bzip2", BZIP2_MAGIC), ("zstd", ZSTD_MAGIC),
                        ("xz", XZ_MAGIC)):
        if head.startswith(magic):
            return name
    return None


def raw_digest(raw: str | bytes) -> str:
    """The digest of a game's raw text (text as UTF-8): 16 hex digits of BLAKE2b."""
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    return hashlib.blake2b(data, digest_size=DIGEST_BYTES).hexdigest()


def compress_raw(raw: str) -> bytes:
    """The raw text as stored: a zstd frame of its UTF-8 bytes."""
    try:
        compressor: zstandard.ZstdCompressor = _zstd.compressor
    except AttributeError:
        compressor = _zstd.compressor = zstandard.ZstdCompressor(
            level=RAW_COMPRESSION_LEVEL, write_content_size=True, write_checksum=False
        )
    return compressor.compress(raw.encode("utf-8"))


def decompress_raw(blob: bytes) -> str:
    """Stored raw text back to a string: zstd frames, and zlib streams of older databases."""
    if blob[:4] != ZSTD_MAGIC:
        return zlib.decompress(blob).decode("utf-8")
    try:
        decompressor: zstandard.ZstdDecompressor = _zstd.decompressor
    except AttributeError:
        decompressor = _zstd.decompressor = zstandard.ZstdDecompressor()
    return decompressor.decompress(blob).decode("utf-8")
