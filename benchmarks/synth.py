"""Benchmark inputs synthesised from real Lichess exports: new ids, shifted dates, any size.

The real games are the exports in ``tests/fixtures/lichess/`` (see the README there): the
NDJSON history of *indexinator* (2,907 games) and the PGN download of *cmrade* (474 games) plus
the first 50 games of the Lichess open database. Game ``i`` of a synthetic file is sample game
``i % len(sample)`` with

- a new 8-character id (a bijection of ``i``, so ids never collide and look random), and
- its dates moved ``i // len(sample)`` days back (each pass over the sample is a day earlier),
  so a history of 100k games is the real one played ~35 times over, interleaved.

Everything else (players, ratings, moves, clocks) is the real text, byte for byte. Files are
written streaming, line by line, and cached under ``benchmarks/.data/`` (git-ignored): they
are generated on demand the first time a size is asked for, never committed.

>>> ndjson_file(10_000)  # doctest: +SKIP
PosixPath('.../benchmarks/.data/indexinator-x10000.ndjson')
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
FIXTURES: Final = ROOT / "tests" / "fixtures" / "lichess"
#: Where generated inputs, databases and peer-tool venvs go (git-ignored).
DATA_DIR: Final = Path(os.environ.get("TRACKER_BENCH_DATA", Path(__file__).parent / ".data"))

NDJSON_SAMPLE: Final = FIXTURES / "indexinator-2023-04_2025-10.ndjson"
PGN_SAMPLES: Final = (
    FIXTURES / "cmrade-2018-07_2020-11.pgn",
    FIXTURES / "lichess_db_standard_rated_2013-01-first50.pgn",
)
#: The player every synthetic NDJSON game belongs to (the sample is their export).
NDJSON_PLAYER: Final = "indexinator"
PGN_PLAYER: Final = "cmrade"

#: Bumped when the synthesis changes, so stale cached files are not reused.
VERSION: Final = 1
DAY_MS: Final = 86_400_000

_ALPHABET: Final = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ID_SPACE: Final = 62**8
#: Odd and not a multiple of 31, so ``i * _ID_MULTIPLIER mod 62**8`` is a bijection.
_ID_MULTIPLIER: Final = 0x9E3779B97F4A7C15 % _ID_SPACE | 1

_GAME_ID = re.compile(r'^\{"id":"[^"]*"')
_TIMES = re.compile(r'"(createdAt|lastMoveAt)":(\d+)')
_SITE = re.compile(r'(\[Site "https?://lichess\.org/)[A-Za-z0-9]{8}')
_GAME_ID_TAG = re.compile(r'\[GameId "[^"]*"\]\n')
_DATE_TAG = re.compile(r'\[(UTCDate|Date) "(\d{4})\.(\d{2})\.(\d{2})"\]')


def game_id(i: int) -> str:
    """The synthetic id of game ``i``: 8 base-62 characters, distinct for every ``i``."""
    n = (i * _ID_MULTIPLIER) % _ID_SPACE
    chars = []
    for _ in range(8):
        n, r = divmod(n, 62)
        chars.append(_ALPHABET[r])
    return "".join(chars)


def _ndjson_sample() -> list[str]:
    with NDJSON_SAMPLE.open(encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def _pgn_sample() -> list[str]:
    """The sample's games as text, each ending with one newline after the movetext."""
    games: list[str] = []
    for path in PGN_SAMPLES:
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n").strip()
        for chunk in re.split(r"\n\s*\n(?=\[Event )", text):
            games.append(chunk.strip() + "\n")
    return games


def ndjson_lines(n: int) -> Iterator[str]:
    """``n`` synthetic NDJSON lines (each ending in a newline)."""
    sample = _ndjson_sample()
    for i in range(n):
        line = sample[i % len(sample)]
        shift = (i // len(sample)) * DAY_MS
        line = _GAME_ID.sub(f'{{"id":"{game_id(i)}"', line, count=1)
        if shift:
            line = _TIMES.sub(lambda m, s=shift: f'"{m[1]}":{int(m[2]) - s}', line)
        yield line + "\n"


def _shift_date(m: re.Match[str], days: int) -> str:
    d = date(int(m[2]), int(m[3]), int(m[4])) - timedelta(days=days)
    return f'[{m[1]} "{d.year:04d}.{d.month:02d}.{d.day:02d}"]'


def pgn_games(n: int) -> Iterator[str]:
    """``n`` synthetic PGN games (each followed by a blank line)."""
    sample = _pgn_sample()
    for i in range(n):
        game = sample[i % len(sample)]
        days = i // len(sample)
        gid = game_id(i)
        game = _GAME_ID_TAG.sub("", game)
        game = _SITE.sub(lambda m, g=gid: m[1] + g, game, count=1)
        if days:
            game = _DATE_TAG.sub(lambda m, d=days: _shift_date(m, d), game)
        yield game + "\n"


def _cached(name: str, lines: Iterator[str]) -> Path:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    path = DATA_DIR / name
    if path.exists():
        return path
    tmp = path.with_suffix(path.suffix + ".part")
    with tmp.open("w", encoding="utf-8", newline="\n") as f:
        f.writelines(lines)
    tmp.replace(path)
    return path


def ndjson_file(n: int) -> Path:
    """A synthetic NDJSON export of ``n`` games of :data:`NDJSON_PLAYER` (cached)."""
    return _cached(f"indexinator-v{VERSION}-x{n}.ndjson", ndjson_lines(n))


def pgn_file(n: int) -> Path:
    """A synthetic PGN file of ``n`` games, most of them :data:`PGN_PLAYER`'s (cached)."""
    return _cached(f"cmrade-v{VERSION}-x{n}.pgn", pgn_games(n))


def scratch(name: str) -> Path:
    """A path under the data folder for a benchmark's own files (removed if it exists)."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    path = DATA_DIR / name
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        p.unlink(missing_ok=True)
    return path
