"""``python -m benchmarks``: the performance targets, one table, the machine it ran on.

    python -m benchmarks                   # the targets at 100k and 1M games (~25 min)
    python -m benchmarks --quick           # the targets at 10k games, small dumps (~3 min)
    python -m benchmarks --quick --step ndjson,overview   # some of the targets only
    python -m benchmarks --all             # the targets and every other benchmark
    python -m benchmarks --only ndjson,peers --max-size 100000
    python -m benchmarks --markdown        # the table as Markdown (for docs/performance.md)

Each target row has its figure, the yardstick measured in the same run (runs alternate), their
ratio, the target and PASS/MISS (:mod:`benchmarks.bench_targets`). Figures are medians of 3 runs
(1 run for the 1M-game imports). Inputs are synthesised on first use under
``benchmarks/.data/`` (git-ignored); delete that folder to start afresh.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from benchmarks import (
    COLUMNS,
    RUNS,
    Row,
    child_import,
    format_markdown,
    format_text,
    machine,
    row,
)

Bench = Callable[[bool, int], list[Row]]


def _sizes(quick: bool, full: Sequence[int], cap: int) -> list[int]:
    sizes = [10_000] if quick else [n for n in full if n <= cap]
    return sizes or [min(full)]


#: ``--step`` of the targets benchmark (all when empty).
_STEPS: list[str] = []


def _targets(quick: bool, cap: int) -> list[Row]:
    from benchmarks import bench_targets

    return bench_targets.run(quick, cap, only=lambda step: not _STEPS or step in _STEPS)


def _ndjson(quick: bool, cap: int) -> list[Row]:
    from benchmarks import bench_ndjson_import

    return bench_ndjson_import.run(_sizes(quick, (10_000, 100_000, 1_000_000), cap))


def _reimport(quick: bool, cap: int) -> list[Row]:
    from benchmarks import bench_reimport

    return bench_reimport.run(_sizes(quick, (100_000,), cap)[-1])


def _memory(quick: bool, cap: int) -> list[Row]:
    from benchmarks import bench_memory

    return bench_memory.run(_sizes(quick, (100_000, 1_000_000), cap))


def _overview(quick: bool, cap: int) -> list[Row]:
    from benchmarks import bench_overview

    return bench_overview.run(_sizes(quick, (100_000,), cap)[-1])


def _scale(quick: bool, cap: int) -> list[Row]:
    from benchmarks import bench_scale

    return bench_scale.run(_sizes(quick, (100_000,), cap)[-1])


def _peers(quick: bool, cap: int) -> list[Row]:
    from benchmarks import bench_peers

    return bench_peers.run(_sizes(quick, (10_000, 100_000), cap), side_by_side=10_000)


def _foreign(module: str) -> Any:
    """Another engineer's benchmark module, or ``None`` when it is not there (yet)."""
    try:
        mod = importlib.import_module(f"benchmarks.{module}")
    except ModuleNotFoundError as exc:
        if exc.name == f"benchmarks.{module}":
            return None
        raise
    return mod if callable(getattr(mod, "run", None)) else None


def _replay(quick: bool, cap: int) -> list[Row]:
    mod = _foreign("bench_replay")
    if mod is None:
        return [row("replay of counted games (engine)", "-", "not run", note=_MISSING)]
    out = []
    for r in mod.run(_sizes(quick, (100_000, 1_000_000), cap)):
        out.append(row(
            "replay of counted games (engine)", int(r["games"]), f"{r['seconds']:.3f} s",
            f"≤ {r['target_seconds']:g} s", bool(r["passed"]),
            f"{r['games_per_second']:,.0f} games/s, {r['periods']:,} periods",
        ))
    return out


def _api(quick: bool, cap: int) -> list[Row]:
    mod = _foreign("bench_api_import")
    if mod is None:
        return [row("local Lichess server → SQLite", "-", "not run", note=_MISSING)]
    out = []
    for r in mod.run(_sizes(quick, (100_000,), cap)):
        out.append(row(
            "local Lichess server → SQLite (no throttle)", int(r["games"]),
            f"{r['games_per_second']:,.0f} games/s", f"≥ {r['target_games_per_second']:,} games/s",
            bool(r["passed"]), f"{r['seconds']:.2f} s, median",
        ))
    return out


