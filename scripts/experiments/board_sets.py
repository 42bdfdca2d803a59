"""Experiment (issue 33 point 4): add board summaries (board_features.BOARD_SUMMARY) to the level
model's per-game summary, refit everything as scripts/fit_level_model.py does (model 4's protocol:
prior weight on validation players), and print held-out figures against model 4 in the same run.

usage: board_sets.py VARIANT [VARIANT ...]   (variants: see COLUMNS; "none" = model 4)
Needs the cache written by board_cache.py (TMPDIR/s3-board/pgs.pkl); writes res_VARIANT.pkl
there (board_compare.py and board_table.py read them)."""
import json
import pickle
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent.parent)]
import board_features as B  # noqa: E402
import chess.pgn  # noqa: E402
import fit_level_model as F  # noqa: E402
import numpy as np  # noqa: E402

import tracker.analysis.level as L  # noqa: E402

OUT = Path(tempfile.gettempdir()) / "s3-board"  # the cache and the results
PGN = F.DEFAULT_SPEEDS
N = len(B.BOARD_SUMMARY)
COLUMNS = {
    "none": [],
    "all": list(range(N)),
    "complexity": [0, 1, 2, 3, 4],            # complex vs simple positions
    "hanging": [7, 9, 10],                    # leaves hanging, own hanging, free piece taken
    "capture+check": [5, 6, 8, 12],
    "descr": [4, 11, 12],                     # the positions themselves (no loss)
    "losses": [0, 1, 2, 3, 5, 6, 8, 9, 13],   # losses conditioned on the board only
    "hanging+complexity": [0, 1, 2, 3, 4, 7, 9, 10],
    "hanging+capture": [5, 6, 7, 8, 9, 10, 12],
    "nodescr": [0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 13],
    "hanging+descr": [4, 7, 9, 10, 11, 12],
}

t0 = time.time()
pgs, rows, sha, games = pickle.loads((OUT / "pgs.pkl").read_bytes())
print("loaded", len(pgs), round(time.time() - t0), flush=True)

# what "complex" means and the free-piece fallback: from the training players' positions only
train_rows = [r for pg, r in zip(pgs, rows, strict=False) if r is not None and len(r)
              and F.split_of(pg.player) == "train"]
allr = np.vstack(train_rows)
LEGAL_MEDIAN = float(np.median(allr[:, B.COL["legal"]]))
chance = allr[:, B.COL["opp_hanging"]] > 0
FREE_RATE = float(allr[chance, B.COL["took_hanging"]].mean())
hanging_before = allr[:, B.COL["hanging"]] > 0
complex_share = np.mean((allr[:, B.COL["legal"]] > LEGAL_MEDIAN) | hanging_before)
print(f"training positions {len(allr)}: median legal moves {LEGAL_MEDIAN}, free piece taken "
      f"{FREE_RATE:.3f}, hanging before {np.mean(hanging_before):.3f}, "
      f"complex {complex_share:.3f}", flush=True)


def extra_of(features, r):
    loss = [max(0.0, m.win_before - m.win_after) for m in features.moves]
    return B.board_summary(loss, r, LEGAL_MEDIAN, FREE_RATE)


EXTRA = {}
t = time.perf_counter()
fallback = None
for pg, r in zip(pgs, rows, strict=False):
    if pg.features.moves and r is not None and len(r):
        EXTRA[id(pg.features)] = extra_of(pg.features, r)
print(f"board summaries {time.perf_counter() - t:.1f} s for {len(EXTRA)} player-games", flush=True)
fallback = list(np.mean([EXTRA[id(pg.features)] for pg, r in zip(pgs, rows, strict=False)
                         if id(pg.features) in EXTRA and F.split_of(pg.player) == "train"], axis=0))

# the PGN (every speed): replay its SAN for the same rows
speed_pgs, speed_sha, _ = F.load_pgn(PGN)
san_of = {}
with open(PGN, encoding="utf-8") as f:
    while (game := chess.pgn.read_game(f)) is not None:
        board = game.board()
        sans = []
        for move in game.mainline_moves():
            sans.append(board.san(move))
            board.push(move)
        san_of[game.headers.get("Site", "")] = " ".join(sans)
