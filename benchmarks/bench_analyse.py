"""Benchmark of ``tracker analyse`` on the bundled export (indexinator's blitz games).

Run: ``python -m benchmarks --only analyse`` (or ``python benchmarks/bench_analyse.py
[GAMES]``). The newest ``GAMES`` blitz games (default 12) are analysed at the default node
budget with one job, then the same games again with two jobs (their evals deleted in
between), in ``ROUNDS`` rounds (default 3) so that the load's drift falls on both alike; each
round also runs ``stockfish bench`` (one thread) and two of them at once. Reported:

- **games/s beside the engine's limit**, with one job and with two: the limit is what the
  engine alone could do on these games, ``stockfish bench``'s nodes/s (measured in each round,
  the rounds' median) × jobs ÷ the nodes the engine searched per game in this run; their
  ratio is tracker's share of the engine's speed (targets ≥ 0.9 with one job, ≥ 0.85 with
  two). With two jobs on a machine without two free cores the limit cannot be reached: the
  row also gives the limit at what two ``stockfish bench`` at once got from this machine;
- the engine's own speed: the nodes/s Stockfish reports for these searches against
  ``stockfish bench``'s (small searches run a little slower per node than its benchmark);
- our overhead: the share of the workers' wall time not spent searching (the engine's own
  ``time`` per search against jobs × wall seconds; it holds starting the engines, python-chess,
  reading the games and storing each one);
- two jobs against one on the same games, beside the machine's own two-at-once.

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

from benchmarks import Row, median, row
from tracker import api
from tracker.importing import import_file
from tracker.importing.analyse import AnalyseSummary, run_analyse
from tracker.sources.engine import DEFAULT_NODES, find_engine
from tracker.store.db import Store

GAMES: Final = 12
#: Rounds of one job then two jobs on the same games.
ROUNDS: Final = 3
PLAYER: Final = "indexinator"
TARGET_OVERHEAD: Final = 0.10
TARGET_SPEEDUP: Final = 1.7
#: Games/s against the engine's limit: one job, two jobs.
TARGET_LIMIT_ONE: Final = 0.9
TARGET_LIMIT_TWO: Final = 0.85


def machine_pair(path: str) -> tuple[float, float]:
    """(nodes/s of one ``stockfish bench 16 1 12`` alone, what two at once get against one):
    the pair ratio is 2 × one's wall / the pair's wall, 2.0 with two free cores, 1.0 with one.
    The yardsticks of the jobs' games/s."""
    cmd = [path, "bench", "16", "1", "12"]
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    one = time.perf_counter() - started
    m = re.search(r"Nodes/second\s*:\s*(\d+)", done.stderr + done.stdout)
    started = time.perf_counter()
    pair = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(2)]
    for proc in pair:
        proc.wait(timeout=600)
    return (float(m.group(1)) if m else 0.0), 2 * one / (time.perf_counter() - started)


def pair_row(what: str, size: str, ratios: list[float], machine: list[float], target: float,
             load: str, *, before: str = "", after: str = "") -> Row:
    """The row of two (jobs, workers) against one on the same games: the median of the
    rounds' ``ratios`` beside the machine's own two-at-once (``machine``, one per round,
    :func:`machine_pair`) as its yardstick; ``before``/``after``: more of the note around the
    rounds' figures."""
    speedup, yard = median(ratios), median(machine)
    return row(what, size, f"{speedup:.2f}×", f"≥ {target}× on two free cores",
               speedup >= target, yardstick=f"2 stockfish bench at once: {yard:.2f}×",
               ratio=f"{speedup / yard:.2f} of the machine's",
               note=f"{before}median of {len(ratios)} rounds "
                    f"({', '.join(f'{r:.2f}' for r in sorted(ratios))}; machine "
                    f"{', '.join(f'{r:.2f}' for r in sorted(machine))}){after}; "
                    f"{os.cpu_count()} cores, load {load}")


def _analyse(store: Store, games: int, jobs: int) -> AnalyseSummary:
    return run_analyse(store, PLAYER, perf="blitz", last=games, nodes=DEFAULT_NODES, jobs=jobs)


