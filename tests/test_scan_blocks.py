"""The block scanner cuts exactly what the line scanner cuts.

:func:`tracker.sources.pgn.scan_blocks` reads games laid out as Lichess exports them with a few
regex calls and hands everything else to the line scanner's cutter; whatever the layout, the
chunk size and the size cap, its games (headers, movetext, raw text, line, repaired), its skips
("game too large", "not a game") and their order must be those of
:func:`tracker.sources.pgn.scan_games` over the same lines.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracker.sources.pgn as pgn
from tests.conftest import CASES, CMRADE, DB2013, LICHESS, SINGLE
from tracker.sources.files import ReadLog
from tracker.sources.limits import capped_blocks, capped_lines
from tracker.sources.pgn import PGNGame, read_pgn, scan_blocks, scan_games

FILES = [
    CMRADE,
    DB2013,
    SINGLE,
    LICHESS / "api-examples" / "api-games-user_lance5500_max1_2026-07.pgn",
    LICHESS / "api-examples" / "api-games-user_lance5500_max1_simul-no-moves_2026-05.pgn",
    *sorted(CASES.glob("*.pgn")),
]


def _both(data: bytes, chunk: int, cap: int) -> tuple[list[object], list[object]]:
    lines = capped_lines(io.BytesIO(data).read, cap, chunk)
    blocks = capped_blocks(io.BytesIO(data).read, cap, chunk)
    return list(scan_games(lines, None, cap)), list(scan_blocks(blocks, cap))


@pytest.mark.parametrize("path", FILES, ids=lambda p: Path(p).name)
@pytest.mark.parametrize(("chunk", "cap"), [(1 << 20, 4 << 20), (97, 4 << 20), (4096, 900),
                                            (1, 4 << 20), (65_536, 300)])
def test_every_fixture_is_cut_as_the_line_scanner_cuts_it(path: Path, chunk: int,
                                                          cap: int) -> None:
    data = Path(path).read_bytes()
    expected, got = _both(data, chunk, cap)
    assert got == expected


def test_an_export_is_read_by_the_fast_path() -> None:
    """Nearly every game of a Lichess export is cut without the line scanner: here all but
    the 10 abandoned games, whose movetext line is " 0-1" (a space before the result)."""
    seen: list[int] = []
    original = pgn._cut_lines

    def counting(cut: object, lines: object, lineno: int = 0) -> object:
        items = list(original(cut, lines, lineno))  # type: ignore[arg-type]
        seen.append(lineno)
        return iter(items)

    pgn._cut_lines = counting  # type: ignore[assignment]
    try:
        games = list(scan_blocks(capped_blocks(io.BytesIO(CMRADE.read_bytes()).read, 4 << 20)))
    finally:
        pgn._cut_lines = original
    assert len(games) == 474 and all(isinstance(g, PGNGame) for g in games)
    assert len(seen) == 10


GAME_TAGS = [
    b'[Event "Rated Blitz game"]', b'[Site "https://lichess.org/abcdefgh"]',
    b'[White "alice"]', b'[Black "bob"]', b'[Result "1-0"]', b'[UTCDate "2024.01.01"]',
    b'[UTCTime "10:00:00"]', b'[TimeControl "180+0"]',
]
ODD_TAGS = [
    b'[Event "again"]', b'[white "Carol"]', b'[Annotator "a \\"quoted\\" name"]',
    b'[Path "C:\\\\games"]', b'[Odd_Name "x"]', b'[Spaced  "x"]', b'[NoClose "x"',
    b' [Indented "x"]', b'[Trailing "x"]  ', b'[Empty ""]', b'[Latin "caf\xe9"]',
    b'[Uni "caf\xc3\xa9"]', b'[Quote "a"b"]', b'\xef\xbb\xbf[Bom "x"]', b'[Cr "x"]\r',
]
MOVES = [
    b"1. e4 e5 2. Nf3 Nc6 1-0", b"1. e4 { [%clk 0:03:00] } e5 { [%clk 0:03:00] } 0-1",
    b"1. d4 d5 1/2-1/2", b"*", b"1. e4 e5", b"1. e4 { open comment", b"still } 2. Nf3 1-0",
    b"[%clk 0:01:00]", b"% escape", b"  1. e4 1-0", b"1. e4 1-0  ", b"junk after",
    b"1. e4 {x}1-0", b"1-0", b"1. e4 e5 2. Qh5 \xe9 0-1", b"{", b"}", b"1. c4 ; rest 1-0",
    b"\xef\xbb\xbf1. e4 1-0", b"1. e4 { note 1-0", b"1. e4 {a} {b 0-1",
]
BLANKS = [b"", b"", b"", b"   ", b"\r", b"\t"]


def _game(moves: bytes = b"1. e4 e5 2. Nf3 Nc6 1-0", *tags: bytes) -> bytes:
    return b"\n".join([*(tags or GAME_TAGS), b"", moves, b"", b""])


@pytest.mark.parametrize("data", [
    _game() + _game(b"1. e4 { a comment going on 1-0") + _game(b"} 2. d4 1-0"),
    _game() + _game(b"\xef\xbb\xbf1. e4 1-0") + _game(),
    _game(b"") + _game(b"1. d4 1-0", *GAME_TAGS[1:]),  # tags alone, then tags without Event
    _game(b"1. e4 1-0", *GAME_TAGS, b'[White "x"]') + _game(),  # a tag twice
    _game(b"1. e4 1-0") + b"junk\n\n" + _game(),
    _game(b"1. e4 1-0") + b"[%clk 0:01:00]\n\n" + _game(),
    _game(b"1. e4 " + b"e5 " * 100 + b"1-0") + _game(),  # over a cap of 300 by the scanner's count
], ids=["comment", "bom", "tags-alone", "tag-twice", "junk", "bracket-text", "over-cap"])
@pytest.mark.parametrize("cap", [300, 4 << 20])
def test_games_next_to_plain_ones_are_cut_as_the_line_scanner_cuts_them(data: bytes,
                                                                        cap: int) -> None:
    expected, got = _both(data, 1 << 20, cap)
    assert got == expected


@st.composite
def pgn_games(draw: st.DrawFn) -> list[bytes]:
    """One game's lines: as Lichess exports it, then maybe one or two twists."""
    tags = list(GAME_TAGS[: draw(st.integers(1, len(GAME_TAGS)))])
    between: list[bytes] = [b""]
    moves = [draw(st.sampled_from(MOVES[:4]))]
    after: list[bytes] = [b""]
    for _ in range(draw(st.integers(0, 2))):
        twist = draw(st.integers(0, 6))
        if twist == 0:
            tags.insert(draw(st.integers(0, len(tags))), draw(st.sampled_from(ODD_TAGS)))
        elif twist == 1:
            between = draw(st.lists(st.sampled_from(BLANKS), max_size=2))
        elif twist == 2:
            moves = draw(st.lists(st.sampled_from(MOVES), max_size=3))
        elif twist == 3:
            moves.insert(draw(st.integers(0, len(moves))), draw(st.sampled_from(MOVES)))
        elif twist == 4:
            after = draw(st.lists(st.sampled_from([*BLANKS, *MOVES]), max_size=3))
        elif twist == 5:
            tags = tags[draw(st.integers(0, len(tags))) :]
        else:
            moves = []
    return [*tags, *between, *moves, *after]