for pg in speed_pgs:
    r = B.ply_rows(san_of[pg.game_id])
    idx = [m.ply - 1 for m in pg.features.moves]
    if idx and max(idx) < len(r):
        EXTRA[id(pg.features)] = extra_of(pg.features, r[idx])

orig_summary = F.summary
ORIG = tuple(F.SUMMARY)


def band_stats(est, low, high, real, least=20):
    """(MAE, band bias min, max, band coverage min, max) over 200-point bands with >= least."""
    bands = [(float((est - real)[m].mean()), float(((real >= low) & (real <= high))[m].mean()))
             for lo in range(600, 2800, 200)
             if (m := (real >= lo) & (real < lo + 200)).sum() >= least]
    return (round(float(np.abs(est - real).mean()), 1),
            round(min(b for b, _ in bands), 1), round(max(b for b, _ in bands), 1),
            round(min(c for _, c in bands), 3), round(max(c for _, c in bands), 3))


def held_sets(model):
    """Per held-out set (as shown): estimate, real, player (for paired comparisons)."""
    lm = L.level_model_from_json(model)
    test = F.arrays([pg for pg in pgs if F.split_of(pg.player) == "held-out"])
    test.sx = F.hinged(test.x, np.asarray(model["set"]["knots"]))
    s = F.set_arrays(test, np.zeros(len(test.pgs)))
    est, _, _ = L.set_estimates(lm, s.mean_x, s.size)
    chosen = model["set"]["prior_weight"]
    frontier = []
    by_weight = {}
    for w in np.arange(0.0, 0.61, 0.1):  # sensitivity only: the weight is chosen on validation
        model["set"]["prior_weight"] = round(float(w), 2)
        e, lo_, hi_ = L.set_estimates(L.level_model_from_json(model), s.mean_x, s.size)
        by_weight[round(float(w), 2)] = e
        frontier.append((round(float(w), 2), *band_stats(e, lo_, hi_, s.real)))
    model["set"]["prior_weight"] = chosen
    print("  held-out set fit by weight (sensitivity): "
          "w, MAE, band bias min, max, coverage min, max")
    for row in frontier:
        print("   ", row)
    score = np.asarray([lm.tables.offset + float(lm.tables.coef @ x) for x in test.x])
    g_est, _, _ = L.estimates(lm, score, np.ones(len(score)))
    return {"set_est": est, "set_real": s.real, "set_players": s.players, "set_size": s.size,
            "game_est": g_est, "game_real": test.ratings, "game_players": test.players,
            "frontier": frontier, "by_weight": by_weight}


orig_knots = F.set_knots


def val_bands(model):
    """The set fit's validation bias per band (sets as shown + sampled, as calibrate_sets reads
    them) at weights 0 and the chosen one."""
    val = F.arrays([pg for pg in pgs if F.split_of(pg.player) == "validation"])
    val.sx = F.hinged(val.x, np.asarray(model["set"]["knots"]))
    s = F.set_arrays(val, np.zeros(len(val.pgs)), F.sets_of(val.pgs) + F.sampled_sets(val, 2))
    chosen = model["set"]["prior_weight"]
    for w in sorted({0.0, chosen}):
        model["set"]["prior_weight"] = w
        est, _, _ = L.set_estimates(L.level_model_from_json(model), s.mean_x, s.size)
        print(f"  validation set bias by band at weight {w}:", [
            (lo, int(m.sum()), round(float((est - s.real)[m].mean()), 1))
            for lo in range(600, 2800, 200)
            if (m := (s.real >= lo) & (s.real < lo + 200)).sum() >= F.BAND_MIN_SETS])
    model["set"]["prior_weight"] = chosen


