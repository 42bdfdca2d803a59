"""Varied synthetic Lichess dump games: what the dump-filter benchmark reads by default.

Why not the real games repeated (:func:`benchmarks.bench_pgn_import.dump_games` with
``repeated=True``): 500 games cycled under new names and ids repeat within zstd's window, so
the dump compresses about 26:1 and zstd decompresses it at 2.8–3.8 GB/s. Real monthly dumps
compress about 5:1 without clock comments (``lichess_db_standard_rated_2013-01.pgn.zst`` is
~17.8 MB for ~121k games) and about 7:1 with them (2017 on), and zstd decompresses them at a
few hundred MB/s, which is the yardstick issue 14 means ("zstd decompresses several hundred
MB/s"). Against the repeated dump the yardstick is several times faster than on any real
dump; that dump stays as a separate, labelled worst-case row.

Here every game is new where it matters to a compressor: random legal playouts (python-chess,
a fixed seed) of a realistic length, in SAN, from a pool of 16,000 movetexts (~8 MB without
clocks, far more than zstd's window at the level used, so a movetext never repeats within
it), under new player names (from 40,000 made-up ones), ratings, rating changes, dates and
times, time controls, ECO codes, opening names, results and terminations; the clock comments
(``{ [%clk 0:02:58] }``) count down from the time control with varied thinking times and the
increment, so no two games' comments are alike. The tag order and spelling are the dumps'
own (2013: no ``Date``/``Round``; 2017 on: with them).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Final

from benchmarks.synth import FIXTURES

#: Movetexts in the pool; at ~500 bytes each without clocks, ~8 MB.
POOL: Final = 16_000
PLAYERS: Final = 40_000
SEED: Final = 20130101

_SYLLABLES: Final = (
    "ka", "ro", "mi", "ta", "chess", "ne", "vo", "lin", "dar", "gam", "bit", "zor", "el",
    "pa", "wn", "king", "knight", "rook", "qu", "een", "sto", "fi", "del", "max", "ash",
    "tor", "ul", "ri", "sa", "mon", "jo", "han", "li", "ev", "ian", "os", "ku", "ber",
)
_OPENINGS: Final = (
    "Sicilian Defense", "Sicilian Defense: Najdorf Variation", "French Defense: Normal Variation",
    "Queen's Pawn Game: Colle System", "Italian Game: Two Knights Defense",
    "Ruy Lopez: Berlin Defense", "Caro-Kann Defense: Advance Variation", "English Opening",
    "Scandinavian Defense: Mieses-Kotroc Variation", "King's Indian Defense: Normal Variation",
    "Queen's Gambit Declined", "Pirc Defense", "Philidor Defense #3", "Van't Kruijs Opening",
    "Scotch Game", "Bishop's Opening", "Owen Defense", "Modern Defense", "Horwitz Defense",
    "Nimzo-Larsen Attack: Modern Variation", "Indian Game", "Zukertort Opening",
    "Vienna Game", "Petrov's Defense", "King's Pawn Game: Wayward Queen Attack",
    "Slav Defense: Exchange Variation", "Dutch Defense", "Alekhine Defense", "Grob Opening",
)
_CONTROLS: Final = ((60, 0), (120, 1), (180, 0), (180, 2), (300, 0), (300, 3), (600, 0),
                    (600, 5), (900, 10), (420, 8), (480, 2), (1800, 0))
_TERMINATIONS: Final = ("Normal", "Normal", "Normal", "Time forfeit")


#: The real PGN exports the dump's openings and the plain PGN benchmark's games come from.
SAMPLES: Final = (
    FIXTURES / "cmrade-2018-07_2020-11.pgn",
    FIXTURES / "lichess_db_standard_rated_2013-01-first50.pgn",
    FIXTURES / "single-game-q7ZvsdUF.pgn",
)
_GAMEID = re.compile(rb'\[GameId "[A-Za-z0-9]+"\]\n')
_ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def game_id(i: int) -> bytes:
    """A new 8-character id for game ``i`` (a bijection of ``i``: ids never collide)."""
    x = (i * 2_654_435_761 + 12_345) % 62**8
    out = bytearray()
    for _ in range(8):
        x, r = divmod(x, 62)
        out.append(_ALPHABET[r])
    return bytes(out)


def sample_games() -> list[bytes]:
    """The real games of :data:`SAMPLES` that have moves (at least 2 plies), as PGN text
    ending in a blank line, their ``GameId`` tag left out."""
    from tracker.sources.pgn import count_plies, split_games

    games = []
    for path in SAMPLES:
        with path.open("rb") as f:
            for g in split_games(f):
                if count_plies(g.movetext) >= 2 and "Site" in g.headers:
                    lines = g.raw.splitlines()
                    n_tags = len(g.headers)
                    text = "\n".join([*lines[:n_tags], "", *lines[n_tags:], "", ""])
                    games.append(_GAMEID.sub(b"", text.encode("utf-8")))
    return games


def _name(rng: random.Random) -> str:
    parts = [rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 3))]
    name = "".join(p.capitalize() if rng.random() < 0.4 else p for p in parts)
    if rng.random() < 0.3:
        name += "_" + rng.choice(_SYLLABLES)
    if rng.random() < 0.6:
        name += str(rng.randint(0, 9999))
    return name


@lru_cache(maxsize=1)
def players() -> list[str]:
    rng = random.Random(SEED + 1)
    return [_name(rng) for _ in range(PLAYERS)]


def _playout(rng: random.Random) -> tuple[list[str], str]:
    """A random legal game of a realistic length: its SAN moves and result."""
    import chess

    board = chess.Board()
    plies = min(max(int(rng.gauss(68, 32)), 2), 220)
    sans: list[str] = []
    for san in rng.choice(openings())[: rng.randint(2, 14)]:  # a real game's first moves
        sans.append(board.san_and_push(board.parse_san(san)))
    for _ in range(plies - len(sans)):
        moves = list(board.legal_moves)
        if not moves:
            break
        sans.append(board.san_and_push(rng.choice(moves)))
    if board.is_checkmate():
        return sans, "0-1" if board.turn else "1-0"
    return sans, rng.choice(("1-0", "0-1", "1-0", "0-1", "1/2-1/2"))


@lru_cache(maxsize=1)
def openings() -> list[list[str]]:
    """The first 14 moves (SAN) of every real game in the test fixtures (~500)."""

    out = []
    for g in sample_games():
        movetext = g.decode("utf-8").partition("\n\n")[2]
        movetext = re.sub(r"\{[^}]*\}|\d+\.+", " ", movetext)
        sans = movetext.split()[:-1][:14]
        if len(sans) >= 2:
            out.append(sans)
    return out


@lru_cache(maxsize=1)
def pool() -> list[tuple[list[str], str]]:
    """The movetexts (SAN lists and results): generated once a process (~1 min)."""
    rng = random.Random(SEED)
    return [_playout(rng) for _ in range(POOL)]


def _clock(secs: int) -> str:
    return f"{{ [%clk {secs // 3600}:{secs // 60 % 60:02d}:{secs % 60:02d}] }}"


def _movetext(sans: list[str], result: str, rng: random.Random,
              control: tuple[int, int] | None) -> str:
    out = []
    left = [control[0], control[0]] if control else [0, 0]
    for ply, san in enumerate(sans):
        number = f"{ply // 2 + 1}." if ply % 2 == 0 else (f"{ply // 2 + 1}..." if control
                                                            else "")
        token = f"{number} {san}" if number else san
        if control:
            side = ply % 2
            spent = int(rng.expovariate(1 / max(control[0] / 60, 1))) if ply > 1 else 0
            left[side] = max(left[side] - spent, 0) + (control[1] if ply > 1 else 0)
            token += " " + _clock(left[side])
        out.append(token)
    out.append(result)
    return " ".join(out)


def game(i: int, rng: random.Random, clocks: bool, white: str | None = None) -> bytes:
    """Game ``i`` of a varied dump, as PGN text ending in a blank line."""

    sans, result = pool()[i % POOL]
    names = players()
    w = white or rng.choice(names)
    b = rng.choice(names)
    control = rng.choice(_CONTROLS)
    day = rng.randint(1, 28)
    year = 2017 if clocks else 2013
    we, be = int(rng.gauss(1600, 300)), int(rng.gauss(1600, 300))
    diff = rng.randint(1, 25)
    wd, bd = (diff, -diff) if result == "1-0" else (-diff, diff) if result == "0-1" else (
        rng.randint(-3, 3), rng.randint(-3, 3))
    base = control[0] + 40 * control[1]
    speed = ("Bullet" if base < 180 else "Blitz" if base < 480 else "Rapid" if base < 1500
             else "Classical") if clocks else ("Blitz" if base < 480 else "Classical")
    tags = [("Event", f"Rated {speed} game"), ("Site", "https://lichess.org/"
                                                + game_id(i).decode())]
    if clocks:
        tags += [("Date", f"{year}.04.{day:02d}"), ("Round", "-")]
    tags += [
        ("White", w), ("Black", b), ("Result", result),
        ("UTCDate", f"{year}.04.{day:02d}"),
        ("UTCTime", f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"),
        ("WhiteElo", str(we)), ("BlackElo", str(be)),
        ("WhiteRatingDiff", f"{wd:+d}"), ("BlackRatingDiff", f"{bd:+d}"),
        ("ECO", f"{'ABCDE'[rng.randint(0, 4)]}{rng.randint(0, 99):02d}"),
        ("Opening", rng.choice(_OPENINGS)),
        ("TimeControl", f"{control[0]}+{control[1]}"),
        ("Termination", "Normal" if "#" in (sans[-1] if sans else "")
         else rng.choice(_TERMINATIONS)),
    ]
    head = "".join(f'[{k} "{v}"]\n' for k, v in tags)
    text = _movetext(sans, result, rng, control if clocks else None)
    return (head + "\n" + text + "\n\n").encode("utf-8")


def games(limit_bytes: int, clocks: bool, needle: str, needle_every: int) -> Iterator[bytes]:
    """Games of a varied dump until ``limit_bytes``; one in ``needle_every`` is ``needle``'s
    (as White)."""
    rng = random.Random(SEED + 2 + clocks)
    written = i = 0
    while written < limit_bytes:
        g = game(i, rng, clocks, needle if i % needle_every == 0 else None)
        written += len(g)
        i += 1
        yield g
