"""Experiment (issue 33 point 4): do the partial gains STACK? Each family was measured alone
against model 4 (board: board_sets.py; opening identity: opening_exp.py; the clock setting:
docs/strength.md; pooled statistics and the free prior shape: prior_shape/); here they are added
together to the per-game summary and the whole fit is redone as scripts/fit_level_model.py does
it (same split, per-game ridge, set fit with hinges, calibration, the set prior weight the
largest whose worst VALIDATION band bias <= 60), with model 4 refitted in the same run.

    python scripts/experiments/stack.py fit [VARIANT ...] [--speeds]  # ~40 s each, ~1 min load
    python scripts/experiments/stack.py shape VARIANT       # the free prior shape, seeds 2-5
    python scripts/experiments/stack.py table               # the figures of every result

VARIANT: "none" (model 4), or the letters of the families added (any subset, e.g. "oc"):
    b  board (hanging + capture, 7 summaries of board_features.py)
    o  opening identity (his own first two moves, the 40 commonest pairs in training, one-hot)
    c  the clock setting (ln(initial + 40 x increment), increment > 0), a declared feature
    p  the per-game pooled statistics (44, prior_shape/feats_pooled.py), unhinged in the set
       fit (as they were measured there: means only)
The brief's rows: bo, boc, bocp.

Needs board_cache.py's cache ($TMPDIR/s3-board/pgs.pkl, read only) and the rapid NDJSON (for
his first two moves). Writes $TMPDIR/s4-stack/res_VARIANT.pkl (throwaway pickles).
"""
# ruff: noqa: B905, E402
import hashlib
import json
import math
import os
import pickle
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "prior_shape"), str(HERE.parent), str(HERE.parent.parent)]
import board_features as B
import chess
import chess.pgn
import fit_level_model as F
import numpy as np
from feats_pooled import pooled_one

import tracker.analysis.level as L
from tracker.analysis.board import own_opening

#: STACK_SPLIT=SALT: another split of the players by the same rule (sha256 of
#: "level-split-SALT:" + id, 60/20/20 %): a robustness check; results named res_VARIANT@SALT.pkl
SPLIT = os.environ.get("STACK_SPLIT", "")
SUFFIX = f"@{SPLIT}" if SPLIT else ""
if SPLIT:
    def _split_of(player):
        bucket = hashlib.sha256(f"level-split-{SPLIT}:{player}".encode()).digest()[0] % 10
        return "train" if bucket < 6 else "validation" if bucket < 8 else "held-out"
    F.split_of = _split_of

TMP = Path(tempfile.gettempdir())
BOARD_CACHE = Path(os.environ.get("STACK_BOARD_CACHE", TMP / "s3-board" / "pgs.pkl"))
OUT = TMP / "s4-stack"
DATA = F.DEFAULT_SPEEDS.parent / "lichess-rapid-analysed-41k.ndjson.zst"
BOARD_COLS = [5, 6, 7, 8, 9, 10, 12]  # board_sets.COLUMNS["hanging+capture"]
N_IDENT = 40
SEEDS = (2, 3, 4, 5)  # 2: calibrate_sets' draw of the validation players' random sets
VARIANTS = ("none", "bo", "boc", "bocp")
#: the families, by their letter in a variant's name (in this order in the summary)
PARTS = (("board", len(BOARD_COLS)), ("opening", N_IDENT), ("clock", 2), ("pooled", 44))


# --- the per-game columns of each family ------------------------------------------------------

