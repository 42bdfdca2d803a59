"""Step 3: regression calibration (isotonic map flat estimate -> rating, fitted on TRAINING sets
with out-of-fold set scores), shrink factor on validation; limited translation of the shift."""
import sys, json, time, hashlib
import numpy as np
from common import *

t0 = time.time()
lm = level_model_from_json(BASE)
e4, lo4, hi4 = set_estimates(lm, mean_of(TEST.sx, TEST_SETS), N_TEST)
held("model 4 (package)", e4, lo4, hi4)
T = from_file()
llv, llt = T.ll(T.s_val, N_VAL), T.ll(T.s_test, N_TEST)
lov, hiv = flat_range(llv)
lot, hit = flat_range(llt)
logp = np.log(T.prior / T.prior.sum())
RESULTS = []


def pava(x, y, w=None):
    """Isotonic (non-decreasing) fit of y on x: returns (xs, fitted) at sorted x."""
    o = np.argsort(x, kind="stable")
    xs, ys = x[o], y[o].astype(float)
    ws = np.ones(len(ys)) if w is None else w[o]
    vals, wts, cnt = [], [], []
    for yi, wi in zip(ys, ws):
        vals.append(yi); wts.append(wi); cnt.append(1)
        while len(vals) > 1 and vals[-2] >= vals[-1]:
            v = (vals[-2] * wts[-2] + vals[-1] * wts[-1]) / (wts[-2] + wts[-1])
            wv = wts[-2] + wts[-1]; c = cnt[-2] + cnt[-1]
            vals[-2:] = [v]; wts[-2:] = [wv]; cnt[-2:] = [c]
    fitted = np.repeat(vals, cnt)
    return xs, fitted


def iso_table(x, y, step=10.0):
    """The isotonic map as a table on the grid (plain numbers): mean of fitted per x bin,
    interpolated, carried flat past the data... then made non-decreasing."""
    xs, fy = pava(x, y)
    # a table at grid points: interpolate the step function's midpoints
    ux, idx = np.unique(xs, return_index=True)
    fu = np.asarray([fy[xs == u].mean() for u in ux])
    tab = np.interp(g, ux, fu)
    return np.maximum.accumulate(tab)


# out-of-fold training set scores (5 folds by player)
fold = np.asarray([hashlib.sha256(p.encode()).digest()[1] % 5 for p in TR_PLAYERS])
xtr = mean_of(TRAIN.sx, TR_SETS)
oof = np.zeros(len(TR_SETS))
for k in range(5):
    m = fold == k
    ridge = F.Ridge.fit(xtr[~m], R_TR[~m], F.SET_RIDGE)
    oof[m] = ridge.predict(xtr[m])
print("in-sample vs oof train MAE of raw score", np.abs(T.s_tr - R_TR).mean(), np.abs(oof - R_TR).mean())
lltr_oof = T.ll(oof, N_TR)
lltr_in = T.ll(T.s_tr, N_TR)


def flat_med(ll):
    return median(ll, np.zeros(len(g)))


fv, ft = flat_med(llv), flat_med(llt)
for label, lltr in (("oof", lltr_oof), ("in-sample", lltr_in)):
    ftr = flat_med(lltr)
    tab = iso_table(ftr, R_TR)
    mapped = lambda f: np.interp(f, g, tab)
    cands = []
    for lam in np.arange(0, 1.001, 0.05):
        cands.append((round(lam, 2), np.clip(fv + lam * (mapped(fv) - fv), lov, hiv)))
    best, rows = select(cands)
    lam = best[0]
    e = np.clip(ft + lam * (mapped(ft) - ft), lot, hit)
    out = held(f"isotonic calibration of the flat median ({label} training scores), x lambda", e,
               lot, hit, ref=e4, val_mae=round(best[1], 1), label=lam)
    print("   val rows", rows[::4], flush=True)
    RESULTS.append(out)
    # limited translation of the isotonic shift
    cands = []
    for lam in np.arange(0, 1.001, 0.1):
        for cap in (30, 45, 60, 75, 90, 120, 150, 200, 1000):
            sh = np.clip(lam * (mapped(fv) - fv), -cap, cap)
            cands.append(((round(lam, 2), cap), np.clip(fv + sh, lov, hiv)))
    best, rows = select(cands)
    lam, cap = best[0]
    e = np.clip(ft + np.clip(lam * (mapped(ft) - ft), -cap, cap), lot, hit)
    RESULTS.append(held(f"  the same, shift capped (limited translation) ({label})", e, lot, hit,
                        ref=e4, val_mae=round(best[1], 1), label=best[0]))

# limited translation of the Bayes shift: flat + clip(median_w - flat, -cap, cap)
W = [round(w, 2) for w in np.arange(0.0, 1.001, 0.05)]
cands = []
medv = {w: median(llv, w * logp) for w in W}
for w in W:
    for cap in (30, 45, 60, 75, 90, 120, 150, 200, 1000):
        cands.append(((w, cap), np.clip(fv + np.clip(medv[w] - fv, -cap, cap), lov, hiv)))
best, rows = select(cands)
w, cap = best[0]
e = np.clip(ft + np.clip(median(llt, w * logp) - ft, -cap, cap), lot, hit)
RESULTS.append(held("limited translation: flat + clip(median_w - flat, ±cap)", e, lot, hit, ref=e4,
                    val_mae=round(best[1], 1), label=best[0]))
# and the same from the mixture prior
N = len(g)
for eps in (0.01, 0.05):
    lpm = np.log((1 - eps) * T.prior / T.prior.sum() + eps / N)
    cands = []
    for w in W:
        mv = median(llv, w * lpm)
        for cap in (30, 45, 60, 75, 90, 120, 150, 200, 1000):
            cands.append(((w, cap), np.clip(fv + np.clip(mv - fv, -cap, cap), lov, hiv)))
    best, rows = select(cands)
    w, cap = best[0]
    e = np.clip(ft + np.clip(median(llt, w * lpm) - ft, -cap, cap), lot, hit)
    RESULTS.append(held(f"limited translation, mixture eps {eps}", e, lot, hit, ref=e4,
                        val_mae=round(best[1], 1), label=best[0]))
json.dump(RESULTS, open(CACHE / "e2.json", "w"))
print("secs", round(time.time() - t0))
