"""The figures of stack.py's fits, and the free prior shape on one of them (stack.py's second
half; run through stack.py):

    python scripts/experiments/stack.py table            # every res_*.pkl: the table's figures
    python scripts/experiments/stack.py shape VARIANT [SEED ...]

"shape": on VARIANT's refitted set score (its likelihood, spread scale and prior as F.fit left
them), the set estimate's prior chosen on validation players' sets (as shown + 6 random sets per
player, drawn with SEED; calibrate_sets draws with 2), never on held-out players:
  - the power prior, the shipped rule (the largest weight 0, 0.05 ... 1 whose worst validation
    band bias <= 60);
  - the free prior shape log q = w log prior + sum_j a_j hat_j (hats every 400 points,
    600 ... 2600), coordinate descent of validation MAE + 10 per point of worst band bias beyond
    60 (+ a roughness penalty): prior_shape/e7_robust.py's (12 starts, roughness 1) and
    prior_shape/e6_free_prior.py's (4 starts, roughness 0), the best objective of the starts.
Held-out figures for each, paired against model 4 (res_none, the weight F.fit chose).
The helpers below are prior_shape/common.py's (that module loads its own cache on import).
"""
import json
import os
import pickle
import tempfile
from pathlib import Path

import fit_level_model as F
import numpy as np

from tracker.analysis.level import quantiles as QS

OUT = Path(tempfile.gettempdir()) / "s4-stack"
SUFFIX = f"@{os.environ['STACK_SPLIT']}" if os.environ.get("STACK_SPLIT") else ""  # stack.py's
G = F.grid()
SPACING = 400.0
KN = np.arange(600, 2601, SPACING)
HATS = np.maximum(0, 1 - np.abs(G[None, :] - KN[:, None]) / SPACING)  # knots x grid


def load(variant):
    return pickle.loads((OUT / f"res_{variant}{SUFFIX}.pkl").read_bytes())


class Tables:
    """A refitted set score: its likelihood (mean, scaled sd, rho), prior, regression."""

    def __init__(self, fit):
        self.mean = np.asarray(fit["likelihood"]["mean"])
        self.sd = np.asarray(fit["likelihood"]["sd"])
        self.rho = float(fit["within_player_correlation"])
        self.prior = np.asarray(fit["prior"])
        reg = fit["regression"]
        self.coef = np.asarray(reg["coef"]) / np.asarray(reg["scale"])
        self.off = float(reg["intercept"]) - float(self.coef @ np.asarray(reg["centre"]))

    def score(self, mean_x):
        return self.off + mean_x @ self.coef

    def ll(self, score, n):
        shrink = self.rho + (1 - self.rho) / n
        var = self.sd[None, :] ** 2 * shrink[:, None]
        return -0.5 * (score[:, None] - self.mean[None, :]) ** 2 / var - 0.5 * np.log(var)


def flat_range(ll):
    lo, hi = QS(G, ll, (0.1, 0.9))
    return lo, hi


def median(ll, log_prior):
    (e,) = QS(G, ll + log_prior[None, :], (0.5,))
    return e


def worst_bias(e, rr):
    return max((abs(b) for b in F.band_biases(e, rr)), default=0.0)


coordinate_descent = F.descend  # prior_shape/common.py's, shipped in model 5's fit


def free_shape(llv, lov, hiv, rr, logp, smooth, starts):
    def J(w, a):
        e = np.clip(median(llv, w * logp + a @ HATS), lov, hiv)
        mae = float(np.abs(e - rr).mean())
        wb = worst_bias(e, rr)
        rough = float(np.sum(np.diff(a, 2) ** 2)) if len(a) > 2 else 0.0
        return mae + 10 * max(0.0, wb - F.SET_FIT_MAX_BIAS) + smooth * rough, mae, wb

    best = None
    for w, a in starts:
        r = coordinate_descent(J, w, a)
        if best is None or r[2][0] < best[2][0]:
            best = r
    return best


def starts_e7():
    rng = np.random.default_rng(7)
    s = [(w, np.zeros(len(KN))) for w in (0.4, 0.6, 0.8, 1.0)]
    return s + [(float(rng.choice([0.4, 0.6, 0.8, 1.0])), rng.normal(0, 0.5, len(KN)))
                for _ in range(8)]


def starts_e6():
    return [(w, np.zeros(len(KN))) for w in (0.4, 0.6, 0.8, 1.0)]


