"""Peak memory of an import, at two sizes: it must stay under 300 MB and not grow with the input.

Run: ``python -m benchmarks --only memory``. Each size is imported once into a new SQLite file
by a fresh process; the figure is that process's maximum resident set size
(``VmHWM``, :func:`benchmarks.peak_mb`), interpreter and libraries included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from benchmarks import Row, import_in_child, row, size_label, synth

TARGET_MB: Final = 300
#: "Flat": the largest input may cost at most this much more than the smallest, in MB.
FLAT_MARGIN_MB: Final = 30


def run(sizes: Sequence[int] = (100_000, 1_000_000)) -> list[Row]:
    rows: list[Row] = []
    peaks: dict[int, float] = {}
    for n in sizes:
        db = synth.scratch(f"memory-{n}.db")
        r = import_in_child(synth.ndjson_file(n), db)
        db.unlink()
        peaks[n] = r["peak_mb"]
        rows.append(row(
            "peak memory, NDJSON import", n, f"{r['peak_mb']:,.0f} MB", f"≤ {TARGET_MB} MB",
            r["peak_mb"] <= TARGET_MB,
            f"{r['base_mb']:,.0f} MB before importing; {n / r['seconds'][0]:,.0f} games/s",
        ))
    if len(peaks) >= 2:
        small, large = min(peaks), max(peaks)
        growth = peaks[large] - peaks[small]
        rows.append(row(
            "peak memory growth with input size", f"{size_label(small)}→{size_label(large)}",
            f"{growth:+,.0f} MB", f"flat (≤ +{FLAT_MARGIN_MB} MB)", growth <= FLAT_MARGIN_MB,
            f"{large // small}× the games",
        ))
    return rows