def board_columns(pgs, rows):
    """board_sets.py's summaries (hanging + capture), training fallback where a game has no
    board rows."""
    train_rows = [r for pg, r in zip(pgs, rows) if r is not None and len(r)
                  and F.split_of(pg.player) == "train"]
    allr = np.vstack(train_rows)
    legal_median = float(np.median(allr[:, B.COL["legal"]]))
    chance = allr[:, B.COL["opp_hanging"]] > 0
    free_rate = float(allr[chance, B.COL["took_hanging"]].mean())
    out = {}
    for pg, r in zip(pgs, rows):
        if pg.features.moves and r is not None and len(r):
            loss = [max(0.0, m.win_before - m.win_after) for m in pg.features.moves]
            s = B.board_summary(loss, r, legal_median, free_rate)
            out[id(pg.features)] = [s[i] for i in BOARD_COLS]
    fallback = list(np.mean([out[id(pg.features)] for pg in pgs if id(pg.features) in out
                             and F.split_of(pg.player) == "train"], axis=0))
    print(f"board: legal median {legal_median}, free rate {free_rate:.3f}, "
          f"{len(out)} player-games", flush=True)
    BOARD_REF[:] = [legal_median, free_rate]
    return out, fallback


BOARD_REF = []  # the training positions' median legal move count, free pieces taken share
TOP_IDS = []  # the N_IDENT commonest identities in training


def own_two(sans, color):
    """(colour, uci of his first move, uci of his second): opening_exp.identity with
    --ident-moves 2 --own-only (shipped in model 5 as tracker.analysis.board.own_opening)."""
    return own_opening(sans, color)


def opening_columns(pgs):
    """One-hot of the N_IDENT commonest (training player-games) own two-move identities."""
    white_of, ident = {}, {}
    for line in F.read_lines(DATA, hashlib.sha256()):
        if not line.strip():
            continue
        g = json.loads(line)
        sans = g["moves"].split()
        white_of[g["id"]] = g["players"]["white"].get("user", {}).get("id")
        ident[g["id"]] = {c: own_two(sans, c) for c in ("white", "black")}
    ids = [ident[pg.game_id]["white" if pg.player == white_of[pg.game_id] else "black"]
           for pg in pgs]
    counts = Counter(i for pg, i in zip(pgs, ids) if F.split_of(pg.player) == "train")
    top = [k for k, _ in counts.most_common(N_IDENT)]
    TOP_IDS[:] = top
    print("identities:", ["/".join(k) for k in top], flush=True)
    return {id(pg.features): [float(i == k) for k in top] for pg, i in zip(pgs, ids)}


def clock_columns(pgs):
    """The clock setting, declared: ln(initial + 40 x increment) and increment > 0."""
    out = {}
    for pg in pgs:
        c = pg.features.clock
        out[id(pg.features)] = ([math.log(c[0] + 40 * c[1]), float(c[1] > 0)] if c
                                else None)
    vals = [v for v in out.values() if v is not None]
    fill = list(np.mean(vals, axis=0))
    print(f"clock: {len(vals)} of {len(out)} with a setting; fill {fill}", flush=True)
    return {k: (v if v is not None else fill) for k, v in out.items()}


class _One:
    pass


def pooled_columns(pgs):
    """feats_pooled.py's 44 statistics of each game's own moves (as prior_shape/cache.py)."""
    out = {}
    for pg in pgs:
        if not pg.features.moves or pg.features.acpl is None:
            continue
        m = np.asarray([(x.ply, x.win_before, x.win_after) for x in pg.features.moves])
        d = _One()
        d.ga = [(m[:, 0], m[:, 1], np.maximum(0.0, m[:, 1] - m[:, 2]))]
        out[id(pg.features)] = [float(v) for v in
                                pooled_one(d, [0], np.asarray([pg.features.acpl]))]
    return out


# --- the fit ----------------------------------------------------------------------------------

ORIG_SUMMARY, ORIG_NAMES, ORIG_KNOTS = F.summary, tuple(F.SUMMARY), F.set_knots
ORIG_PER_WEIGHT = F.SET_SETS_PER_WEIGHT