@st.composite
def pgn_files(draw: st.DrawFn) -> bytes:
    lines = [line for game in draw(st.lists(pgn_games(), min_size=1, max_size=6))
             for line in game]
    ends = draw(st.sampled_from([b"\n", b"\n", b"\n", b"\n", b"", b"\r\n"]))
    return ends.join(lines) + draw(st.sampled_from([b"", b"\n", b"\n\n"]))


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pgn_files(), st.sampled_from([1, 7, 64, 300, 1 << 20]),
       st.sampled_from([60, 200, 4 << 20]), st.sampled_from([0, 100, 1 << 16]))
def test_randomly_broken_files_are_cut_as_the_line_scanner_cuts_them(
        data: bytes, chunk: int, cap: int, carry_limit: int) -> None:
    """``carry_limit``: whole lines without a game break held before they are scanned (64 KB;
    smaller here so that a block ends inside a game)."""
    saved = pgn._BLOCK_CARRY_LIMIT
    pgn._BLOCK_CARRY_LIMIT = carry_limit  # type: ignore[misc]
    try:
        expected, got = _both(data, chunk, cap)
    finally:
        pgn._BLOCK_CARRY_LIMIT = saved  # type: ignore[misc]
    assert got == expected


@pytest.mark.parametrize("players", [None, ["cmrade"]])
def test_read_pgn_reads_blocks_as_it_reads_lines(players: list[str] | None) -> None:
    data = CMRADE.read_bytes() + b"\n\n" + DB2013.read_bytes()
    logs = ReadLog(), ReadLog()
    by_lines = list(read_pgn(capped_lines(io.BytesIO(data).read, 4 << 20), players=players,
                             log=logs[0]))
    by_blocks = list(read_pgn(capped_blocks(io.BytesIO(data).read, 4 << 20), players=players,
                              log=logs[1], blocks=True))
    assert by_blocks == by_lines and logs[1] == logs[0]
    assert len(by_lines) == (474 + 50 if players is None else 474)
