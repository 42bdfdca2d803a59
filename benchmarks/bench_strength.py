"""Benchmark of ``tracker strength`` for a player with 2,000 analysed games (issue 33: ≤ 1 s
warm).

Run: ``python -m benchmarks --only strength`` (or ``python benchmarks/bench_strength.py``).
The 2,000 real analysed rapid games of the test fixture (Lichess's evals and judgments) are
imported as one player's (the white side renamed ``bencher``) into a new SQLite database.
Cold: the first strength report of the process (``api.strength``: the models loaded, every
game's accuracy, ACPL, counts, level and turning point computed and saved). Then, in ``RUNS``
rounds, the report is timed warm (each game's result read back from what the cold call saved,
the monthly and recent levels combined) beside its yardstick measured in the same round:
reading the same analysed games back from the store and decoding every game's evals and
stored text (``analysed_games``; what every report did before the results were saved).
Reported: the warm report's seconds (target ≤ 1 s), the read's, their ratio, and both in
this process's CPU time (PostgreSQL's server work is not in it); the cold report's seconds.
The same on PostgreSQL (the throwaway server of ``tests/pg_server.py``) when one can be
started (``--sqlite``: not).
"""

from __future__ import annotations

import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

import zstandard

from benchmarks import RUNS, Row, row
from tracker import api
from tracker.store.analysis import analysed_games
from tracker.store.db import Store

FIXTURE: Final = (Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "analysed"
                  / "lichess-rapid-analysed-first2000.ndjson.zst")
PLAYER: Final = "bencher"
TARGET_SECONDS: Final = 1.0


def one_players_games(path: Path) -> bytes:
    """The fixture's games as one player's: every white side renamed :data:`PLAYER`."""
    with path.open("rb") as raw:
        text = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw)).read()
    out = []
    for line in text.splitlines():
        if line.strip():
            game = json.loads(line)
            game["players"]["white"]["user"] = {"name": PLAYER, "id": PLAYER}
            out.append(json.dumps(game))
    return ("\n".join(out) + "\n").encode()


def _one_backend(name: str, db: str, src: Path, runs: int) -> list[Row]:
    """The warm and cold rows on the database ``db`` (a path or a URL), new and empty."""
    summary = api.import_file(src, db=db, user=PLAYER)
    t0 = time.perf_counter()
    api.strength(PLAYER, db=db, perf="rapid")  # cold: models loaded, every game saved
    cold = time.perf_counter() - t0
    report_s, read_s, report_cpu, read_cpu = [], [], [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        with Store(db) as store:
            games = list(analysed_games(store, PLAYER, "rapid"))
            decoded = sum(len(g.analysis.evals) + (len(g.raw) > 0) for g in games)
        read_s.append(time.perf_counter() - t0)
        read_cpu.append(time.process_time() - c0)
        t0, c0 = time.perf_counter(), time.process_time()
        report = api.strength(PLAYER, db=db, perf="rapid")
        report_s.append(time.perf_counter() - t0)
        report_cpu.append(time.process_time() - c0)
    n = len(report.games)
    seconds, read, cpu, cpu_read = (statistics.median(x) for x in (
        report_s, read_s, report_cpu, read_cpu))
    return [row(f"tracker strength, warm (api.strength, {name})", f"{n:,} analysed games",
                f"{seconds:.3f} s", f"≤ {TARGET_SECONDS:g} s", seconds <= TARGET_SECONDS,
                f"CPU {cpu:.3f} s against the read's {cpu_read:.3f} s (this process; "
                f"{cpu / cpu_read:.1f}×); {summary.evals:,} games with Lichess's evals, "
                f"{len(games):,} read back ({decoded:,} evals decoded); each game's result "
                "read from what the cold call saved",
                yardstick=f"read back {read:.3f} s", ratio=f"{seconds / read:.1f}×"),
            row(f"tracker strength, cold (first call: every game computed and saved, {name})",
                f"{n:,} analysed games", f"{cold:.3f} s",
                note="the models loaded too; once per player, perf, level model and "
                "calibration, and again for a game whose evals change")]


def run(runs: int = RUNS, postgresql: bool = True) -> list[Row]:
    """The rows for SQLite and, when a server can be started (and ``postgresql``),
    PostgreSQL."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "games.ndjson"
        src.write_bytes(one_players_games(FIXTURE))
        rows = _one_backend("SQLite", str(Path(tmp) / "strength.db"), src, runs)
        if not postgresql:
            return rows
        from tests.pg_server import postgres_url

        with postgres_url() as (url, reason):
            if url is None:
                rows.append(row("tracker strength (PostgreSQL)", "2,000 analysed games",
                                "not run", note=reason))
            else:
                rows += _one_backend("PostgreSQL", url, src, runs)
        return rows


def main(argv: list[str]) -> None:
    args = [a for a in argv if a != "--sqlite"]
    for r in run(int(args[0]) if args else RUNS, postgresql="--sqlite" not in argv):
        print(r)


if __name__ == "__main__":
    main(sys.argv[1:])
