"""Paired comparison of board_sets.py results against model 4 ("none") on the same held-out
sets and games: MAE difference with a 95 % player bootstrap, per band and per set size."""
import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np

OUT = f"{tempfile.gettempdir()}/s3-board"
base = pickle.loads(Path(f"{OUT}/res_none.pkl").read_bytes())["per"]


def paired(a_est, b_est, real, players, mask, reps=1000, seed=0):
    players = np.asarray(players)[mask]
    d = (np.abs(b_est - real) - np.abs(a_est - real))[mask]
    uniq = np.unique(players)
    groups = [np.flatnonzero(players == p) for p in uniq]
    sums = np.asarray([d[g].sum() for g in groups])
    counts = np.asarray([len(g) for g in groups])
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(reps):
        pick = rng.integers(0, len(uniq), len(uniq))
        boots.append(sums[pick].sum() / counts[pick].sum())
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return f"{d.mean():+6.1f} [{lo:+.1f}, {hi:+.1f}] n={mask.sum()}"


for which in sys.argv[1:]:
    per = pickle.loads(Path(f"{OUT}/res_{which}.pkl").read_bytes())["per"]
    assert np.array_equal(per["set_real"], base["set_real"])
    real, pl = per["set_real"], per["set_players"]
    print(f"== {which}: paired MAE difference (variant − model 4), negative = better")
    print("  sets, all      ", paired(base["set_est"], per["set_est"], real, pl, real > 0))
    for lo in range(800, 2600, 200):
        m = (real >= lo) & (real < lo + 200)
        if m.sum() >= 20:
            print(f"  sets {lo}-{lo + 199}", paired(base["set_est"], per["set_est"], real, pl, m))
    for a, b in ((10, 14), (15, 19), (20, 10 ** 6)):
        m = (per["set_size"] >= a) & (per["set_size"] <= b)
        print(f"  sets size {a}-{b if b < 1000 else ''}",
              paired(base["set_est"], per["set_est"], real, pl, m))
    if "by_weight" in per and "by_weight" in base:
        for w in (0.0, 0.3):
            print(f"  sets, both at prior weight {w}",
                  paired(base["by_weight"][w], per["by_weight"][w], real, pl, real > 0))
    gr = per["game_real"]
    for lo in range(800, 2600, 200):
        m = (gr >= lo) & (gr < lo + 200)
        print(f"  games {lo}-{lo + 199}",
              paired(base["game_est"], per["game_est"], gr, per["game_players"], m))
    print("  games, all     ",
          paired(base["game_est"], per["game_est"], gr, per["game_players"], gr > 0))
