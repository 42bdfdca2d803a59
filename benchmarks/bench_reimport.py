"""Re-import of an already imported file (every game a duplicate) against the first import.

Run: ``python -m benchmarks --only reimport``. Each run imports the synthetic NDJSON file
(:func:`benchmarks.synth.ndjson_file`) into a new SQLite file and then imports it again in the
same process; the figure is the median of (second import time / first import time).
Target: ≤ 30%.
"""

from __future__ import annotations

from typing import Final

from benchmarks import RUNS, Row, import_in_child, median, row, synth

TARGET_RATIO: Final = 0.30


def run(size: int = 100_000, runs: int = RUNS) -> list[Row]:
    path = synth.ndjson_file(size)
    ratios, firsts, agains = [], [], []
    for i in range(runs):
        db = synth.scratch(f"reimport-{size}-{i}.db")
        r = import_in_child(path, db, repeat=2)
        if (r["new"][1], r["unchanged"][1]) != (0, size):
            raise RuntimeError(f"re-import stored new games: {r}")
        first, again = r["seconds"]
        ratios.append(again / first)
        firsts.append(first)
        agains.append(again)
        db.unlink()
    ratio = median(ratios)
    return [row(
        "re-import of an imported file (all duplicates)", size,
        f"{ratio:.0%} of the first import", f"≤ {TARGET_RATIO:.0%}", ratio <= TARGET_RATIO,
        f"{median(agains):.2f} s vs {median(firsts):.2f} s, median of {runs}",
    )]
