"""How fast the ``tracker`` command answers: ``--help``, ``calc`` and ``replay`` on a small
database, and ``import-file`` of a one-game file into a new database (its fixed cost: imports,
creating the database), each run as a user runs it (a new process through the installed entry
point).

    python benchmarks/bench_cli_startup.py         # prints the figures
    python -m benchmarks --only cli                # the same rows in the shared table

Figures: the median and best wall time of 7 runs, and the median CPU time (user + system of
the child). On a machine shared with other jobs the wall time grows with the load; the CPU
time does not, so it is given beside it. Targets (issue 13): ``--help`` and ``calc`` under
0.3 s, ``replay`` of a small history under 0.8 s. The replay database is the cmrade fixture
(474 games), imported once into a temporary file.

The ``import-file`` row is measured against a yardstick in the same run, alternated with it: a
bare ``python -c "import sqlite3"`` process (the interpreter's own start and the SQLite driver,
which any importer pays); the ratio is the command's fixed cost in units of that start.
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
    """The installed ``tracker`` script beside this Python, else ``python -m
    tracker.cli.commands``."""
    script = Path(sys.executable).with_name("tracker")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "tracker.cli.commands"]


def _env() -> dict[str, str]:
    """The environment of a timed child: as a user's machine runs it, Python writes its
    bytecode cache on the first run and reads it after (a CI or sandbox may set
    PYTHONDONTWRITEBYTECODE, which recompiles every module of the package on every run)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    return env


def _child(args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one new process ``args``, its output thrown away."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=_env())
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def timed(args: list[str], runs: int = RUNS) -> tuple[float, float, float]:
    """(median wall, best wall, median CPU) seconds of ``tracker ARGS`` run ``runs`` times,
    after a first untimed run that warms the bytecode cache and the disk."""
    _child([*tracker_command(), *args])
    times = [_child([*tracker_command(), *args]) for _ in range(runs)]
    walls = [w for w, _ in times]
    return statistics.median(walls), min(walls), statistics.median(c for _, c in times)


def first_game(src: Path, dest: Path) -> Path:
    """The first game of the PGN file ``src`` written alone to ``dest``."""
    text = src.read_text(encoding="utf-8")
    second = text.find("\n[Event ", text.find("\n\n1.") + 1)
    dest.write_text(text[:second].rstrip() + "\n", encoding="utf-8")
    return dest


def import_into_new_db(tmp: Path, runs: int = RUNS) -> Row:
    """``tracker import-file ONE_GAME.pgn --json`` into a database that does not exist yet,
    against ``python -c "import sqlite3"``, alternated, ``runs`` times each after one untimed
    pair (the bytecode cache)."""
    game = first_game(CMRADE, tmp / "one-game.pgn")
    yard: list[tuple[float, float]] = []
    cmd: list[tuple[float, float]] = []
    for i in range(runs + 1):
        y = _child([sys.executable, "-c", "import sqlite3"])
        c = _child([*tracker_command(), "--db", str(tmp / f"new-{i}.db"), "import-file",
                    str(game), "--json"])
        if i:
            yard.append(y)
            cmd.append(c)
    wall, ywall = statistics.median(w for w, _ in cmd), statistics.median(w for w, _ in yard)
    cpu, ycpu = statistics.median(c for _, c in cmd), statistics.median(c for _, c in yard)
    return row("tracker import-file (1 game) into a new database, whole process", 1,
               f"{wall:.2f} s", "report it",
               note=(f"best {min(w for w, _ in cmd):.2f} s; CPU {cpu:.2f} s vs {ycpu:.3f} s = "
                     f"{cpu / ycpu:.1f}x (median of {runs}, alternated)"),
               yardstick=f'python -c "import sqlite3": {ywall:.3f} s',
               ratio=f"{wall / ywall:.1f}x")


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
        out.append(import_into_new_db(tmp))
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    load = os.getloadavg()[0]
    print(f"tracker start-up, {RUNS} runs each, load average {load:.1f}")
    for r in run():
        against = f"  vs {r['yardstick']} = {r['ratio']}" if r["yardstick"] else ""
        print(f"  {r['what']:<44} {r['figure']:>7}  target {r['target']:<8} {r['result']:<4}"
              f"  {r['note']}{against}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
