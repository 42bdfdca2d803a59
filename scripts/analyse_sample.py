"""The level model on local-engine evals: python scripts/analyse_sample.py DATA [--games N]
[--nodes N] [--cache FILE] [--report-only]

Analyses held-out games of the shared analysed set (players the model was not fitted on, the
fixed split of scripts/fit_level_model.py) with the local Stockfish (one thread, a fixed node
budget per position, python-chess ``chess.engine``), then reports the model's held-out figures on
those evals beside the two baselines (fitted on the training players' server evals) and beside
the model on Lichess's own evals of the same games. Players are taken in a fixed shuffled order,
their 10 latest games each, so each player's 10 games also form one set. Every finished game is
appended to the cache (JSON lines), so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chess
import chess.engine
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fit_level_model as fit  # the split, the data and the baselines

from tracker.analysis.level import (
    game_level,
    level_features,
    load_level_model,
    set_level,
)
from tracker.core.evals import Color, PlyEval, from_lichess_entry

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = ROOT / "benchmarks" / ".data" / "analyse-sample.jsonl"
ENGINE = "/usr/games/stockfish"
PER_PLAYER = 10
SEED = 20261202


def pick(games: dict[str, dict[str, Any]], count: int) -> list[tuple[str, str]]:
    """(player, game id) to analyse: held-out players with at least 10 games, in a fixed
    shuffled order, each player's 10 latest games, until ``count`` games."""
    by_player: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for g in games.values():
        for color in ("white", "black"):
            user = g["players"][color].get("user", {}).get("id")
            if user is not None and fit.split_of(user) == "held-out":
                by_player[user].append(g)
    players = sorted(p for p, gs in by_player.items() if len(gs) >= PER_PLAYER)
    random.Random(SEED).shuffle(players)
    out: list[tuple[str, str]] = []
    for p in players:
        latest = sorted(by_player[p], key=lambda g: g["createdAt"])[-PER_PLAYER:]
        out += [(p, g["id"]) for g in latest]
        if len(out) >= count:
            break
    return out[:count]


def analyse(engine: chess.engine.SimpleEngine, moves: list[str], nodes: int) -> list[PlyEval]:
    """One eval per ply after the move (White's view); none for the final mated position."""
    board = chess.Board()
    evals: list[PlyEval] = []
    for san in moves:
        board.push_san(san)
        if board.is_checkmate():
            break
        if board.is_stalemate() or board.is_insufficient_material():
            evals.append(PlyEval(0, None))
            continue
        score = engine.analyse(board, chess.engine.Limit(nodes=nodes))["score"].white()
        evals.append(PlyEval(score.score(), score.mate()))
    return evals


def cached(path: Path) -> Iterator[dict[str, Any]]:
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                yield json.loads(line)


def run(games: dict[str, dict[str, Any]], todo: list[tuple[str, str]], nodes: int,
        cache: Path, reverse: bool = False) -> None:
    done = {c["id"] for c in cached(cache)}
    cache.parent.mkdir(parents=True, exist_ok=True)
    ids = list(dict.fromkeys(gid for _, gid in todo if gid not in done))
    if reverse:  # a second worker on the same cache starts from the other end
        ids.reverse()
    if not ids:
        return
    engine = chess.engine.SimpleEngine.popen_uci(shutil.which(ENGINE) or ENGINE)
    engine.configure({"Threads": 1, "Hash": 16})
    name = engine.id.get("name", "?")
    try:
        for n, gid in enumerate(ids, 1):
            start = time.perf_counter()
            evals = analyse(engine, games[gid]["moves"].split(), nodes)
            took = time.perf_counter() - start
            with cache.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"id": gid, "engine": name, "nodes": nodes,
                                      "seconds": round(took, 2),
                                      "evals": [[e.cp, e.mate] for e in evals]}) + "\n")
            print(f"{n}/{len(ids)} {gid}: {len(evals)} plies in {took:.1f} s", flush=True)
    finally:
        engine.quit()


