"""Step 5: the best estimator (mixture prior) on top of the cheap gains (per-game pooled
statistics, hinges of the single-game score, 12 random sets per player), each refitted as
fit_sets / calibrate_sets do."""
import json, time
import numpy as np
from common import *

t0 = time.time()
lm = level_model_from_json(BASE)
e4, lo4, hi4 = set_estimates(lm, mean_of(TEST.sx, TEST_SETS), N_TEST)
held("model 4 (package)", e4, lo4, hi4)
PO = np.load(CACHE / "pooled.npz")
POOL = {"train": PO["train"], "validation": PO["validation"], "held-out": PO["held_out"]}
N = len(g)
W = [round(w, 2) for w in np.arange(0.0, 1.001, 0.05)]
EPS = [0.0, 0.01, 0.02, 0.05, 0.1, 0.2]
RESULTS = []

# the single-game score (the file's per-game regression) and its hinges
reg = BASE["regression"]
gcoef = np.asarray(reg["coef"]) / np.asarray(reg["scale"])
goff = float(reg["intercept"]) - float(gcoef @ np.asarray(reg["centre"]))
GS = {n: goff + d.x @ gcoef for n, d in (("train", TRAIN), ("validation", VAL), ("held-out", TEST))}
GK = np.percentile(GS["train"], [10, 50, 90])


def hinge_cols(s):
    return np.stack([s, *(np.maximum(s - k, 0) for k in GK)], axis=1)


def cols(name, d, pooled=False, hinges=False):
    parts = [d.sx]
    if pooled:
        parts.append(POOL[name])
    if hinges:
        parts.append(hinge_cols(GS[name]))
    return np.hstack(parts)


def estimate(t, name):
    """Power prior (shipped rule) and mixture prior (eps, w) chosen on validation."""
    llv, llt = t.ll(t.s_val, N_VAL), t.ll(t.s_test, N_TEST)
    lov, hiv = flat_range(llv)
    lot, hit = flat_range(llt)
    p = t.prior / t.prior.sum()
    outs = []
    for label, epss in (("power prior", [0.0]), ("mixture prior", EPS)):
        cands = []
        for eps in epss:
            lp = np.log((1 - eps) * p + eps / N)
            for w in W:
                cands.append(((eps, w), np.clip(median(llv, w * lp), lov, hiv)))
        best, rows = select(cands)
        eps, w = best[0]
        e = np.clip(median(llt, w * np.log((1 - eps) * p + eps / N)), lot, hit)
        out = held(f"{name}; {label}", e, lot, hit, ref=e4, val_mae=round(best[1], 1),
                   label=[eps, w, round(t.k, 3), t.rho])
        out["val_worst"] = round(best[2], 1)
        RESULTS.append(out)
        outs.append((out, e))
    return outs


def variant(name, pooled=False, hinges=False, samples=6):
    tr_sets = None
    if samples != 6:
        old = F.SET_FIT_SAMPLES
        F.SET_FIT_SAMPLES = samples
        tr_sets = F.sets_of(TRAIN.pgs) + F.sampled_sets(TRAIN, 1)
        F.SET_FIT_SAMPLES = old
    t = refit(cols("train", TRAIN, pooled, hinges), cols("validation", VAL, pooled, hinges),
              cols("held-out", TEST, pooled, hinges), train_sets=tr_sets)
    return estimate(t, name)


variant("model 4 refit (set basis)")
variant("+ per-game pooled statistics", pooled=True)
variant("+ hinges of the single-game score", hinges=True)
variant("12 random sets per player", samples=12)
variant("+ pooled + hinges", pooled=True, hinges=True)
variant("+ pooled + hinges, 12 random sets", pooled=True, hinges=True, samples=12)
json.dump(RESULTS, open(CACHE / "e4.json", "w"))
print("secs", round(time.time() - t0))
