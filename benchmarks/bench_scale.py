"""The replay report on the FIDE scale with 100k games: ``--scale all`` against one scale.

Run: ``python -m benchmarks --only scale`` (or ``python benchmarks/bench_scale.py [SIZE]``).
The synthetic NDJSON file of :data:`benchmarks.synth.NDJSON_PLAYER` is imported into a new
SQLite file, then ``tracker.api.replay(player, "blitz", scale=…)`` is timed on an open
database for ``lichess`` (no model), ``lebowitz`` (one model) and ``all`` (every model covering
blitz: lebowitz and mathtuition), median of 3 each. Target: ``all`` within 4× of a
single-scale replay (compared with ``lichess`` and with ``lebowitz``).
"""

from __future__ import annotations

import sys
import time
from typing import Final

from benchmarks import RUNS, Row, import_in_child, median, row, synth

PERF: Final = "blitz"
SCALES: Final = ("lichess", "lebowitz", "all")
#: ``all`` may take at most this many times a single-scale replay.
TARGET_RATIO: Final = 4.0


def run(size: int = 100_000, runs: int = RUNS) -> list[Row]:
    from tracker import api
    from tracker.store.db import Store

    db = synth.scratch(f"scale-{size}.db")
    import_in_child(synth.ndjson_file(size), db)
    store = Store(str(db))
    seconds: dict[str, float] = {}
    counted: dict[str, int] = {}
    try:
        for scale in SCALES:
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                report = api.replay(synth.NDJSON_PLAYER, PERF, db=store, scale=scale)
                times.append(time.perf_counter() - started)
            seconds[scale] = median(times)
            counted[scale] = report.counted
    finally:
        store.close()
        db.unlink()
    out = [row(f"replay report, --scale {scale}", size, f"{seconds[scale] * 1000:,.0f} ms",
               note=f"{counted[scale]:,} {PERF} games counted; median of {runs}")
           for scale in SCALES]
    for single in ("lichess", "lebowitz"):
        ratio = seconds["all"] / seconds[single]
        out.append(row(f"--scale all vs --scale {single}", size, f"{ratio:.2f}×",
                       f"≤ {TARGET_RATIO:g}×", ratio <= TARGET_RATIO,
                       "all = lebowitz + mathtuition"))
    return out


def main(argv: list[str]) -> int:
    size = int(argv[0].replace("_", "")) if argv else 100_000
    rows = run(size)
    for r in rows:
        print(f"{r['what']:<40} {r['size']:>5} {r['figure']:>10} {r['target']:>8} "
              f"{r['result']:>4}  {r['note']}")
    return 0 if all(r["result"] != "MISS" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