def report(games: dict[str, dict[str, Any]], todo: list[tuple[str, str]], cache: Path,
           data: Path, summary: dict[str, Any]) -> str:
    """The figures in plain lines; ``summary`` receives them for the model file."""
    local = {c["id"]: c for c in cached(cache)}
    model = load_level_model("rapid")
    rows: dict[str, list[tuple[float, float, float]]] = {"local": [], "server": []}
    acpl: list[float] = []
    real: list[float] = []
    per_player: dict[str, list[int]] = defaultdict(list)
    feats: dict[str, list[Any]] = {"local": [], "server": []}
    for player, gid in todo:
        if gid not in local:
            continue
        g = games[gid]
        color: Color = ("white" if g["players"]["white"].get("user", {}).get("id") == player
                        else "black")
        both = {"local": [PlyEval(cp, mate) for cp, mate in local[gid]["evals"]],
                "server": [from_lichess_entry(e) for e in g["analysis"]]}
        clock = (g["clock"]["initial"], g["clock"]["increment"]) if g.get("clock") else None
        f = {k: level_features(v, color, local=k == "local", clock=clock,
                               sans=g["moves"].split())
             for k, v in both.items()}
        if f["local"].acpl is None:
            continue
        for k in rows:
            lv = game_level(model, f[k])
            rows[k].append((lv.estimate, lv.low, lv.high))
            feats[k].append(f[k])
        acpl.append(float(f["local"].acpl))
        real.append(float(g["players"][color]["rating"]))
        per_player[player].append(len(real) - 1)
    if not real:
        return "no analysed games yet"
    pgs, _, _ = fit.load(data)
    train = fit.arrays([pg for pg in pgs if fit.split_of(pg.player) == "train"])
    line = fit.AcplLine(train.acpl, train.ratings)
    r = np.asarray(real)
    out = [f"{len(real)} held-out player-games of {len(per_player)} players analysed locally "
           f"({next(iter(local.values()))['engine']}, {next(iter(local.values()))['nodes']} "
           "nodes per position, 1 thread)",
           f"{'':<34}{'n':>5}{'MAE':>8}{'medAE':>8}{'cover':>8}{'width':>8}"]

    def show(label: str, f: dict[str, float]) -> None:
        summary.setdefault("figures", {})[label] = f
        out.append(f"{label:<34}{f['n']:>5}{f['mae']:>8}{f['median_ae']:>8}"
                   f"{f['coverage_10_90']:>8}{f['mean_width']:>8}")

    for k in ("local", "server"):
        est, low, high = (np.asarray(v) for v in zip(*rows[k], strict=True))
        show(f"model, {k} evals, games", fit.figures(est, low, high, r))
    show("training median, games", fit.median_figures(train.ratings, r))
    show("ACPL line, local evals, games", line.figures(np.asarray(acpl), r))
    sets = [ix for ix in per_player.values() if len(ix) >= fit.SET_MIN]
    if sets:
        s_real = np.asarray([r[ix].mean() for ix in sets])
        for k in ("local", "server"):
            lvs = [set_level(model, [feats[k][i] for i in ix]) for ix in sets]
            s_est, s_low, s_high = (np.asarray(v, dtype=np.float64) for v in zip(
                *((lv.estimate, lv.low, lv.high) for lv in lvs), strict=True))
            show(f"model, {k} evals, sets of 10", fit.figures(s_est, s_low, s_high, s_real))
        t = fit.set_arrays(train, np.zeros(len(train.ratings)))
        t_real, t_acpl = t.real, t.acpl
        show("training median, sets of 10", fit.median_figures(t_real, s_real))
        show("ACPL line, local evals, sets of 10", fit.AcplLine(t_acpl, t_real).figures(
            np.asarray([np.mean([acpl[i] for i in ix]) for ix in sets]), s_real))
    shift = np.asarray([a[0] - b[0] for a, b in zip(rows["local"], rows["server"], strict=True)])
    server_acpl = [f.acpl for f in feats["server"]]
    out.append(f"same player-games, local − server: estimate {shift.mean():+.0f} on average "
               f"(median {np.median(shift):+.0f}); ACPL {np.mean(acpl):.1f} local vs "
               f"{np.mean([a for a in server_acpl if a is not None]):.1f} server")
    seconds = sum(c["seconds"] for c in local.values())
    plies = sum(len(c["evals"]) for c in local.values())
    first = next(iter(local.values()))
    summary.update({"engine": first["engine"], "nodes": first["nodes"], "threads": 1,
                    "player_games": len(real), "players": len(per_player),
                    "shift_mean": round(float(shift.mean()), 1),
                    "shift_median": round(float(np.median(shift)), 1),
                    "acpl_local": round(float(np.mean(acpl)), 1),
                    "measured_by": "scripts/analyse_sample.py"})
    out.append(f"engine time: {seconds:.0f} s for {plies} positions ({plies / seconds:.2f} "
               "positions/s on this machine, shared)")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--games", type=int, default=250)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--reverse", action="store_true",
                        help="analyse from the last player back (a second worker, same cache)")
    parser.add_argument("--write-model", type=Path, default=None,
                        help="add the figures to this model file as 'local_engine'")
    args = parser.parse_args(argv)
    games: dict[str, dict[str, Any]] = {}
    for line in fit.read_lines(args.data, hashlib.sha256()):
        if line.strip():
            g = json.loads(line)
            games[g["id"]] = g
    todo = pick(games, args.games)
    if not args.report_only:
        run(games, todo, args.nodes, args.cache, args.reverse)
    summary: dict[str, Any] = {}
    print(report(games, todo, args.cache, args.data, summary))
    if args.write_model is not None and summary:
        model = json.loads(args.write_model.read_text(encoding="utf-8"))
        model["local_engine"] = summary
        args.write_model.write_text(json.dumps(model, indent=1, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
