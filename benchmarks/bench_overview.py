"""The dashboard's Overview data with 100k games in the database: one replay report.

Run: ``python -m benchmarks --only overview``. The synthetic NDJSON file of
:data:`benchmarks.synth.NDJSON_PLAYER` is imported into a new SQLite file, then
``tracker.api.replay(player, "blitz")`` (what the Overview page shows: the periods, the Lichess
line, the counts) is timed on an open database, median of 3. Target: ≤ 300 ms.
"""

from __future__ import annotations

import time
from typing import Final

from benchmarks import RUNS, Row, import_in_child, median, row, synth

TARGET_SECONDS: Final = 0.300
PERF: Final = "blitz"


def run(size: int = 100_000, runs: int = RUNS) -> list[Row]:
    from tracker import api
    from tracker.store.db import Store

    db = synth.scratch(f"overview-{size}.db")
    import_in_child(synth.ndjson_file(size), db)
    store = Store(str(db))
    times = []
    report = None
    for _ in range(runs):
        started = time.perf_counter()
        report = api.replay(synth.NDJSON_PLAYER, PERF, db=store)
        times.append(time.perf_counter() - started)
    store.close()
    db.unlink()
    assert report is not None
    seconds = median(times)
    return [row(
        "dashboard Overview data (replay report)", size, f"{seconds * 1000:,.0f} ms",
        f"≤ {TARGET_SECONDS * 1000:.0f} ms", seconds <= TARGET_SECONDS,
        f"{len(report.games):,} {PERF} games, {report.counted:,} counted, "
        f"{len(report.periods)} periods; median of {runs}",
    )]
