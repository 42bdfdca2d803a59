"""Paired comparison of opening_exp.py variants against model 4 on the same held-out sets/games:
the difference of absolute errors (variant − model 4), its 95 % player-level bootstrap interval,
overall and per 200-point band.

python scripts/experiments/opening_paired.py VARIANT [VARIANT ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

CACHE = Path("/tmp/s3-opening")


def paired(a_err, b_err, players, reps: int = 1000, seed: int = 7):
    diff = b_err - a_err
    uniq, inv = np.unique(players, return_inverse=True)
    sums = np.bincount(inv, diff, len(uniq))
    counts = np.bincount(inv, None, len(uniq))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(reps):
        pick = rng.integers(0, len(uniq), len(uniq))
        draws.append(sums[pick].sum() / counts[pick].sum())
    return float(diff.mean()), np.percentile(draws, [2.5, 97.5])


def main() -> None:
    base = np.load(CACHE / "est_none_30.npz")
    for variant in sys.argv[1:]:
        v = np.load(CACHE / f"est_{variant}.npz")
        print(f"== {variant}")
        for unit in ("set", "game"):
            real = base[f"{unit}_real"]
            assert np.array_equal(real, v[f"{unit}_real"])
            a = np.abs(base[f"{unit}_est"] - real)
            b = np.abs(v[f"{unit}_est"] - real)
            players = base[f"{unit}_players"]
            d, ci = paired(a, b, players)
            print(f"{unit}s: MAE {a.mean():.1f} -> {b.mean():.1f}, paired diff {d:+.1f} "
                  f"[{ci[0]:+.1f}, {ci[1]:+.1f}]")
            for lo in range(600, 2800, 200):
                m = (real >= lo) & (real < lo + 200)
                if m.sum() >= (20 if unit == "set" else 100):
                    d, ci = paired(a[m], b[m], players[m], 300)
                    bias_a = float((base[f"{unit}_est"] - real)[m].mean())
                    bias_b = float((v[f"{unit}_est"] - real)[m].mean())
                    print(f"  {lo}-{lo + 199} n={m.sum():5d} MAE {a[m].mean():6.1f} -> "
                          f"{b[m].mean():6.1f} diff {d:+6.1f} [{ci[0]:+.1f}, {ci[1]:+.1f}]"
                          f"  bias {bias_a:+6.1f} -> {bias_b:+6.1f}")


if __name__ == "__main__":
    main()
