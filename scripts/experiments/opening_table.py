"""The markdown rows of docs/experiments-opening.md from opening_exp.py's outputs.

python scripts/experiments/opening_table.py TAG=LABEL ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from opening_paired import CACHE, paired


def main() -> None:
    base = np.load(CACHE / "est_none_30.npz")
    print("| variant | held-out set MAE [95 %] | val. | band bias | band coverage | weight "
          "| Δ sets vs model 4 [95 %] | per-game MAE [95 %] | Δ games [95 %] "
          "| blitz / bullet / classical games | 2020 rapid |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for arg in sys.argv[1:]:
        tag, label = arg.split("=", 1)
        d = json.loads((CACHE / f"held_{tag}.json").read_text())
        m = d["held_out"]["model"]
        s, g = m["sets"], m["games"]
        bands = [v for v in m["sets_by_rating"].values() if v["n"] >= 20]
        bias = [v["bias"] for v in bands]
        cov = [v["coverage_10_90"] for v in bands]
        sv = d["set_validation"]
        w = sv["prior_weight"]
        val = next(f["mae"] for f in sv["training"]["prior_weight_frontier"]
                   if f["prior_weight"] == w)
        v = np.load(CACHE / f"est_{tag}.npz")
        deltas = []
        for unit in ("set", "game"):
            real = base[f"{unit}_real"]
            diff, ci = paired(np.abs(base[f"{unit}_est"] - real), np.abs(v[f"{unit}_est"] - real),
                              base[f"{unit}_players"])
            deltas.append(f"{diff:+.1f} [{ci[0]:+.1f}, {ci[1]:+.1f}]")
        sp = d.get("speeds", {})
        speeds = " / ".join(f"{sp[k]['model']['games']['mae']:.0f}"
                            for k in ("blitz", "bullet", "classical")) if sp else "—"
        r20 = d.get("rapid_2020", {}).get("mae", "—")
        print(f"| {label} | {s['mae']} [{s['mae_ci'][0]:.0f}–{s['mae_ci'][1]:.0f}] | {val} "
              f"| {min(bias):+.0f}…{max(bias):+.0f} | {min(cov):.2f}–{max(cov):.2f} | {w} "
              f"| {deltas[0]} | {g['mae']} [{g['mae_ci'][0]:.0f}–{g['mae_ci'][1]:.0f}] "
              f"| {deltas[1]} | {speeds} | {r20} |")


if __name__ == "__main__":
    main()
