"""The stored raw text: compressed with zstd, and zlib blobs of older databases still read."""

from __future__ import annotations

import zlib

from tracker.codec import compress_raw, decompress_raw


def test_raw_text_round_trips_through_compression() -> None:
    text = '{"id":"abcdefgh","moves":"e4 e5 Nf3 Nc6"}\n[Event "é"]'
    blob = compress_raw(text)
    assert blob[:4] == b"\x28\xb5\x2f\xfd"
    assert decompress_raw(blob) == text


def test_zlib_raw_of_an_older_database_is_still_read() -> None:
    text = "1. e4 e5 2. Nf3 Nc6 1/2-1/2"
    for level in (1, 6, 9):
        assert decompress_raw(zlib.compress(text.encode("utf-8"), level)) == text


def test_empty_raw_round_trips() -> None:
    assert decompress_raw(compress_raw("")) == ""
