"""NDJSON file → SQLite: games per second, database size, and our share of a real import.

Run: ``python -m benchmarks --only ndjson``. The file is a synthetic Lichess export
(:func:`benchmarks.synth.ndjson_file`); each run imports it into a new SQLite file in a fresh
process, timing :func:`tracker.importing.import_file` alone. Target: ≥ 20,000 games/s.

The same runs give the database size per 100k games (raw records kept, WAL checkpointed) and
the ratio of our import time to the time Lichess takes to stream those games to a client
(20 games/s for an anonymous download, 60 games/s logged in): our share of a real import.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from benchmarks import RUNS, Row, row, size_label, synth, timed_imports

TARGET_GAMES_PER_SECOND: Final = 20_000
#: Games per second Lichess streams ``/api/games/user`` at: anonymous, and logged in.
LICHESS_STREAM_RATES: Final = (20, 60)
#: Sizes above this get one run, not :data:`RUNS` (a 1M import takes a minute or more).
ONE_RUN_ABOVE: Final = 100_000


def run(sizes: Sequence[int] = (10_000, 100_000, 1_000_000), runs: int = RUNS) -> list[Row]:
    rows: list[Row] = []
    sized: dict[int, tuple[float, int]] = {}  # games → (median seconds, database bytes)
    for n in sizes:
        k = 1 if n > ONE_RUN_ABOVE else runs
        seconds, size = timed_imports(synth.ndjson_file(n), n, k, "ndjson")
        rate = n / seconds
        sized[n] = (seconds, size)
        rows.append(row(
            "NDJSON file → SQLite", n, f"{rate:,.0f} games/s",
            f"≥ {TARGET_GAMES_PER_SECOND:,} games/s", rate >= TARGET_GAMES_PER_SECOND,
            f"{seconds:.2f} s" + (f", median of {k}" if k > 1 else ", 1 run"),
        ))
    if sized:
        n = 100_000 if 100_000 in sized else max(sized)
        seconds, size = sized[n]
        rows.append(row(
            "database size per 100k games (raw kept)", n, f"{size * 100_000 / n / 1e6:,.1f} MB",
            note=f"{size / n:,.0f} bytes/game; the NDJSON is "
                 f"{synth.ndjson_file(n).stat().st_size * 100_000 / n / 1e6:,.0f} MB per 100k",
        ))
        shares = [seconds / (n / rate) for rate in LICHESS_STREAM_RATES]
        rows.append(row(
            "our share of a real import's time", n,
            " / ".join(f"{s:.2%}" for s in shares), note=(
                f"{seconds:.1f} s against Lichess streaming {size_label(n)} games at "
                + " / ".join(f"{r} games/s ({n / r / 3600:,.1f} h)" for r in LICHESS_STREAM_RATES)
            ),
        ))
    return rows
