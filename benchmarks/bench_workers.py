"""Benchmark of ``tracker analyse --worker``: two workers on one PostgreSQL against one.

Run: ``python -m benchmarks --only workers`` (or ``python benchmarks/bench_workers.py [GAMES
[NODES [ROUNDS]]]``). The bundled export goes into a throwaway PostgreSQL server
(tests/pg_server.py); the newest ``GAMES`` blitz games (default 16) are analysed at ``NODES``
nodes a position (default: the default budget) by one worker process, then by two worker
processes at once (their evals deleted in between), in ``ROUNDS`` rounds (default 3) so that
the load's drift falls on both alike. Each worker is a new process with one job, as a
member's machine would run it; the wall time runs from the start of the processes to the end
of the last, start-up and claiming included.

Reported: games/s of one worker and of two, and their ratio: target ≥ 1.8× on two free cores.
Its yardstick, measured after each round: what two processes at once get from this machine
against one (two ``stockfish bench`` together against one alone: 2.0 with two free cores).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from typing import Final

from benchmarks import Row, row
from benchmarks.bench_analyse import machine_pair, pair_row
from tracker.sources.engine import DEFAULT_NODES, find_engine

GAMES: Final = 16
ROUNDS: Final = 3
PLAYER: Final = "indexinator"
TARGET_SPEEDUP: Final = 1.8


def _worker(url: str, since_ms: int, nodes: int) -> None:
    """One worker process with one job: ``tracker analyse indexinator --perf blitz --worker
    --jobs 1`` (``--jobs`` defaults to the cores, which one worker alone would take)."""
    from tracker import api

    summary = api.analyse(PLAYER, db=url, perf="blitz", since=since_ms, nodes=nodes,
                          jobs=1, worker=True)
    if summary.status != "complete":
        raise SystemExit(f"worker: {summary.line()}")


def _workers(url: str, since_ms: int, nodes: int, n: int) -> float:
    """Seconds for ``n`` worker processes at once to analyse the games."""
    ctx = multiprocessing.get_context("spawn")
    started = time.perf_counter()
    procs = [ctx.Process(target=_worker, args=(url, since_ms, nodes)) for _ in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise RuntimeError(f"a worker failed (exit code {p.exitcode})")
    return time.perf_counter() - started


def run(games: int = GAMES, nodes: int = DEFAULT_NODES, rounds: int = ROUNDS) -> list[Row]:
    """``rounds`` rounds, each: one worker, then two, on the same ``games`` games."""
    from sqlalchemy import text

    from tests.pg_server import postgres_url
    from tracker import api
    from tracker.importing import import_file
    from tracker.store.db import Store

    engine = find_engine()
    with postgres_url() as (url, reason):
        if url is None:
            return [row("analyse workers on PostgreSQL", "-", "not run", note=reason)]
        store = Store(url)
        import_file(api.demo_file(), store=store, user=PLAYER)
        with store.engine.connect() as conn:
            since_ms = int(conn.execute(text(
                "SELECT created_at_ms FROM games WHERE perf = 'blitz' "
                "ORDER BY created_at_ms DESC LIMIT 1 OFFSET :n"), {"n": games - 1}).scalar_one())
            conn.execute(text("DELETE FROM game_analysis"))
            conn.commit()
            count = conn.execute(text("SELECT count(*) FROM games WHERE perf = 'blitz' AND "
                                      "created_at_ms >= :s"), {"s": since_ms}).scalar_one()
        ones: list[float] = []
        twos: list[float] = []
        machine: list[float] = []
        for _ in range(rounds):
            for n, out in ((1, ones), (2, twos)):
                out.append(_workers(url, since_ms, nodes, n))
                with store.engine.begin() as conn:
                    done = conn.execute(text("SELECT count(*) FROM game_analysis")).scalar_one()
                    if done != count:
                        raise RuntimeError(f"{done} games analysed, not {count}")
                    conn.execute(text("DELETE FROM game_analysis"))
            machine.append(machine_pair(engine)[1])
        store.close()
    ratios = [a / b for a, b in zip(ones, twos, strict=True)]
    one_gps = count * rounds / sum(ones)  # over every round: the load's drift evened out
    two_gps = count * rounds / sum(twos)
    load = f"{os.getloadavg()[0]:.1f}"
    label = f"{count} games × {rounds}, {nodes:,} nodes"
    return [
        row("analyse --worker on PostgreSQL, 1 worker", label, f"{one_gps:.3f} games/s",
            note=f"{sum(ones):.1f} s over {rounds} rounds, start-up included; load {load}"),
        pair_row("2 workers against 1, same games", label, ratios, machine, TARGET_SPEEDUP,
                 load, before=f"2 workers {two_gps:.3f} games/s over every round "
                              f"({two_gps / one_gps:.2f}×); "),
    ]


def main(argv: list[str]) -> None:
    from benchmarks import format_text

    started = time.perf_counter()
    args = [int(a) for a in argv]
    rows = run(*args)
    print(format_text(rows))
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