def run(games: int = GAMES, rounds: int = ROUNDS) -> list[Row]:
    """``rounds`` rounds, each analysing the same ``games`` games with one job, then with two
    (their evals deleted after each run), then measuring ``stockfish bench`` alone and two at
    once: on a shared machine the load drifts, and runs side by side see about the same."""
    engine = find_engine()
    ones: list[AnalyseSummary] = []
    twos: list[AnalyseSummary] = []
    benches: list[float] = []
    machine: list[float] = []
    with tempfile.TemporaryDirectory(prefix="tracker-bench-analyse-") as tmp:
        store = Store(str(Path(tmp) / "bench.db"))
        import_file(api.demo_file(), store=store, user=PLAYER)
        for _ in range(rounds):
            for jobs, out in ((1, ones), (2, twos)):
                out.append(_analyse(store, games, jobs))
                with store.engine.begin() as conn:
                    conn.exec_driver_sql("DELETE FROM game_analysis")
            nps, pair = machine_pair(engine)
            benches.append(nps)
            machine.append(pair)
        store.close()
    bench_nps = median(benches)
    yard = median(machine)
    load = f"{os.getloadavg()[0]:.1f}"
    done = games * rounds

    def totals(runs: list[AnalyseSummary]) -> tuple[float, int, int, float, int]:
        return (sum(x.seconds for x in runs), sum(x.spent.positions for x in runs),
                sum(x.spent.nodes for x in runs), sum(x.spent.seconds for x in runs),
                sum(x.spent.followed for x in runs))

    one_s, positions, nodes, searching, followed = totals(ones)
    two_s, _, two_nodes, two_searching, _ = totals(twos)
    own_nps = nodes / searching if searching else 0.0
    overhead = 1 - searching / one_s if one_s else 0.0
    overhead_two = 1 - two_searching / (2 * two_s) if two_s else 0.0
    ratios = [a.seconds / b.seconds for a, b in zip(ones, twos, strict=True)]
    label = f"{games} games × {rounds}, {positions:,} positions"
    budget = f"{DEFAULT_NODES:,} nodes a position"
    rows: list[Row] = []
    for jobs, seconds, searched, target in ((1, one_s, nodes, TARGET_LIMIT_ONE),
                                             (2, two_s, two_nodes, TARGET_LIMIT_TWO)):
        rate = done / seconds if seconds else 0.0
        per_game = searched / done
        limit = bench_nps * jobs / per_game if per_game else 0.0
        share = rate / limit if limit else 0.0
        note = (f"{budget}; {per_game:,.0f} nodes a game; {ones[0].engine}; {seconds:.1f} s; "
                f"load {load}")
        if jobs == 2:
            reachable = limit * yard / 2
            note += (f"; this machine gave two stockfish bench at once {yard:.2f}× one: at "
                     f"that limit ({reachable:.3f} games/s) the ratio is "
                     f"{rate / reachable if reachable else 0.0:.2f}")
        else:
            note += f"; {followed} positions along found mates not searched"
        rows.append(row(f"tracker analyse, default budget, {jobs} job{'s' if jobs > 1 else ''}",
                        label, f"{rate:.3f} games/s", f"≥ {target} of the limit",
                        share >= target, note=note,
                        yardstick=f"limit {limit:.3f} games/s (stockfish bench "
                                  f"{bench_nps:,.0f} nodes/s × {jobs} ÷ nodes a game)",
                        ratio=f"{share:.2f}"))
    rows += [
        row("the engine's own speed in these searches", done, f"{own_nps:,.0f} nodes/s",
            yardstick=f"stockfish bench: {bench_nps:,.0f} nodes/s",
            ratio=f"{own_nps / bench_nps:.2f}" if bench_nps else "",
            note="nodes and time as Stockfish reports them for each search; bench: median "
                 f"of {', '.join(f'{b:,.0f}' for b in benches)}"),
        row("our overhead (time not in the engine), 1 job", label, f"{overhead:.1%}",
            f"≤ {TARGET_OVERHEAD:.0%}", overhead <= TARGET_OVERHEAD,
            note=f"2 jobs: {overhead_two:.1%} of 2 × wall"),
        pair_row("2 jobs against 1 job, same games", label, ratios, machine, TARGET_SPEEDUP,
                 load, after=f"; 1 job {one_s:.0f} s, 2 jobs {two_s:.0f} s"),
    ]
    return rows


def main(argv: list[str]) -> None:
    from benchmarks.__main__ import format_text

    started = time.perf_counter()
    rows = run(int(argv[0]) if argv else GAMES)
    print(format_text(rows))
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
