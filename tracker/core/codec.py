"""Bytes codecs shared by the sources and the store: compression formats and the raw text.

- The **magic numbers** of the compressed files a user may drop (gzip, bzip2, zstd, xz): the
  file reader recognises compression by them, not by a file's name.
- The **stored raw text** of a game (the NDJSON line or PGN game, UTF-8): a zstd frame
  compressed with the raw-text dictionary (:func:`compress_raw`), read back with
  :func:`decompress_raw`, which also reads the frames without a dictionary and the zlib
  streams of older databases.
- The **raw digest** (:func:`raw_digest`): how a re-import tells a game it already holds byte
  for byte without decompressing it.
"""

from __future__ import annotations

import functools
import hashlib
import threading
import zlib
from importlib import resources
from typing import Final

import zstandard

GZIP_MAGIC: Final = b"\x1f\x8b"
BZIP2_MAGIC: Final = b"BZh"
#: Never a valid zlib header (its check bits fail), so stored zstd and zlib blobs are told apart.
ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"
XZ_MAGIC: Final = b"\xfd7zXZ\x00"

#: zstd level for the raw text. Level 1 compresses a Lichess game (~730 bytes of NDJSON) to
#: ~480 bytes in ~4 µs, a third of zlib's time at any level (zlib's output is ~440 bytes);
#: with the dictionary below, to ~210 bytes in ~2 µs.
RAW_COMPRESSION_LEVEL: Final = 1
#: The zstd dictionary of the raw text (``tracker/data/raw-dictionary-1.zdict``, made by
#: ``scripts/train_raw_dictionary.py`` from real Lichess games): what every game repeats (keys,
#: tag names, openings, clock comments), so a game's frame holds little else. Its id is in
#: every frame compressed with it, and the file never changes: stored games need it to be read.
RAW_DICTIONARY_ID: Final = 0x7472616B
RAW_DICTIONARY_FILE: Final = "raw-dictionary-1.zdict"
#: SHA-256 of that file, checked when it is loaded.
RAW_DICTIONARY_SHA256: Final = "c08b1237799b5d7f526828b65ed5f4209ba7275492e7a8ade1c477bb4a58f41e"
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


class RawTextError(ValueError):
    """A stored raw text that cannot be read: damaged, not UTF-8, or a zstd frame made with an
    unknown dictionary (one line, in ``str(exc)``)."""


@functools.cache
def _raw_dictionary() -> zstandard.ZstdCompressionDict:
    """The raw-text dictionary, loaded once (and checked against its SHA-256)."""
    data = resources.files("tracker").joinpath("data", RAW_DICTIONARY_FILE).read_bytes()
    if hashlib.sha256(data).hexdigest() != RAW_DICTIONARY_SHA256:
        raise RawTextError(f"tracker/data/{RAW_DICTIONARY_FILE} is not the dictionary stored "
                           "games were written with: reinstall tracker")
    return zstandard.ZstdCompressionDict(data)


def compress_raw(raw: str | bytes) -> bytes:
    """The raw text as stored (text, or its UTF-8 bytes): a zstd frame of its UTF-8 bytes,
    compressed with the raw-text dictionary (its id in the frame)."""
    try:
        compressor: zstandard.ZstdCompressor = _zstd.compressor
    except AttributeError:
        compressor = _zstd.compressor = zstandard.ZstdCompressor(
            level=RAW_COMPRESSION_LEVEL, dict_data=_raw_dictionary(), write_content_size=True,
            write_checksum=False, write_dict_id=True,
        )
    return compressor.compress(raw.encode("utf-8") if isinstance(raw, str) else raw)


def decompress_raw(blob: bytes) -> str:
    """Stored raw text back to a string: zstd frames with the raw-text dictionary or without
    one (databases before it), and zlib streams of older databases still.

    Raises RawTextError, one line, for anything else: a frame made with another dictionary,
    a damaged frame or stream, bytes that are not UTF-8 text, a value that is not bytes (a
    hand edit of the database)."""
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise RawTextError(f"the stored text is a {type(blob).__name__}, not compressed bytes")
    blob = bytes(blob)
    try:
        return _decompressed(blob).decode("utf-8")
    except zlib.error as exc:
        raise RawTextError(f"the stored text is damaged (zlib: {exc})") from None
    except zstandard.ZstdError as exc:
        raise RawTextError(f"the stored text is damaged (zstd: {exc})") from None
    except UnicodeDecodeError as exc:
        raise RawTextError(f"the stored text is not UTF-8 ({exc.reason} at byte {exc.start})"
                           ) from None


def _decompressed(blob: bytes) -> bytes:
    if blob[:4] != ZSTD_MAGIC:
        return zlib.decompress(blob)
    dict_id = zstandard.get_frame_parameters(blob).dict_id
    if dict_id == RAW_DICTIONARY_ID:
        try:
            decompressor: zstandard.ZstdDecompressor = _zstd.decompressor
        except AttributeError:
            decompressor = _zstd.decompressor = zstandard.ZstdDecompressor(
                dict_data=_raw_dictionary())
    elif dict_id == 0:
        try:
            decompressor = _zstd.plain_decompressor
        except AttributeError:
            decompressor = _zstd.plain_decompressor = zstandard.ZstdDecompressor()
    else:
        raise RawTextError(f"the stored text names an unknown zstd dictionary ({dict_id:#x}): "
                           "damaged, or written by a newer tracker")
    return decompressor.decompress(blob)


def intact_raw(blob: object, digest: str) -> bool:
    """Whether a stored raw text still reads back to the text of ``digest`` (a damaged blob,
    or one a hand edit changed, does not: a re-import writes the game again)."""
    if not isinstance(blob, bytes | bytearray | memoryview):
        return False
    try:  # the digest of the bytes: equal only to the UTF-8 text's, no decoding needed
        return raw_digest(_decompressed(bytes(blob))) == digest
    except (RawTextError, zlib.error, zstandard.ZstdError):
        return False
