"""The yardsticks of the import targets: the plainest pipelines that store the same facts.

``python -m benchmarks.naive ndjson|lean|pgn FILE DB`` imports FILE into a new SQLite file DB
and prints one JSON line: ``seconds`` and ``cpu`` (the pipeline alone, not the interpreter's
start; CPU time of the process), ``games``, ``peak_mb``.

``lean`` is the leanest plain NDJSON pipeline (the second yardstick of the NDJSON import,
issue 23): ``json.loads`` on each line read as bytes; one game row of 12 columns (id, created,
last move, ended, rated, variant, speed, perf, status, winner, plies, the raw line as a BLOB)
and two side rows of 7 (game id, colour, user id, name, rating, rating diff, provisional);
``executemany`` in batches of 500, WAL and ``synchronous=NORMAL``, the primary keys and one
index, on the sides' user id. The like-for-like ``ndjson`` one below stores what tracker
stores (16 game columns, 9 side columns, tracker's indexes). Both use the standard
library's ``sqlite3``
with the plain design's keys (the game's text id; the sides keyed by it and their colour, as
tracker's store had them up to migration 0005: its integer keys since 0006 are one of the
levers measured against this yardstick), the same indexes, journal (WAL) and sync level
(NORMAL) as tracker's store, ``executemany`` in batches of 500 (one transaction each), the raw
text stored as is: no
validation, no compression, no re-import check, no run record. The NDJSON one reads with
``json.loads``; the PGN one with python-chess's ``read_headers`` (the way its documentation
scans a big file), keeping each game's lines.
"""

from __future__ import annotations

import calendar
import json
import re
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any, TextIO

SCHEMA = """
PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
CREATE TABLE games (id TEXT PRIMARY KEY, created_at_ms INT, last_move_at_ms INT,
  ended_at_ms INT, rated INT, variant TEXT, speed TEXT, perf TEXT, status TEXT, winner TEXT,
  plies INT, clock_initial INT, clock_increment INT, eco TEXT, opening TEXT, raw TEXT);
CREATE INDEX ix_games_ended_at_ms ON games (ended_at_ms);
CREATE TABLE game_sides (game_id TEXT REFERENCES games (id), color TEXT, user_id TEXT,
  name TEXT, title TEXT, rating INT, rating_diff INT, provisional INT, ai_level INT,
  PRIMARY KEY (game_id, color));
CREATE INDEX ix_game_sides_user_id_game_id ON game_sides (user_id, game_id);
"""
LEAN_SCHEMA = """
PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
CREATE TABLE games (id TEXT PRIMARY KEY, created_at_ms INT, last_move_at_ms INT,
  ended_at_ms INT, rated INT, variant TEXT, speed TEXT, perf TEXT, status TEXT, winner TEXT,
  plies INT, raw BLOB);
CREATE TABLE game_sides (game_id TEXT, color TEXT, user_id TEXT, name TEXT, rating INT,
  rating_diff INT, provisional INT, PRIMARY KEY (game_id, color));
CREATE INDEX ix_game_sides_user_id ON game_sides (user_id);
"""
BATCH = 500
GAMES_SQL = f"INSERT INTO games VALUES ({', '.join('?' * 16)})"
SIDES_SQL = f"INSERT INTO game_sides VALUES ({', '.join('?' * 9)})"


def _flush(con: sqlite3.Connection, games: list[tuple[Any, ...]],
           sides: list[tuple[Any, ...]]) -> None:
    with con:
        con.executemany(GAMES_SQL, games)
        con.executemany(SIDES_SQL, sides)
    games.clear()
    sides.clear()


def ndjson(path: str, con: sqlite3.Connection) -> int:
    """The naive NDJSON pipeline: ``json.loads`` per line, one game row and two side rows."""
    n = 0
    games: list[tuple[Any, ...]] = []
    sides: list[tuple[Any, ...]] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            g = json.loads(line)
            clock, opening = g.get("clock", {}), g.get("opening", {})
            last = g.get("lastMoveAt")
            games.append((g["id"], g["createdAt"], last, last or g["createdAt"], g.get("rated"),
                          g.get("variant"), g.get("speed"), g.get("perf"), g.get("status"),
                          g.get("winner"), len(g.get("moves", "").split()),
                          clock.get("initial"), clock.get("increment"), opening.get("eco"),
                          opening.get("name"), line))
            for color in ("white", "black"):
                p = g["players"].get(color, {})
                u = p.get("user", {})
                sides.append((g["id"], color, u.get("id"), u.get("name"), u.get("title"),
                              p.get("rating"), p.get("ratingDiff"), p.get("provisional", False),
                              p.get("aiLevel")))
            n += 1
            if len(games) == BATCH:
                _flush(con, games, sides)
    _flush(con, games, sides)
    return n