def configure(variant, fam):
    """Patch the fit script's per-game summary (and the level module's) for a variant."""
    parts = [part for part in PARTS if variant != "none" and part[0][0] in variant]
    names = tuple(f"{name}{j}" for name, n in parts for j in range(n))

    def patched(g):
        out = list(ORIG_SUMMARY(g))
        for name, _ in parts:
            out += fam[name][0].get(id(g), fam[name][1])
        return out

    F.summary = L.summary = patched if parts else ORIG_SUMMARY
    F.SUMMARY = L.SUMMARY = ORIG_NAMES + names
    F.SET_SETS_PER_WEIGHT = ORIG_PER_WEIGHT
    F.set_knots = ORIG_KNOTS
    unhinged = 44 if "pooled" in dict(parts) else 0
    if unhinged:  # the pooled statistics enter the set fit as means only (knots out of reach)
        def knots_of(train):
            k = ORIG_KNOTS(train)
            k[:, -unhinged:] = 1e9
            return k
        F.set_knots = knots_of
        # the hinges' data check counts every summary column 4 times; the pooled ones count once
        hinged = len(F.SUMMARY) - unhinged
        F.SET_SETS_PER_WEIGHT = math.floor(
            ORIG_PER_WEIGHT * (hinged * 4 + unhinged) / (len(F.SUMMARY) * 4))
    return names


def set_data(model, d, sets):
    d.sx = F.hinged(d.x, np.asarray(model["set"]["knots"]).reshape(-1, d.x.shape[1]))
    return F.set_arrays(d, np.zeros(len(d.pgs)), sets)


def run(variant, pgs, sha, games, fam, speeds=None):
    names = configure(variant, fam)
    t1 = time.time()
    parts = {n: F.arrays([pg for pg in pgs if F.split_of(pg.player) == n])
             for n in ("train", "validation")}
    n_sets = len(F.sets_of(parts["train"].pgs)) + len(F.sampled_sets(parts["train"], 1))
    need = F.SET_SETS_PER_WEIGHT * len(F.SUMMARY) * (1 + len(F.SET_KNOTS))
    print(f"VARIANT {variant}: {len(F.SUMMARY)} summary columns; training sets {n_sets}, "
          f"hinges need {need}: {'ok' if n_sets >= need else 'NO HINGES'}", flush=True)
    assert n_sets >= need, "the set fit would lose its hinges"
    model = F.fit(pgs, sha, games, DATA.name)
    print(F.render(model))
    w = model["set"]["prior_weight"]
    fr = next(f for f in model["set"]["training"]["prior_weight_frontier"]
              if f["prior_weight"] == w)
    print(f"set prior weight {w}, validation MAE {fr['mae']}, worst validation band bias "
          f"{fr['worst_band_bias']}, spread scale {model['set']['likelihood']['sd_scale']}",
          flush=True)
    lm = L.level_model_from_json(model)
    test = F.arrays([pg for pg in pgs if F.split_of(pg.player) == "held-out"])
    st = set_data(model, test, F.sets_of(test.pgs))
    est, low, high = L.set_estimates(lm, st.mean_x, st.size)
    score = np.asarray([lm.tables.offset + float(lm.tables.coef @ x) for x in test.x])
    g_est, _, _ = L.estimates(lm, score, np.ones(len(score)))
    val = parts["validation"]
    vals = {}
    for seed in SEEDS:  # the validation sets as calibrate_sets draws them (seed 2) and others
        sv = set_data(model, val, F.sets_of(val.pgs) + F.sampled_sets(val, seed))
        vals[seed] = {"mean_x": sv.mean_x, "size": sv.size, "real": sv.real,
                      "shown": len(F.sets_of(val.pgs))}
    res = {"variant": variant, "names": names, "set": model["set"], "held_out": model["held_out"],
           "val_mae": fr["mae"], "val_worst": fr["worst_band_bias"],
           "test": {"mean_x": st.mean_x, "size": st.size, "real": st.real,
                    "players": st.players, "est": est, "low": low, "high": high},
           "games": {"est": g_est, "real": test.ratings, "players": test.players},
           "val": vals, "summary_width": len(F.SUMMARY)}
    if speeds is not None:
        res["speeds"] = speeds_of(model, *speeds)
        (OUT / f"speeds_{variant}{SUFFIX}.json").write_text(json.dumps(res["speeds"], indent=1))
    (OUT / f"res_{variant}{SUFFIX}.pkl").write_bytes(pickle.dumps(res))
    print(f"check: held-out set MAE {np.abs(est - st.real).mean():.1f}, game MAE "
          f"{np.abs(g_est - test.ratings).mean():.1f}; fit time {time.time() - t1:.0f} s",
          flush=True)


