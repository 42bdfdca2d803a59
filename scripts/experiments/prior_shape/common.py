"""Harness: the set estimator (prior shape / estimator) on model 4's set scores.

Two sources of set scores:
Run cache.py first. Each eN_*.py prints one JSON line per variant (held-out figures) and
writes $PRIOR_EXP_CACHE/eN*.json.

- "file": the shipped level-rapid-4.json set fit (regression, likelihood with its sd scale, rho,
  prior): reproduces the shipped 121.5;
- "refit": the same steps as fit_sets/calibrate_sets on extra per-game columns (for step 5).
Selection on validation sets (shown + sampled, seed 2): the candidate with the least validation
MAE among those whose worst validation band bias <= 60 (for the power prior this is the shipped
rule "largest weight within 60").
"""
import os, sys, pickle, json, time
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts")); sys.path.insert(0, str(ROOT))
CACHE = Path(os.environ.get("PRIOR_EXP_CACHE", "/tmp/prior-exp"))
import numpy as np
import fit_level_model as F
from tracker.analysis.level import quantiles as QS, level_model_from_json, set_estimates

C = pickle.load(open(CACHE / "cache.pkl", "rb"))
P = C["parts"]
BASE = json.load(open(ROOT / "tracker/analysis/models/level-rapid-4.json"))
g = F.grid()


def data(name):
    p = P[name]
    d = F.Data([F.PlayerGame(gid, pl, r, t, None) for gid, pl, r, t in p["meta"]], p["x"],
               p["ratings"], p["acpl"])
    d.moves = p["moves"]
    return d


TRAIN, VAL, TEST = data("train"), data("validation"), data("held-out")
KNOTS = F.set_knots(TRAIN)
assert np.allclose(KNOTS, np.asarray(BASE["set"]["knots"])), "knots differ from the file's"
for d in (TRAIN, VAL, TEST):
    d.sx = F.hinged(d.x, KNOTS)
TR_SETS = F.sets_of(TRAIN.pgs) + F.sampled_sets(TRAIN, 1)
VAL_SHOWN = F.sets_of(VAL.pgs)
VAL_SEED = int(os.environ.get("PRIOR_EXP_VAL_SEED", "2"))  # calibrate_sets' seed: 2
VAL_SETS = VAL_SHOWN + F.sampled_sets(VAL, VAL_SEED)
TEST_SETS = F.sets_of(TEST.pgs)


def real(d, sets):
    return np.asarray([d.ratings[ix].mean() for _, ix in sets])


def size(sets):
    return np.asarray([len(ix) for _, ix in sets], dtype=float)


def mean_of(cols, sets):
    return np.asarray([cols[ix].mean(axis=0) for _, ix in sets])


R_TR, N_TR = real(TRAIN, TR_SETS), size(TR_SETS)
R_VAL, N_VAL = real(VAL, VAL_SETS), size(VAL_SETS)
R_TEST, N_TEST = real(TEST, TEST_SETS), size(TEST_SETS)
SHOWN = len(VAL_SHOWN)
BOOT = F.Boot([TEST.pgs[ix[0]].player for _, ix in TEST_SETS])
TR_PLAYERS = [TRAIN.pgs[ix[0]].player for _, ix in TR_SETS]


class Tables:
    """A set score's likelihood (mean, sd already scaled, rho) and the three splits' scores."""

    def __init__(self, mean, sd, rho, prior, s_tr, s_val, s_test, weight=None):
        self.mean, self.sd, self.rho, self.prior = mean, sd, rho, prior
        self.s_tr, self.s_val, self.s_test = s_tr, s_val, s_test
        self.weight = weight

    def ll(self, score, n, k=1.0):
        shrink = self.rho + (1 - self.rho) / n
        var = (self.sd * k)[None, :] ** 2 * shrink[:, None]
        return -0.5 * (score[:, None] - self.mean[None, :]) ** 2 / var - 0.5 * np.log(var)


def from_file():
    fit = BASE["set"]
    reg = fit["regression"]
    coef = np.asarray(reg["coef"]) / np.asarray(reg["scale"])
    off = float(reg["intercept"]) - float(coef @ np.asarray(reg["centre"]))
    score = lambda d, sets: off + mean_of(d.sx, sets) @ coef
    return Tables(np.asarray(fit["likelihood"]["mean"]), np.asarray(fit["likelihood"]["sd"]),
                  float(fit["within_player_correlation"]), np.asarray(fit["prior"]),
                  score(TRAIN, TR_SETS), score(VAL, VAL_SETS), score(TEST, TEST_SETS),
                  float(fit["prior_weight"]))


def likelihood(score, r, n):
    """fit_sets' likelihood part."""
    mean = np.maximum.accumulate(F.extended(
        F.kernel_fit(r, score, g, F.SET_MEAN_BANDWIDTH, F.SET_MIN_WEIGHT), True))
    residual2 = (score - np.interp(r, g, mean)) ** 2
    best = None
    for rho in np.arange(0.0, 0.5, 0.02):
        shrink = rho + (1 - rho) / n
        var = np.maximum(F.extended(F.kernel_fit(r, residual2 / shrink, g, F.SET_SD_BANDWIDTH,
                                                 F.SET_MIN_WEIGHT), False), 1.0)
        at = np.interp(r, g, var) * shrink
        nll = 0.5 * float(np.sum(residual2 / at + np.log(at)))
        if best is None or nll < best[0]:
            best = (nll, float(rho), var)
    _, rho, var = best
    return mean, np.sqrt(var), rho