LEAN_GAMES_SQL = f"INSERT INTO games VALUES ({', '.join('?' * 12)})"
LEAN_SIDES_SQL = f"INSERT INTO game_sides VALUES ({', '.join('?' * 7)})"


def lean(path: str, con: sqlite3.Connection) -> int:
    """The lean NDJSON pipeline (see the module's docstring)."""
    n = 0
    games: list[tuple[Any, ...]] = []
    sides: list[tuple[Any, ...]] = []
    with open(path, "rb") as f:
        for line in f:
            g = json.loads(line)
            gid, created, last = g["id"], g["createdAt"], g.get("lastMoveAt")
            games.append((gid, created, last, last or created, g.get("rated"), g.get("variant"),
                          g.get("speed"), g.get("perf"), g.get("status"), g.get("winner"),
                          len(g.get("moves", "").split()), line))
            players = g["players"]
            for color in ("white", "black"):
                p = players.get(color, {})
                u = p.get("user", {})
                sides.append((gid, color, u.get("id"), u.get("name"), p.get("rating"),
                              p.get("ratingDiff"), p.get("provisional", False)))
            n += 1
            if len(games) == BATCH:
                with con:
                    con.executemany(LEAN_GAMES_SQL, games)
                    con.executemany(LEAN_SIDES_SQL, sides)
                games.clear()
                sides.clear()
    with con:
        con.executemany(LEAN_GAMES_SQL, games)
        con.executemany(LEAN_SIDES_SQL, sides)
    return n


class _Lines:
    """A text file that keeps the lines ``read_headers`` reads: the game's raw text."""

    def __init__(self, f: TextIO) -> None:
        self.f = f
        self.kept: list[str] = []

    def readline(self) -> str:
        line = self.f.readline()
        self.kept.append(line)
        return line


_MOVE = re.compile(r"[a-hNBRQKO][a-h1-8xO=+#NBRQ-]*")


def pgn(path: str, con: sqlite3.Connection) -> int:
    """The naive PGN pipeline: python-chess ``read_headers`` per game, the same rows."""
    import chess.pgn

    n = 0
    games: list[tuple[Any, ...]] = []
    sides: list[tuple[Any, ...]] = []
    with open(path, encoding="utf-8") as f:
        lines = _Lines(f)
        while (h := chess.pgn.read_headers(lines)) is not None:  # type: ignore[arg-type]
            raw = "".join(lines.kept).strip()
            lines.kept.clear()
            gid = h.get("Site", "").rsplit("/", 1)[-1]
            ts = time.strptime(f"{h.get('UTCDate')} {h.get('UTCTime')}", "%Y.%m.%d %H:%M:%S")
            created = calendar.timegm(ts) * 1000
            tc = h.get("TimeControl", "-").partition("+")
            moves = raw.rpartition("]\n")[2]
            games.append((gid, created, None, created, "Rated" in h.get("Event", ""),
                          h.get("Variant", "Standard"), h.get("Event"), h.get("Event"),
                          h.get("Termination"), h.get("Result"), len(_MOVE.findall(moves)),
                          tc[0], tc[2] or None, h.get("ECO"), h.get("Opening"), raw))
            for color, tag in (("white", "White"), ("black", "Black")):
                name = h.get(tag)
                sides.append((gid, color, name.lower() if name else None, name,
                              h.get(f"{tag}Title"), h.get(f"{tag}Elo"),
                              h.get(f"{tag}RatingDiff"), False, None))
            n += 1
            if len(games) == BATCH:
                _flush(con, games, sides)
    _flush(con, games, sides)
    return n


def main(argv: list[str]) -> int:
    kind, path, db = argv
    Path(db).unlink(missing_ok=True)
    started, cpu = time.perf_counter(), time.process_time()
    con = sqlite3.connect(db)
    con.executescript(LEAN_SCHEMA if kind == "lean" else SCHEMA)
    games = {"ndjson": ndjson, "lean": lean, "pgn": pgn}[kind](path, con)
    con.close()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    from benchmarks import peak_mb

    print(json.dumps({"seconds": seconds, "cpu": cpu, "games": games, "peak_mb": peak_mb()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