def _pgn(quick: bool, cap: int) -> list[Row]:
    mod = _foreign("bench_pgn_import")
    if mod is None:
        return [row("PGN import and dump filtering", "-", "not run", note=_MISSING)]
    kwargs = {"games": 10_000, "dump_mb": 100, "worst_mb": 50} if quick or cap < 1_000_000 else {}
    out = []
    for r in mod.run(**kwargs):
        unit = str(r["unit"])
        value = f"{float(r['value']):,.0f} {unit}"
        op = "≥" if r["op"] == ">=" else "<"
        out.append(row(str(r["name"]), "-", value, f"{op} {float(r['target']):,.0f} {unit}",
                       bool(r["passed"]), str(r["detail"])))
    return out


def _dashboard(quick: bool, cap: int) -> list[Row]:
    mod = _foreign("bench_dashboard")
    if mod is None:
        return [row("dashboard pages", "-", "not run",
                    note="benchmarks/bench_dashboard.py has no run() yet: "
                         "python benchmarks/bench_dashboard.py runs it alone")]
    out = []
    takes_size = "size" in inspect.signature(mod.run).parameters
    for r in mod.run(size=10_000) if quick and takes_size else mod.run():
        if "what" in r and "figure" in r:  # already a row of this table
            out.append(Row(**{c: str(r.get(c, "")) for c in COLUMNS}))  # type: ignore[typeddict-item]
            continue
        out.append(row(str(r.get("name", r.get("benchmark", "dashboard"))), "-",
                       json.dumps({k: v for k, v in r.items() if k not in ("name", "passed")},
                                  default=str)[:80],
                       "", r.get("passed") if isinstance(r.get("passed"), bool) else None))
    return out


def _groups(quick: bool, cap: int) -> list[Row]:
    from benchmarks import bench_groups

    return bench_groups.run(200, 200 if quick or cap < 400_000 else 2000)


def _cli(quick: bool, cap: int) -> list[Row]:
    from benchmarks import bench_cli_startup

    return bench_cli_startup.run()


def _analyse(quick: bool, cap: int) -> list[Row]:
    from benchmarks import bench_analyse
    from tracker.sources.engine import EngineMissingError

    try:
        return bench_analyse.run(2 if quick else bench_analyse.GAMES,
                                 1 if quick else bench_analyse.ROUNDS)
    except EngineMissingError as exc:
        return [row("tracker analyse (local engine)", "-", "not run", note=str(exc))]


def _structs(_quick: bool, _cap: int) -> list[Row]:
    from benchmarks import bench_structs

    return bench_structs.run()


def _strength(quick: bool, cap: int) -> list[Row]:
    from benchmarks import bench_strength

    return bench_strength.run(1 if quick else RUNS)
def _workers(quick: bool, cap: int) -> list[Row]:
    from benchmarks import bench_workers
    from tracker.sources.engine import EngineMissingError

    try:
        return (bench_workers.run(6, 20_000, 1) if quick else bench_workers.run())
    except EngineMissingError as exc:
        return [row("analyse --worker (local engine)", "-", "not run", note=str(exc))]


def _analyse_memory(_quick: bool, _cap: int) -> list[Row]:
    from benchmarks import bench_analyse_memory
    from tracker.sources.engine import EngineMissingError

    try:
        return bench_analyse_memory.run()
    except EngineMissingError as exc:
        return [row("tracker analyse --group, peak memory", "-", "not run", note=str(exc))]


_MISSING = "its benchmark script is not in benchmarks/ (yet)"

