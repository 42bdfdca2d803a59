"""The stored raw text: compressed with zstd, and zlib blobs of older databases still read."""

from __future__ import annotations

import zlib

from tracker.core.codec import compress_raw, decompress_raw


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


def test_raw_text_is_compressed_with_the_raw_dictionary_and_is_smaller() -> None:
    import zstandard

    from tests.conftest import INDEXINATOR
    from tracker.core.codec import RAW_DICTIONARY_ID

    lines = INDEXINATOR.read_text(encoding="utf-8").splitlines()[:200]
    blobs = [compress_raw(line) for line in lines]
    assert {zstandard.get_frame_parameters(b).dict_id for b in blobs} == {RAW_DICTIONARY_ID}
    assert [decompress_raw(b) for b in blobs] == lines
    plain = zstandard.ZstdCompressor(level=1, write_content_size=True, write_checksum=False)
    without = sum(len(plain.compress(line.encode("utf-8"))) for line in lines)
    assert sum(map(len, blobs)) * 2 < without  # less than half the bytes of no dictionary


def test_a_frame_without_dictionary_of_an_earlier_database_is_still_read() -> None:
    import zstandard

    text = '{"id":"abcdefgh","moves":"e4 e5"}'
    blob = zstandard.ZstdCompressor(level=1, write_content_size=True).compress(text.encode())
    assert zstandard.get_frame_parameters(blob).dict_id == 0
    assert decompress_raw(blob) == text


def test_a_frame_of_an_unknown_dictionary_is_a_clear_error() -> None:
    import pytest
    import zstandard

    from tracker.core.codec import RawTextError

    other = zstandard.train_dictionary(
        4096, [f'{{"id":"g{i:05d}","moves":"e4 e5 Nf3"}}'.encode() for i in range(400)],
        dict_id=12345)
    blob = zstandard.ZstdCompressor(dict_data=other, write_content_size=True).compress(b"x")
    with pytest.raises(RawTextError, match="unknown zstd dictionary"):
        decompress_raw(blob)


def test_the_raw_dictionary_file_never_changes() -> None:
    """Every stored game written with it needs it: a new dictionary gets a new file and id."""
    import hashlib
    from importlib import resources

    from tracker.core.codec import RAW_DICTIONARY_FILE, RAW_DICTIONARY_SHA256

    data = resources.files("tracker").joinpath("data", RAW_DICTIONARY_FILE).read_bytes()
    assert len(data) == 65536
    assert hashlib.sha256(data).hexdigest() == RAW_DICTIONARY_SHA256 == (
        "c08b1237799b5d7f526828b65ed5f4209ba7275492e7a8ade1c477bb4a58f41e")