def refit(cols_tr, cols_val, cols_test, train_sets=None, penalty=F.SET_RIDGE):
    """fit_sets + the spread scale of calibrate_sets on per-game columns (games x basis)."""
    sets = TR_SETS if train_sets is None else train_sets
    r, n = real(TRAIN, sets), size(sets)
    xtr = mean_of(cols_tr, sets)
    ridge = F.Ridge.fit(xtr, r, penalty)
    s_tr = ridge.predict(xtr)
    mean, sd, rho = likelihood(s_tr, r, n)
    prior = F.fit_prior(r, F.SET_PRIOR_BANDWIDTH)
    s_val = ridge.predict(mean_of(cols_val, VAL_SETS))
    s_test = ridge.predict(mean_of(cols_test, TEST_SETS))
    if train_sets is not None:
        s_tr = ridge.predict(mean_of(cols_tr, TR_SETS))
    t = Tables(mean, sd, rho, prior, s_tr, s_val, s_test)
    k = scale_k(t)
    t.sd = sd * k
    t.k = k
    t.ridge = ridge
    return t


def band_cov(hit, rr):
    return [float(hit[m].mean()) for lo in range(600, 2800, 200)
            if (m := (rr >= lo) & (rr < lo + 200)).sum() >= F.BAND_MIN_SETS]


def scale_k(t, log_prior_range=None):
    """The spread scale: 80 % of validation ranges hold, then widened until every band of the
    sets as shown holds 75 % (calibrate_sets), for a range under log_prior_range (None: flat)."""
    def hits(k):
        lo, hi = flat_range(t.ll(t.s_val, N_VAL, k), log_prior_range)
        return (R_VAL >= lo) & (R_VAL <= hi)
    k = F.solve(0.8, lambda k: float(hits(k).mean()), 0.5, 2.0)
    while min(band_cov(hits(k)[:SHOWN], R_VAL[:SHOWN]), default=1) < F.SET_BAND_MIN_COVERAGE \
            and k < 2.0:
        k *= 1.01
    return k


def flat_range(ll, log_prior=None):
    lp = ll if log_prior is None else ll + log_prior[None, :]
    lo, hi = QS(g, lp, (0.1, 0.9))
    return lo, hi


def median(ll, log_prior):
    (e,) = QS(g, ll + log_prior[None, :], (0.5,))
    return e


def post_mean(ll, log_prior):
    lp = ll + log_prior[None, :]
    p = np.exp(lp - lp.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return p @ g


def worst_bias(e, rr):
    return max((abs(b) for b in F.band_biases(e, rr)), default=0.0)


def select(cands, max_bias=F.SET_FIT_MAX_BIAS):
    """cands: list of (label, est_val). The least validation MAE with worst band bias <= 60."""
    best = None
    rows = []
    for label, e in cands:
        mae = float(np.abs(e - R_VAL).mean())
        wb = worst_bias(e, R_VAL)
        rows.append((label, round(mae, 1), round(wb, 1)))
        if wb <= max_bias and (best is None or mae < best[1]):
            best = (label, mae, wb)
    return best, rows


def held(name, e, lo, hi, ref=None, val_mae=None, label=None, verbose=True):
    """Held-out figures of estimates e (range lo-hi) on the test sets; paired difference vs ref."""
    f = F.figures(e, lo, hi, R_TEST, BOOT)
    bands = F.by_band(e, lo, hi, R_TEST, BOOT, F.BAND_MIN_SETS)
    biases = [b["bias"] for b in bands.values()]
    covs = [b["coverage_10_90"] for b in bands.values()]
    out = dict(name=name, mae=f["mae"], ci=f["mae_ci"], bias=f["bias"], cov=f["coverage_10_90"],
               width=f["mean_width"], band_bias=(min(biases), max(biases)),
               band_cov=(min(covs), max(covs)), val_mae=val_mae, label=label,
               bands={k: (v["n"], v["mae"], v["bias"], v["coverage_10_90"])
                      for k, v in bands.items()})
    if ref is not None:
        d = np.abs(e - R_TEST) - np.abs(ref - R_TEST)
        out["diff"] = round(float(d.mean()), 1)
        out["diff_ci"] = F._ci(d, BOOT.weights)
    if verbose:
        print(json.dumps({k: v for k, v in out.items() if k != "bands"}), flush=True)
    return out


def combined_columns():
    """Per split, the combined set basis: model 4's set basis, the per-game pooled statistics
    (cache's pooled.npz) and the hinges of the single-game score (knots 10/50/90 %)."""
    po = np.load(CACHE / "pooled.npz")
    pool = {"train": po["train"], "validation": po["validation"], "held-out": po["held_out"]}
    reg = BASE["regression"]
    gcoef = np.asarray(reg["coef"]) / np.asarray(reg["scale"])
    goff = float(reg["intercept"]) - float(gcoef @ np.asarray(reg["centre"]))
    splits = (("train", TRAIN), ("validation", VAL), ("held-out", TEST))
    gs = {n: goff + d.x @ gcoef for n, d in splits}
    gk = np.percentile(gs["train"], [10, 50, 90])

    def hc(s):
        return np.stack([s, *(np.maximum(s - k, 0) for k in gk)], axis=1)

    return {n: np.hstack([d.sx, pool[n], hc(gs[n])]) for n, d in splits}


#: Coordinate descent of J(w, a) -> (objective, mae, worst bias) over the prior weight w (in
#: [0, 1]) and the tilt a, steps 1 ... 0.05: (w, a, J's value there). Model 5's own
#: (scripts/fit_level_model.py), the same steps and order as this experiment's.
coordinate_descent = F.descend
