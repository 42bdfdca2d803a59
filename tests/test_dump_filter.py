"""The dump filter's chunk search gives exactly what the line scanner gives.

:func:`tracker.sources.pgn.filter_chunks` hands runs of games without the wanted names to the
scanner as counts instead of lines; whatever the chunk size and the layout, the kept games,
their line numbers and the number of dropped games must be those of a line-by-line scan.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import CASES, CMRADE, DB2013, LICHESS, SINGLE
from tracker.core.records import GameRecord
from tracker.sources.files import ReadLog
from tracker.sources.pgn import (
    PGNGame,
    _plain_games,
    _plain_run,
    filter_chunks,
    read_pgn,
    scan_games,
)

SHARED_PGN = [
    CMRADE,
    DB2013,
    SINGLE,
    LICHESS / "api-examples" / "api-games-user_lance5500_max1_2026-07.pgn",
    LICHESS / "api-examples" / "api-games-user_lance5500_max1_simul-no-moves_2026-05.pgn",
    *sorted(CASES.glob("*.pgn")),
]


def _chunks(data: bytes, size: int) -> Iterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


def _scan(items: object, players: list[str]) -> tuple[list[PGNGame], int]:
    kept: list[PGNGame] = []
    dropped = 0
    for game in scan_games(items, players):  # type: ignore[arg-type]
        if game is None:
            dropped += 1
        else:
            kept.append(game)
    return kept, dropped


@pytest.fixture(scope="module")
def dump() -> bytes:
    """The shared PGN files one after another, as the dump test of test_hard_inputs has them."""
    return b"".join(p.read_bytes() + b"\n\n" for p in SHARED_PGN)


@pytest.mark.parametrize("size", [1, 97, 4096, 65_536, 1 << 22])
@pytest.mark.parametrize("players", [["cmrade"], ["Lance5500", "BFG9k"], ["nobody"],
                                     ['a"b'], ["CMRADE", "bfg9k"]])
def test_chunk_filter_equals_line_scan(dump: bytes, size: int, players: list[str]) -> None:
    lines = dump.splitlines(keepends=True)
    expected = _scan(lines, players)
    for vector_after in (0, 1 << 40):
        got = _scan(filter_chunks(_chunks(dump, size), players, vector_after=vector_after),
                    players)
        assert got == expected


def test_plain_runs_are_counted_without_lines() -> None:
    """Games laid out as in the dumps are dropped as counts, never cut into lines."""
    games = CMRADE.read_bytes().replace(b"\r\n", b"\n").strip().split(b"\n\n\n")
    dump = b"".join(g.strip() + b"\n\n" for g in games) * 3
    items = list(filter_chunks(_chunks(dump, 1 << 16), ["nobody"]))
    counts = [i for i in items if isinstance(i, tuple)]
    total = _scan(dump.splitlines(), ["nobody"])[1]
    assert total == 3 * 474
    # every game but the last one (kept back until the stream ends) is dropped as a count
    assert sum(games for games, _ in counts) == total - 1
    assert _scan(items, ["nobody"]) == _scan(dump.splitlines(), ["nobody"])


_PIECES = [b'[Event "Rated Blitz game"]\n', b'[Site "x"]\n', b'[White "Ann"]\n', b"\n",
           b"1. e4 e5 1-0\n", b"[Event ", b"\n\n[", b"[", b"Event ", b"e4 ", b"\n[Event x",
           b"\n\n", b"]", b'"']


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=60), st.integers(0, 4), st.integers(0, 4))
def test_plain_run_counts_as_the_byte_passes(pieces: list[bytes], head: int, tail: int) -> None:
    """One numpy pass gives the games and lines of the two byte counts and the newline count,
    on any bytes, at any offsets (the run inside a bigger buffer)."""
    run = b"".join(pieces)
    buf = b"x" * head + run + b"y" * tail
    start, end = head, head + len(run)
    games = _plain_games(buf, start, end)
    expected = None if games < 0 else (games, buf.count(b"\n", start, end))
    assert _plain_run(buf, start, end) == expected
    assert _plain_run(buf, start, end, vectorised=False) == expected


def test_plain_run_of_short_lines_takes_the_byte_passes() -> None:
    """A run with a newline in fewer than 8 bytes (no dump) is counted by the byte passes,
    with the same answer."""
    buf = b'[Event "a"]\n' + b"\n" * 1000 + b'[Event "b"]\n\n1-0\n\n'
    assert _plain_run(buf, 0, len(buf)) == (None if _plain_games(buf, 0, len(buf)) < 0
                                            else (2, buf.count(b"\n")))


def _game(white: str, black: str, gid: int) -> bytes:
    return (f'[Event "Rated Blitz game"]\n[Site "https://lichess.org/g{gid:07d}"]\n'
            f'[White "{white}"]\n[Black "{black}"]\n[Result "1-0"]\n'
            f'[UTCDate "2024.01.01"]\n[UTCTime "10:00:00"]\n[WhiteElo "1500"]\n'
            f'[BlackElo "1500"]\n[TimeControl "180+0"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n\n').encode()


def _names_dump() -> bytes:
    """Games of players whose names hold the wanted one, in other cases, around it."""
    others = ["annAb", "xAnna", "Anna_x", "bob", "ANNAANNA", "nna", "Ann"]
    out = []
    for i in range(400):
        white = "AnNa" if i % 37 == 5 else others[i % len(others)]
        black = "aNNA" if i % 53 == 7 else others[(i * 3) % len(others)]
        out.append(_game(white, black, i))
    return b"".join(out)


@pytest.mark.parametrize("vector_after", [0, 5000, 1 << 40])
@pytest.mark.parametrize("size", [1, 7, 100, 611, 4096, 1 << 22])
@pytest.mark.parametrize("players", [["anna"], ["ANNA", "Bob"], ["ann"], ["nna"], ["zed"]])
def test_names_across_chunks_any_case_and_inside_other_names(size: int, players: list[str],
                                                             vector_after: int) -> None:
    """Names cut by a chunk's end, in any case, inside longer names: the same games, line
    numbers and dropped count as the line scan, counted by byte passes, numpy, or both."""
    dump = _names_dump()
    expected = _scan(dump.splitlines(keepends=True), players)
    got = filter_chunks(_chunks(dump, size), players, vector_after=vector_after)
    assert _scan(got, players) == expected
    if players == ["anna"]:
        assert len(expected[0]) == sum(1 for i in range(400) if i % 37 == 5 or i % 53 == 7)


@pytest.mark.parametrize("change", [
    lambda d: d.replace(b"\n", b"\r\n"),  # CRLF: never dropped as counts
    lambda d: b"\xef\xbb\xbf" + d,  # a byte-order mark
    lambda d: d.replace(b'[Event "Rated Blitz game"]\n', b"", 3),  # games without [Event
    lambda d: d.replace(b"1-0\n\n[Event", b"1-0\n[Event", 5),  # no blank line between games
    lambda d: d.replace(b"\n\n1. e4", b"\n1. e4", 4),  # no blank line before the moves
    lambda d: d.replace(b"Nc6 1-0\n", b"Nc6\n1-0\n", 6),  # movetext on two lines
    lambda d: d.replace(b"Nc6 1-0\n\n", b"Nc6 1-0\n\n\n\n", 6),  # extra blank lines
])
@pytest.mark.parametrize("size", [97, 4096, 1 << 22])
def test_non_plain_layouts_give_what_the_line_scan_gives(change: object, size: int) -> None:
    dump = change(_names_dump())  # type: ignore[operator]
    for players in (["anna"], ["nobody"]):
        expected = _scan(dump.splitlines(keepends=True), players)
        for vector_after in (0, 1 << 40):
            got = filter_chunks(_chunks(dump, size), players, vector_after=vector_after)
            assert _scan(got, players) == expected


@pytest.mark.parametrize("size", [611, 1 << 16, 1 << 22])
def test_read_pgn_counts_dropped_runs_as_games_one_by_one(size: int) -> None:
    """Runs of dropped games counted at once: the same records, skip counts and progress
    calls (every 1,000 games seen) as a read line by line."""
    dump = _names_dump() * 7  # 2,800 games

    def read(items: object) -> tuple[list[GameRecord], dict[str, int], list[int]]:
        log, calls = ReadLog(), list[int]()
        records = list(read_pgn(items, players=["anna"], log=log,  # type: ignore[arg-type]
                                progress=calls.append))
        return records, dict(log.skipped), calls

    expected = read(dump.splitlines(keepends=True))
    assert expected[2] == [1000, 2000]
    assert read(filter_chunks(_chunks(dump, size), ["anna"], vector_after=0)) == expected


def test_numpy_counts_hold_a_few_chunks_of_memory() -> None:
    """The vectorised counts of 4 MB chunks (a bool per byte, positions of the newlines)
    stay within a few chunks' size."""
    import tracemalloc

    dump = _names_dump() * 40  # ~8.5 MB of plain games
    tracemalloc.start()
    try:
        items = filter_chunks(_chunks(dump, 1 << 22), ["nobody"], vector_after=0)
        dropped = sum(i[0] for i in items if isinstance(i, tuple))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert dropped == 400 * 40 - 1  # the last game waits for the stream's end
    assert peak < 32 << 20, peak