def speed_games(fam):
    """The 2020 PGN's player-games (every speed) with the same columns (board rows from its
    SAN replayed, as board_sets.py does): for the speeds' models and the 2020 rapid check."""
    speed_pgs, speed_sha, _ = F.load_pgn(F.DEFAULT_SPEEDS)
    games = {}
    with open(F.DEFAULT_SPEEDS, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            board = game.board()
            sans = []
            for move in game.mainline_moves():
                sans.append(board.san(move))
                board.push(move)
            games[game.headers.get("Site", "")] = (sans, game.headers["White"])
    for pg in speed_pgs:
        sans, white = games[pg.game_id]
        key = id(pg.features)
        r = B.ply_rows(" ".join(sans))
        idx = [m.ply - 1 for m in pg.features.moves]
        if idx and max(idx) < len(r):
            loss = [max(0.0, m.win_before - m.win_after) for m in pg.features.moves]
            s = B.board_summary(loss, r[idx], *BOARD_REF)
            fam["board"][0][key] = [s[i] for i in BOARD_COLS]
        if "opening" in fam:
            own = own_two(sans, "white" if pg.player == white else "black")
            fam["opening"][0][key] = [float(own == k) for k in TOP_IDS]
        if "clock" in fam:
            c = pg.features.clock
            fam["clock"][0][key] = [math.log(c[0] + 40 * c[1]), float(c[1] > 0)]
        if "pooled" in fam and pg.features.moves and pg.features.acpl is not None:
            fam["pooled"][0].update(pooled_columns([pg]))
    return speed_pgs, speed_sha


def speeds_of(model, speed_pgs, speed_sha):
    """Per-game held-out figures of the speeds' models and the 2020 rapid check."""
    out = {}
    for sp in F.SPEEDS:
        m = F.speed_model(model, sp, speed_pgs, speed_sha, F.DEFAULT_SPEEDS.name)
        out[sp] = m["held_out"]["model"]["games"]
    out["rapid 2020"] = F.rapid_check(model, speed_pgs)
    for k, v in out.items():
        print(f"  {k}: games {v['n']}, MAE {v['mae']} {v.get('mae_ci')}, bias {v['bias']}, "
              f"coverage {v['coverage_10_90']}", flush=True)
    return out


def main_fit(variants):
    OUT.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    pgs, rows, sha, games = pickle.loads(BOARD_CACHE.read_bytes())
    print("loaded", len(pgs), round(time.time() - t0), flush=True)
    fam = {}
    fam["board"] = board_columns(pgs, rows)
    del rows
    used = "".join(v for v in variants if v != "none")
    if "o" in used:
        fam["opening"] = (opening_columns(pgs), None)
    if "c" in used:
        fam["clock"] = (clock_columns(pgs), None)
    if "p" in used:
        t = time.time()
        fam["pooled"] = (pooled_columns(pgs), None)
        print(f"pooled statistics {time.time() - t:.0f} s", flush=True)
    speeds = speed_games(fam) if SPEEDS_TOO else None
    print("features ready", round(time.time() - t0), flush=True)
    for v in variants:
        run(v, pgs, sha, games, fam, speeds)


SPEEDS_TOO = "--speeds" in sys.argv  # fit ... --speeds: also the speeds and 2020 rapid games

if __name__ == "__main__":
    if sys.argv[1] == "fit":
        main_fit([v for v in sys.argv[2:] if v != "--speeds"] or list(VARIANTS))
    else:
        import stack_shape  # the free prior shape and the figures: stack_shape.py

        stack_shape.main(sys.argv[1:])
