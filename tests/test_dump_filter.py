"""The dump filter's chunk search gives exactly what the line scanner gives.

:func:`tracker.sources.pgn.filter_chunks` hands runs of games without the wanted names to the
scanner as counts instead of lines; whatever the chunk size and the layout, the kept games,
their line numbers and the number of dropped games must be those of a line-by-line scan.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import CASES, CMRADE, DB2013, LICHESS, SINGLE
from tracker.sources.pgn import PGNGame, filter_chunks, scan_games

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
    got = _scan(filter_chunks(_chunks(dump, size), players), players)
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
