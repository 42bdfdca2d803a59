"""Peak memory of ``tracker analyse --group``: ``python -m benchmarks --only analyse-memory``
(or ``python -m benchmarks.bench_analyse_memory``).

A club of the bundled player and every player of the test fixtures (indexinator's export and
its later games, cmrade's PGN, reda46's rapid games and the 2,000 analysed rapid games without
their evals, the 2013 dump's first 50 games: ~5,000 games to analyse) is imported into a new
SQLite file, then analysed as one group (one job, the smallest budget) in a fresh process
until the first game is stored; that process reports the peak of Python's allocations during
the run (``tracemalloc``) and its peak resident set (``VmHWM``) before and after it. The
engine's own process is not counted: only tracker's side grows with the club. Then the same
for indexinator alone, for the growth with the games asked for.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any, Final

from benchmarks import Row, peak_mb, row
from tracker.core.exact import plural

ROOT: Final = Path(__file__).resolve().parent.parent
FIXTURES: Final = ROOT / "tests" / "fixtures"
LICHESS: Final = FIXTURES / "lichess"
#: The fixtures imported, and whether their evals are dropped first (so that they need the
#: engine, as most games do).
FILES: Final = ((LICHESS / "indexinator-2023-04_2025-10.ndjson", False),
                (LICHESS / "indexinator-2025-10-later.ndjson", False),
                (LICHESS / "cmrade-2018-07_2020-11.pgn", False),
                (LICHESS / "lichess_db_standard_rated_2013-01-first50.pgn", False),
                (LICHESS / "analysed-reda46-rapid.ndjson", True),
                (FIXTURES / "analysed" / "lichess-rapid-analysed-first2000.ndjson.zst", True))


def _bare(path: Path, folder: Path) -> Path:
    """``path`` (NDJSON, plain or zstd) without its evals, as a plain file in ``folder``."""
    import zstandard

    out = folder / (path.name.split(".")[0] + "-bare.ndjson")
    opened = (zstandard.open(path, "rt", encoding="utf-8") if path.suffix == ".zst"
              else path.open(encoding="utf-8"))
    with opened as lines, out.open("w", encoding="utf-8") as f:
        for line in lines:
            if line.strip():
                obj = json.loads(line)
                obj.pop("analysis", None)
                f.write(json.dumps(obj) + "\n")
    return out


def build(db: Path) -> list[str]:
    """Import the fixtures into the SQLite file ``db``; every player with games (the club)."""
    from sqlalchemy import text

    from tracker.importing import import_file
    from tracker.store.db import Store

    with tempfile.TemporaryDirectory() as tmp, Store(str(db)) as store:
        for path, bare in FILES:
            import_file(_bare(path, Path(tmp)) if bare else path, store=store)
        with store.engine.connect() as conn:
            return [u for (u,) in conn.execute(text(
                "SELECT DISTINCT user_id FROM game_sides WHERE user_id IS NOT NULL "
                "ORDER BY user_id"))]


def measure(db: str, members: list[str]) -> dict[str, Any]:
    """In this process: the group's analysis up to its first stored game."""
    from tracker.importing.analyse import run_analyse
    from tracker.sources.engine import MIN_NODES
    from tracker.store.db import Store

    with Store(db) as store:
        stop = threading.Event()
        seen: list[int] = []

        def progress(done: int, total: int) -> None:
            seen.append(total)
            if done >= 1:
                stop.set()

        before = peak_mb()
        tracemalloc.start()
        started = time.perf_counter()
        summary = run_analyse(store, "club", nodes=MIN_NODES, jobs=1, stop=stop,
                              progress=progress, members=members)
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return {"games": summary.asked - summary.had_evals, "members": len(members),
            "traced_mb": peak / 2**20, "rss_before_mb": before, "rss_after_mb": peak_mb(),
            "seconds": seconds, "analysed": summary.analysed}


def _child(db: Path, members: list[str]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_analyse_memory", "--child", str(db),
         *members], capture_output=True, text=True, check=True, cwd=ROOT)
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def run() -> list[Row]:
    """Both runs, each in a fresh process. Raises EngineMissingError without an engine."""
    from tracker.sources.engine import find_engine

    find_engine()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "club.db"
        club = build(db)
        for label, members in (("indexinator alone", ["indexinator"]),
                               ("the club (bundled player + fixtures)", club)):
            r = _child(db, members)
            rows.append(row(
                f"tracker analyse --group, peak memory: {label}",
                f"{r['games']:,} games, {plural(r['members'], 'member', ',')}",
                f"{r['traced_mb']:.1f} MB traced",
                note=f"resident {r['rss_before_mb']:.0f} → {r['rss_after_mb']:.0f} MB; first "
                     f"game stored after {r['seconds']:.1f} s"))
    return rows


def main(argv: list[str]) -> None:
    if argv and argv[0] == "--child":
        print(json.dumps(measure(argv[1], argv[2:])))
        return
    from benchmarks import format_text

    print(format_text(run()))


if __name__ == "__main__":
    main(sys.argv[1:])
