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
- two jobs against one on the same games, beside the machine's own two-at-once;
- **the engine alone** on the same games: a bare UCI loop (pipes, no python-chess, nothing
  stored) sends each position of the games with ``go nodes`` to Stockfish (1 thread, the same
  hash) and reads its answer, one loop per job; its nodes/s is the speed the engine itself
  reaches on these positions, and tracker's games/s against the limit at that speed is the
  ratio a driver can be held to. ``stockfish bench`` runs other positions (many endings,
  where Stockfish 15.1 often takes its cheaper classical eval): on game positions the bare
  loop gets only 0.5–0.65 of bench's nodes/s, at 10,000 nodes a search as at 100,000, so no
  driver can reach 0.9 of the bench limit;
- between the two, **stockfish bench on these positions**: ``bench 16 1 NODES FILE nodes`` over
  the FENs the run searches (Stockfish's own loop, no pipe): the share of the gap that is the
  positions (bench on game positions runs ~0.8 of bench on its own) against the share that is
  driving a search over UCI at all (the bare loop gets ~0.8 of bench on the same positions).

The machine's load is printed with the table: on a shared machine two jobs cannot find two
free cores, and the ratio says so.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from benchmarks import Row, median, row
from tracker import api
from tracker.importing import import_file
from tracker.importing.analyse import AnalyseSummary, run_analyse
from tracker.sources.engine import DEFAULT_NODES, HASH_MB, find_engine
from tracker.sources.game_text import read_game_text
from tracker.store.analysis import games_to_analyse
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


def bench_on(path: str, fens: Path, nodes: int) -> float:
    """Nodes/s of ``stockfish bench`` on the run's own positions: ``bench 16 1 NODES FILE
    nodes`` (16 MB hash, one thread, ``go nodes NODES`` on each FEN of ``fens`` in turn, the
    hash kept between them: Stockfish's own loop, no pipe, no driver)."""
    done = subprocess.run([path, "bench", str(HASH_MB), "1", str(nodes), str(fens), "nodes"],
                          capture_output=True, text=True, check=False, timeout=1200)
    m = re.search(r"Nodes/second\s*:\s*(\d+)", done.stderr + done.stdout)
    return float(m.group(1)) if m else 0.0


def write_fens(games: Sequence[Sequence[str]], path: Path) -> Path:
    """The FEN after each move of ``games`` (UCI moves from the start), one a line: the
    positions the engine alone and tracker search."""
    import chess

    lines: list[str] = []
    for moves in games:
        board = chess.Board()
        for move in moves:
            board.push_uci(move)
            lines.append(board.fen())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _bare_loop(path: str, games: Sequence[Sequence[str]], nodes: int, out: list[int]) -> None:
    """The engine alone: every position of ``games`` (UCI moves from the start) searched with
    ``go nodes``, through bare pipes; the nodes Stockfish reports are added to ``out``."""
    proc = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    send, lines = proc.stdin.write, proc.stdout

    def until(prefix: str) -> str:
        last = ""
        for line in lines:
            if line.startswith(prefix):
                return last
            if " nodes " in line:
                last = line
        raise RuntimeError(f"the engine {path} stopped")

    send(f"uci\nsetoption name Threads value 1\nsetoption name Hash value {HASH_MB}\n")
    searched = 0
    for moves in games:
        send("ucinewgame\nisready\n")
        until("readyok")
        for ply in range(len(moves)):
            send(f"position startpos moves {' '.join(moves[:ply + 1])}\ngo nodes {nodes}\n")
            info = until("bestmove").split()
            searched += int(info[info.index("nodes") + 1]) if "nodes" in info else 0
    send("quit\n")
    proc.wait(timeout=60)
    out.append(searched)


def engine_alone(path: str, games: Sequence[Sequence[str]], nodes: int, jobs: int
                 ) -> float:
    """Nodes/s (wall) of ``jobs`` bare UCI loops at once over ``games``, shared out in turn."""
    searched: list[int] = []
    threads = [threading.Thread(target=_bare_loop, args=(path, games[j::jobs], nodes, searched))
               for j in range(jobs)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(searched) / (time.perf_counter() - started)


def _game_moves(store: Store, games: int) -> list[list[str]]:
    """The UCI moves of the newest ``games`` blitz games that the benchmark analyses (checkmated
    and drawn final positions left out, as tracker leaves them)."""
    import chess

    todo, _ = games_to_analyse(store, PLAYER, "blitz", last=games)
    out: list[list[str]] = []
    for game in todo:
        board = chess.Board()
        moves: list[str] = []
        for san in read_game_text(game.raw, game.source).sans:
            moves.append(board.push_san(san).uci())
            if board.is_game_over():
                moves.pop()
                break
        out.append(moves)
    return out


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
    alone: dict[int, list[float]] = {1: [], 2: []}
    on_these: list[float] = []
    with tempfile.TemporaryDirectory(prefix="tracker-bench-analyse-") as tmp:
        store = Store(str(Path(tmp) / "bench.db"))
        import_file(api.demo_file(), store=store, user=PLAYER)
        moves = _game_moves(store, games)
        fens = write_fens(moves, Path(tmp) / "positions.fen")
        fen_count = sum(len(m) for m in moves)
        for _ in range(rounds):
            for jobs, out in ((1, ones), (2, twos)):
                out.append(_analyse(store, games, jobs))
                with store.engine.begin() as conn:
                    conn.exec_driver_sql("DELETE FROM game_analysis")
            for jobs in (1, 2):
                alone[jobs].append(engine_alone(engine, moves, DEFAULT_NODES, jobs))
            on_these.append(bench_on(engine, fens, DEFAULT_NODES))
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
        these = median(on_these)
        these_limit = these * jobs / per_game if per_game else 0.0
        rows.append(row(f"the same against stockfish bench on these positions, {jobs} "
                        f"job{'s' if jobs > 1 else ''}", label, f"{rate:.3f} games/s",
                        f"≥ {target} of the limit", rate >= target * these_limit, note=(
                            f"stockfish bench {HASH_MB} 1 {DEFAULT_NODES} <the run's "
                            f"{fen_count:,} positions> nodes, median of "
                            f"{', '.join(f'{x:,.0f}' for x in on_these)} nodes/s: "
                            f"{these / bench_nps if bench_nps else 0.0:.2f} of its own "
                            "positions' speed"
                            + (f"; at the machine's two-at-once ({yard:.2f}×) the ratio is "
                               f"{rate / (these_limit * yard / 2):.2f}"
                               if jobs == 2 and these_limit else "")),
                        yardstick=f"limit {these_limit:.3f} games/s (bench on these "
                                  f"positions {these:,.0f} nodes/s × {jobs} ÷ nodes a game)",
                        ratio=f"{rate / these_limit if these_limit else 0.0:.2f}"))
        bare = median(alone[jobs])
        bare_limit = bare / per_game if per_game else 0.0
        rows.append(row(f"the same against the engine alone, {jobs} job{'s' if jobs > 1 else ''}",
                        label, f"{rate:.3f} games/s", f"≥ {target} of the limit",
                        rate >= target * bare_limit, note=(
                            f"the engine alone: {jobs} bare UCI loop{'s' if jobs > 1 else ''} "
                            f"over the same positions, median of "
                            f"{', '.join(f'{x:,.0f}' for x in alone[jobs])} nodes/s; it reaches "
                            f"{bare / (bench_nps * jobs) if bench_nps else 0.0:.2f} of the "
                            "bench limit itself"),
                        yardstick=f"limit {bare_limit:.3f} games/s (the engine alone "
                                  f"{bare:,.0f} nodes/s ÷ nodes a game)",
                        ratio=f"{rate / bare_limit if bare_limit else 0.0:.2f}"))
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
    from benchmarks import format_text

    started = time.perf_counter()
    rows = run(int(argv[0]) if argv else GAMES)
    print(format_text(rows))
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