#: name → (benchmark, what it measures), in the order of the table.
BENCHES: dict[str, tuple[Callable[[bool, int], list[Row]], str]] = {
    "targets": (_targets, "the targets against their yardsticks (bench_targets): the default"),
    "ndjson": (_ndjson, "NDJSON file → SQLite, database size, share of a real import"),
    "api": (_api, "local Lichess-compatible server → SQLite"),
    "peers": (_peers, "PGN file → SQLite, side by side with chess-to-sqlite, pgn-to-sqlite"),
    "pgn": (_pgn, "PGN import and open-database dump filtering (bench_pgn_import)"),
    "reimport": (_reimport, "re-import of an imported file"),
    "structs": (_structs, "named structs against tuples: an import's prepared games, replay rows"),
    "replay": (_replay, "FIDE replay engine on 100k / 1M counted games"),
    "overview": (_overview, "dashboard Overview data with 100k games"),
    "scale": (_scale, "replay report on the FIDE scale: --scale all vs one scale, 100k games"),
    "dashboard": (_dashboard, "dashboard pages (bench_dashboard)"),
    "memory": (_memory, "peak memory of an import, 100k and 1M games"),
    "groups": (_groups, "a club of 200 players × 2,000 games: group table, Group page, sync "
                        "(SQLite, PostgreSQL)"),
    "cli": (_cli, "start-up of tracker --help, calc, replay and import-file into a new database "
                  "(new processes)"),
    "analyse": (_analyse, "tracker analyse: games/s beside the engine's limit (1 and 2 jobs), "
                          "the engine's nodes/s, our overhead, 2 jobs against 1 (Stockfish)"),
    "strength": (_strength, "tracker strength for 2,000 analysed games, warm (≤ 1 s)"),
    "workers": (_workers, "tracker analyse --worker on PostgreSQL: 2 worker processes against "
                          "1 (Stockfish)"),
    "analyse-memory": (_analyse_memory, "tracker analyse --group: peak memory of a club's run "
                                        "(the bundled player and the test fixtures)"),
}

def _load() -> str:
    """The 1-minute load average (other work on the machine slows every figure)."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks",
                                     description="tracker's benchmarks, as one table")
    parser.add_argument("--quick", action="store_true", help="10k games only")
    parser.add_argument("--all", action="store_true", help="every benchmark, not the targets only")
    parser.add_argument("--step", action="append", default=[], metavar="STEP[,STEP]",
                        help="targets only: ndjson, pgn, overview, dump, postgres, memory")
    parser.add_argument("--only", action="append", default=[], metavar="NAME[,NAME]",
                        help=f"run only these: {', '.join(BENCHES)}")
    parser.add_argument("--max-size", type=int, default=1_000_000, metavar="GAMES",
                        help="leave out inputs larger than this (default 1000000)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--child-import", nargs=2, metavar=("FILE", "DB"), help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--user", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child_import:
        print(json.dumps(child_import(*args.child_import, args.repeat, args.user)))
        return 0
    if args.list:
        for name, (_, what) in BENCHES.items():
            print(f"{name:<10} {what}")
        return 0
    only = [n.strip() for item in args.only for n in item.split(",") if n.strip()]
    unknown = [n for n in only if n not in BENCHES]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}: use {', '.join(BENCHES)}")
    names = only or (list(BENCHES) if args.all else ["targets"])
    _STEPS[:] = [n.strip() for item in args.step for n in item.split(",") if n.strip()]

    started = time.perf_counter()
    load_before = _load()
    rows: list[Row] = []
    for name in names:
        bench, what = BENCHES[name]
        print(f"[{time.perf_counter() - started:6.0f} s] {name}: {what} …", file=sys.stderr)
        try:
            got = bench(args.quick, args.max_size)
        except Exception as exc:  # one broken benchmark must not hide the others' figures
            traceback.print_exc(file=sys.stderr)
            got = [Row(what=name, size="-", figure="failed", yardstick="", ratio="", target="",
                       result="ERROR",
                       note=f"{type(exc).__name__}: {exc}"[:200])]
        for r in got:
            print("    " + " | ".join(r[c] for c in COLUMNS if r[c]), file=sys.stderr)  # type: ignore[literal-required]
        rows.extend(got)
    elapsed = time.perf_counter() - started

    command = "python -m benchmarks" + (f" {' '.join(argv if argv is not None else sys.argv[1:])}"
                                        if (argv if argv is not None else sys.argv[1:]) else "")
    header = (
        f"tracker benchmarks — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, `{command}`, "
        f"{elapsed / 60:.1f} min; median of {RUNS} runs unless noted\n"
        f"machine: {machine()}; load average {load_before} at the start, {_load()} at the end"
    )
    table = format_markdown(rows) if args.markdown else format_text(rows)
    print(header)
    print()
    print(table)
    try:  # the last full table, as Markdown, for the README
        from benchmarks.synth import DATA_DIR

        DATA_DIR.mkdir(parents=True, exist_ok=True)
        (DATA_DIR / "last-run.md").write_text(
            header + "\n\n" + format_markdown(rows) + "\n", encoding="utf-8"
        )
    except OSError:
        pass
    missed = [r for r in rows if r["result"] in ("MISS", "ERROR")]
    if missed:
        print(f"\n{len(missed)} figure(s) missed their target or failed: "
              + "; ".join(f"{r['what']} ({r['size']})" for r in missed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
