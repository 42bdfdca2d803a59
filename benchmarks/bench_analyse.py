"""Benchmark of ``tracker analyse`` on the bundled export (indexinator's blitz games).

Run: ``python -m benchmarks --only analyse`` (or ``python benchmarks/bench_analyse.py
[GAMES]``). The newest ``GAMES`` blitz games (default 4) are analysed at the default node
budget with one job, then the same games again with two jobs (their evals deleted in
between), in ``ROUNDS`` rounds (default 3) so that the load's drift falls on both alike.
Reported:

- games/s and positions/s at the default budget, one job;
- the engine's own speed: the nodes/s Stockfish reports for these searches, and the nodes/s of
  ``stockfish bench`` (its built-in benchmark, one thread) as its yardstick;
- our overhead: the share of the workers' wall time not spent searching (the engine's own
  ``time`` per search against jobs × wall seconds; it holds starting the engines, python-chess,
  reading the games and storing each one): target ≤ 10 %;
- two jobs against one on the same games: target ≥ 1.7× on two free cores; its yardstick,
  measured after each round: what two processes at once get from this machine against one
  (two ``stockfish bench`` together against one alone: 2.0 with two free cores).

The machine's load is printed with the table: on a shared machine two jobs cannot find two
free cores, and the ratio says so.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

from benchmarks import Row, row
from tracker import api
from tracker.importing import import_file
from tracker.importing.analyse import AnalyseSummary, run_analyse
from tracker.sources.engine import DEFAULT_NODES, find_engine
from tracker.store.db import Store

GAMES: Final = 4
#: Rounds of one job then two jobs on the same games.
ROUNDS: Final = 3
PLAYER: Final = "indexinator"
TARGET_OVERHEAD: Final = 0.10
TARGET_SPEEDUP: Final = 1.7


def stockfish_bench(path: str) -> float | None:
    """Nodes/s of ``stockfish bench 16 1 12`` (hash 16 MB, one thread, depth 12), or
    ``None`` where the engine has no ``bench``."""
    try:
        done = subprocess.run([path, "bench", "16", "1", "12"], capture_output=True, text=True,
                              timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"Nodes/second\s*:\s*(\d+)", done.stderr + done.stdout)
    return float(m.group(1)) if m else None


def machine_pair_ratio(path: str) -> float:
    """What two processes at once get from this machine against one: the throughput of two
    ``stockfish bench 16 1 11`` run together against one alone (2 × one's wall / the pair's
    wall): 2.0 with two free cores, 1.0 with one. The yardstick of the jobs' ratio."""
    cmd = [path, "bench", "16", "1", "11"]
    started = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=False, timeout=600)
    one = time.perf_counter() - started
    started = time.perf_counter()
    pair = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(2)]
    for proc in pair:
        proc.wait(timeout=600)
    return 2 * one / (time.perf_counter() - started)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _analyse(store: Store, games: int, jobs: int) -> AnalyseSummary:
    return run_analyse(store, PLAYER, perf="blitz", last=games, nodes=DEFAULT_NODES, jobs=jobs)


def run(games: int = GAMES, rounds: int = ROUNDS) -> list[Row]:
    """``rounds`` rounds, each analysing the same ``games`` games with one job, then with two
    (their evals deleted after each run): on a shared machine the load drifts, and runs side by
    side see about the same. The ratio is the median of the rounds' ratios."""
    engine = find_engine()
    ones: list[AnalyseSummary] = []
    twos: list[AnalyseSummary] = []
    machine: list[float] = []
    with tempfile.TemporaryDirectory(prefix="tracker-bench-analyse-") as tmp:
        store = Store(str(Path(tmp) / "bench.db"))
        import_file(api.demo_file(), store=store, user=PLAYER)
        for _ in range(rounds):
            for jobs, out in ((1, ones), (2, twos)):
                out.append(_analyse(store, games, jobs))
                with store.engine.begin() as conn:
                    conn.exec_driver_sql("DELETE FROM game_analysis")
            machine.append(machine_pair_ratio(engine))
        store.close()
    bench_nps = stockfish_bench(engine)
    one_s = sum(x.seconds for x in ones)
    positions = sum(x.spent.positions for x in ones)
    nodes = sum(x.spent.nodes for x in ones)
    searching = sum(x.spent.seconds for x in ones)
    own_nps = nodes / searching if searching else 0.0
    overhead = 1 - searching / one_s if one_s else 0.0
    two_searching = sum(x.spent.seconds for x in twos)
    two_s = sum(x.seconds for x in twos)
    overhead_two = 1 - two_searching / (2 * two_s) if two_s else 0.0
    ratios = sorted(a.seconds / b.seconds for a, b in zip(ones, twos, strict=True))
    speedup = _median(ratios)
    yard = _median(machine)
    load = f"{os.getloadavg()[0]:.1f}"
    label = f"{games} games × {rounds}, {positions:,} positions"
    return [
        row("tracker analyse, default budget, 1 job", games * rounds,
            f"{games * rounds / one_s:.3f} games/s",
            note=f"{positions / one_s:.2f} positions/s; {DEFAULT_NODES:,} nodes a position; "
                 f"{ones[0].engine}; {one_s:.1f} s; load {load}"),
        row("the engine's own speed in these searches", games * rounds,
            f"{own_nps:,.0f} nodes/s",
            yardstick=f"stockfish bench: {bench_nps:,.0f} nodes/s" if bench_nps else "",
            ratio=f"{own_nps / bench_nps:.2f}" if bench_nps else "",
            note="nodes and time as Stockfish reports them for each search"),
        row("our overhead (time not in the engine), 1 job", label, f"{overhead:.1%}",
            f"≤ {TARGET_OVERHEAD:.0%}", overhead <= TARGET_OVERHEAD,
            note=f"2 jobs: {overhead_two:.1%} of 2 × wall"),
        row("2 jobs against 1 job, same games", label, f"{speedup:.2f}×",
            f"≥ {TARGET_SPEEDUP}× on two free cores", speedup >= TARGET_SPEEDUP,
            yardstick=f"2 stockfish bench at once: {yard:.2f}×",
            ratio=f"{speedup / yard:.2f} of the machine's",
            note=f"median of {rounds} rounds ({', '.join(f'{r:.2f}' for r in ratios)}; "
                 f"machine {', '.join(f'{r:.2f}' for r in sorted(machine))}); 1 job "
                 f"{one_s:.0f} s, 2 jobs {two_s:.0f} s; {os.cpu_count()} cores, load {load}"),
    ]


def main(argv: list[str]) -> None:
    from benchmarks.__main__ import format_text

    started = time.perf_counter()
    rows = run(int(argv[0]) if argv else GAMES)
    print(format_text(rows))
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
