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
Reported: the warm report's seconds (target ≤ 1 s), the read's, their ratio; the cold
report's seconds.
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


def run(runs: int = RUNS) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "games.ndjson"
        src.write_bytes(one_players_games(FIXTURE))
        db = Path(tmp) / "strength.db"
        summary = api.import_file(src, db=db, user=PLAYER)
        t0 = time.perf_counter()
        api.strength(PLAYER, db=db, perf="rapid")  # cold: models loaded, every game saved
        cold = time.perf_counter() - t0
        report_s, read_s = [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            with Store(str(db)) as store:
                games = list(analysed_games(store, PLAYER, "rapid"))
                decoded = sum(len(g.analysis.evals) + (len(g.raw) > 0) for g in games)
            read_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            report = api.strength(PLAYER, db=db, perf="rapid")
            report_s.append(time.perf_counter() - t0)
        n = len(report.games)
        seconds, read = (statistics.median(x) for x in (report_s, read_s))
        return [row("tracker strength, warm (api.strength)", f"{n:,} analysed games",
                    f"{seconds:.3f} s", f"≤ {TARGET_SECONDS:g} s", seconds <= TARGET_SECONDS,
                    f"{summary.evals:,} games with Lichess's evals; {len(games):,} read back "
                    f"({decoded:,} evals decoded); each game's result read from what the cold "
                    "call saved",
                    yardstick=f"read back {read:.3f} s", ratio=f"{seconds / read:.1f}×"),
                row("tracker strength, cold (first call: every game computed and saved)",
                    f"{n:,} analysed games", f"{cold:.3f} s",
                    note="the models loaded too; once per player, perf, level model and "
                    "calibration, and again for a game whose evals change")]


def main(argv: list[str]) -> None:
    for r in run(int(argv[0]) if argv else RUNS):
        print(r)


if __name__ == "__main__":
    main(sys.argv[1:])