def figures(e, lo, hi, t, ref=None, games=None):
    """Held-out set figures (bands with >= 20 sets) and the paired difference against ref."""
    boot = F.Boot(t["players"])
    f = F.figures(e, lo, hi, t["real"], boot)
    bands = F.by_band(e, lo, hi, t["real"], boot, F.BAND_MIN_SETS)
    out = {"mae": f["mae"], "ci": f["mae_ci"], "bias": f["bias"], "cov": f["coverage_10_90"],
           "width": f["mean_width"],
           "band_bias": [min(b["bias"] for b in bands.values()),
                         max(b["bias"] for b in bands.values())],
           "band_cov": [min(b["coverage_10_90"] for b in bands.values()),
                        max(b["coverage_10_90"] for b in bands.values())],
           "bands": {k: [v["n"], v["mae"], v["bias"], v["coverage_10_90"]]
                     for k, v in bands.items()}}
    if ref is not None:
        d = np.abs(e - t["real"]) - np.abs(ref - t["real"])
        out["diff"], out["diff_ci"] = round(float(d.mean()), 1), F._ci(d, boot.weights)
    if games is not None:
        g, g4 = games
        gb = F.Boot(g["players"])
        ae = np.abs(g["est"] - g["real"])
        out["game_mae"] = round(float(ae.mean()), 1)
        d = ae - np.abs(g4["est"] - g4["real"])
        out["game_diff"], out["game_diff_ci"] = round(float(d.mean()), 1), F._ci(d, gb.weights)
    return out


def table():
    base = load("none")
    rows = {}
    for p in sorted(OUT.glob(f"res_*{SUFFIX}.pkl")):
        if "@" in p.stem and not SUFFIX:
            continue
        r = pickle.loads(p.read_bytes())
        t = r["test"]
        f = figures(t["est"], t["low"], t["high"], t, base["test"]["est"],
                    (r["games"], base["games"]))
        f.update(weight=r["set"]["prior_weight"], val_mae=r["val_mae"], val_worst=r["val_worst"],
                 summary=r["summary_width"], sd_scale=r["set"]["likelihood"]["sd_scale"],
                 rho=r["set"]["within_player_correlation"])
        rows[r["variant"]] = f
        print(r["variant"], json.dumps({k: v for k, v in f.items() if k != "bands"}))
        print("   bands:", f["bands"], flush=True)
    (OUT / f"table{SUFFIX}.json").write_text(json.dumps(rows, indent=1))


def shape(variant, seeds):
    r, base = load(variant), load("none")
    t = r["test"]
    tab = Tables(r["set"])
    llt = tab.ll(tab.score(t["mean_x"]), t["size"])
    lot, hit = flat_range(llt)
    logp = np.log(tab.prior / tab.prior.sum())
    ref = base["test"]["est"]
    out = []
    for seed in seeds:
        v = r["val"][seed]
        llv = tab.ll(tab.score(v["mean_x"]), v["size"])
        lov, hiv = flat_range(llv)
        rr = v["real"]
        weight, frontier = 0.0, []
        for w in np.arange(0.0, 1.001, 0.05):  # calibrate_sets' rule
            e = np.clip(median(llv, w * logp), lov, hiv)
            wb = worst_bias(e, rr)
            frontier.append((round(float(w), 2), round(float(np.abs(e - rr).mean()), 1),
                             round(wb, 1)))
            if wb <= F.SET_FIT_MAX_BIAS:
                weight = round(float(w), 2)
        vrow = next(f for f in frontier if f[0] == weight)
        e = np.clip(median(llt, weight * logp), lot, hit)
        f = figures(e, lot, hit, t, ref)
        f.update(variant=variant, seed=seed, prior="power", weight=weight, val_mae=vrow[1],
                 val_worst=vrow[2])
        if seed == 2:
            f["check_vs_fit"] = round(float(np.abs(e - t["est"]).max()), 3)
        out.append(f)
        print(json.dumps({k: x for k, x in f.items() if k != "bands"}), flush=True)
        for label, smooth, starts in (("free shape (e7: 12 starts, roughness 1)", 1.0,
                                       starts_e7()),
                                      ("free shape (e6: 4 starts, roughness 0)", 0.0,
                                       starts_e6())):
            w, a, cur = free_shape(llv, lov, hiv, rr, logp, smooth, starts)
            e = np.clip(median(llt, w * logp + a @ HATS), lot, hit)
            f = figures(e, lot, hit, t, ref)
            f.update(variant=variant, seed=seed, prior=label, weight=round(w, 3),
                     tilt=[round(x, 2) for x in a], val_mae=round(cur[1], 1),
                     val_worst=round(cur[2], 1))
            out.append(f)
            print(json.dumps({k: x for k, x in f.items() if k != "bands"}), flush=True)
            print("   bands:", f["bands"], flush=True)
    name = f"shape_{variant}{SUFFIX}_{'-'.join(map(str, seeds))}.json"
    (OUT / name).write_text(json.dumps(out, indent=1))


def main(argv):
    if argv[0] == "table":
        table()
    elif argv[0] == "shape":
        shape(argv[1], [int(s) for s in argv[2:]] or [2])
    else:
        raise SystemExit(__doc__)