def mean_game_frontier(model):
    """Model 2's combination (mean of the games' scores through the single-game likelihood) at
    each set prior weight, on validation and held-out sets as shown: MAE, worst band bias,
    band coverage range (bands with >= 20 sets)."""
    lm_json = json.loads(json.dumps({k: v for k, v in model.items() if k != "held_out"}))
    out = []
    parts = {n: F.arrays([pg for pg in pgs if F.split_of(pg.player) == n])
             for n in ("validation", "held-out")}
    for w in np.arange(0.0, 1.001, 0.1):
        lm_json["prior_weight"]["set_estimate"] = round(float(w), 2)
        lm = L.level_model_from_json(lm_json)
        row = {"w": round(float(w), 2)}
        for n, d in parts.items():
            score = np.asarray([lm.tables.offset + float(lm.tables.coef @ x) for x in d.x])
            s = F.set_arrays(d, score)
            est, low, high = L.estimates(lm, s.score, s.size)
            row[n] = band_stats(est, low, high, s.real)
        out.append(row)
    return out


ORIG_SET_RIDGE = F.SET_RIDGE


def configure(which):
    """Patch the fit script for a variant: "NAME[-unhinged][@PENALTY]"; the added names."""
    name, _, penalty = which.partition("@")  # "all@30": the set fit's ridge penalty 30
    F.SET_RIDGE = float(penalty) if penalty else ORIG_SET_RIDGE
    cols = COLUMNS[name.removesuffix("-unhinged")]
    if name.endswith("-unhinged"):  # the board columns enter the set fit as means only

        def knots_of(train):
            k = orig_knots(train)
            if cols:
                k[:, -len(cols):] = 1e9  # knots out of reach: those hinges are 0
            return k

        F.set_knots = knots_of
    else:
        F.set_knots = orig_knots
    names = tuple(B.BOARD_SUMMARY[i] for i in cols)

    def patched(g):
        base = orig_summary(g)
        if not cols:
            return base
        ex = EXTRA.get(id(g), fallback)
        return base + [ex[i] for i in cols]

    F.summary = patched
    F.SUMMARY = ORIG + names
    L.SUMMARY = ORIG + names
    L.summary = patched
    return names


def report_speeds(model):
    speeds = {}
    for sp in F.SPEEDS:
        m = F.speed_model(model, sp, speed_pgs, speed_sha, PGN.name)
        speeds[sp] = m["held_out"]
        print(f"  speed {sp}: {F._row('games', m['held_out']['model']['games'])}  "
              f"acpl line {m['held_out']['acpl_line']['games']['mae']}")
    return speeds


def top_players():
    vd = F.arrays([pg for pg in pgs if F.split_of(pg.player) == "validation"])
    vs = F.sets_of(vd.pgs) + F.sampled_sets(vd, 2)
    return len({vd.pgs[ix[0]].player for _, ix in vs if 2400 <= vd.ratings[ix].mean() < 2600})


def run(which):
    names = configure(which)
    t1 = time.time()
    model = F.fit(pgs, sha, games, "lichess-rapid-analysed-41k.ndjson.zst")
    frontier = model["set"]["training"]["prior_weight_frontier"]
    w = model["set"]["prior_weight"]
    val = next(f for f in frontier if f["prior_weight"] == w)
    print("VARIANT", which, names, flush=True)
    print(F.render(model))
    print(f"set prior weight {w}, validation MAE {val['mae']}, validation worst band bias "
          f"{val['worst_band_bias']}")
    speeds = report_speeds(model)
    rapid2020 = F.rapid_check(model, speed_pgs)
    print(f"  rapid 2020 sample: {F._row('games', rapid2020)}")
    per = held_sets(model)
    val_bands(model)
    print("  validation players with sets in 2400-2599:", top_players())
    mg = mean_game_frontier(model)
    print("  mean of game scores by set prior weight: w, (MAE, band bias min, max, coverage "
          "min, max) validation | held-out")
    for row in mg:
        print(f"    {row['w']:.1f}  {row['validation']}  |  {row['held-out']}")
    kept = {k: v for k, v in model["set"].items() if k in ("prior_weight", "training")}
    (OUT / f"res_{which}.pkl").write_bytes(pickle.dumps(
        {"held_out": model["held_out"], "set": kept, "speeds": speeds, "rapid2020": rapid2020,
         "per": per, "names": names, "mean_game": mg}))
    print("fit time", round(time.time() - t1), flush=True)


for which in sys.argv[1:]:
    run(which)
