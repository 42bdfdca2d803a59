"""How fast the ``tracker`` command answers: ``--help``, ``calc`` and ``replay`` on a small
database, each run as a user runs it (a new process through the installed entry point).

    python benchmarks/bench_cli_startup.py         # prints the figures
    python -m benchmarks --only cli                # the same rows in the shared table

Figures: the median and best wall time of 7 runs, and the median CPU time (user + system of
the child). On a machine shared with other jobs the wall time grows with the load; the CPU
time does not, so it is given beside it. Targets (issue 13): ``--help`` and ``calc`` under
0.3 s, ``replay`` of a small history under 0.8 s. The replay database is the cmrade fixture
(474 games), imported once into a temporary file.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

from benchmarks import Row, row

ROOT: Final = Path(__file__).resolve().parent.parent
CMRADE: Final = ROOT / "tests" / "fixtures" / "lichess" / "cmrade-2018-07_2020-11.pgn"
RUNS: Final = 7


def tracker_command() -> list[str]:
    """The installed ``tracker`` script beside this Python, else ``python -m tracker.cli``."""
    script = Path(sys.executable).with_name("tracker")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "tracker.cli"]


def timed(args: list[str], runs: int = RUNS) -> tuple[float, float, float]:
    """(median wall, best wall, median CPU) seconds of ``tracker ARGS`` run ``runs`` times."""
    walls: list[float] = []
    cpus: list[float] = []
    # As a user's machine runs it: Python writes its bytecode cache on the first run and reads
    # it after (a CI or sandbox may set PYTHONDONTWRITEBYTECODE, which recompiles every module
    # of the package on every run); the first run warms that cache and the disk, untimed.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    subprocess.run([*tracker_command(), *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env)
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([*tracker_command(), *args], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=env)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), min(walls), statistics.median(cpus)


def run() -> list[Row]:
    tmp = Path(tempfile.mkdtemp(prefix="tracker-bench-cli-"))
    try:
        db = tmp / "cmrade.db"
        subprocess.run([*tracker_command(), "--db", str(db), "import-file", str(CMRADE),
                        "--user", "cmrade"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        cases = [
            ("tracker --help", ["--help"], 0.3),
            ("tracker calc (3 games)", ["calc", "1700:1", "1600:0.5", "1550:0", "--rating",
                                        "1500", "--k", "20"], 0.3),
            ("tracker replay (474-game history, bullet)",
             ["--db", str(db), "replay", "cmrade", "--perf", "bullet"], 0.8),
        ]
        out = []
        for name, args, target in cases:
            wall, best, cpu = timed(args)
            out.append(row(name, "-", f"{wall:.2f} s", f"< {target} s", wall < target,
                           f"best {best:.2f} s, CPU {cpu:.2f} s (median of {RUNS})"))
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    load = os.getloadavg()[0]
    print(f"tracker start-up, {RUNS} runs each, load average {load:.1f}")
    for r in run():
        print(f"  {r['what']:<44} {r['figure']:>7}  target {r['target']:<8} {r['result']:<4}"
              f"  {r['note']}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
