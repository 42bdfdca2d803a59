"""Steps 1-3: prior shapes and estimators on the shipped model 4 set score."""
import sys, json, time
import numpy as np
from common import *

t0 = time.time()
# model 4 as shipped, through the package
lm = level_model_from_json(BASE)
e4, lo4, hi4 = set_estimates(lm, mean_of(TEST.sx, TEST_SETS), N_TEST)
M4 = held("model 4 (package)", e4, lo4, hi4)

T = from_file()
llv, llt = T.ll(T.s_val, N_VAL), T.ll(T.s_test, N_TEST)
lov, hiv = flat_range(llv)
lot, hit = flat_range(llt)
logp = np.log(T.prior / T.prior.sum())
W = [round(w, 2) for w in np.arange(0.0, 1.001, 0.05)]
RESULTS = []


def run(name, make_logp, params, estimator=median):
    """params: list of labels; make_logp(label) -> (log prior). Weight grid W for each."""
    cands = []
    for p in params:
        lp = make_logp(p)
        for w in W:
            cands.append(((p, w), np.clip(estimator(llv, w * lp), lov, hiv)))
    best, rows = select(cands)
    (p, w), vmae, vwb = best
    e = np.clip(estimator(llt, w * make_logp(p)), lot, hit)
    out = held(name, e, lot, hit, ref=e4, val_mae=round(vmae, 1), label=[p, w])
    out["val_worst"] = round(vwb, 1)
    # held-out frontier at the chosen shape: MAE and worst band bias per weight
    fr = []
    for w2 in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        e2 = np.clip(estimator(llt, w2 * make_logp(p)), lot, hit)
        bb = F.band_biases(e2, R_TEST)
        fr.append((w2, round(float(np.abs(e2 - R_TEST).mean()), 1), round(min(bb)), round(max(bb))))
    out["frontier"] = fr
    print("   frontier", fr, flush=True)
    RESULTS.append(out)
    return out


# 0. model 4 through the harness
run("model 4 (harness): median, power prior", lambda p: logp, [None])

# 1. mixture prior (1-eps) pop + eps uniform
N = len(g)
mix = lambda eps: np.log((1 - eps) * T.prior / T.prior.sum() + eps / N)
run("mixture prior (1-e) pop + e uniform", mix, [0.001, 0.003, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5])
for eps in (0.01, 0.05, 0.1, 0.2):
    run(f"  mixture eps={eps}", mix, [eps])

# 2. tails flattened past quantiles of the prior
cdf = np.cumsum(T.prior / T.prior.sum())


def flat_tails(q):
    p = T.prior / T.prior.sum()
    i0 = int(np.searchsorted(cdf, q)); i1 = int(np.searchsorted(cdf, 1 - q))
    out = p.copy()
    out[:i0] = p[i0]; out[i1 + 1:] = p[i1]
    return np.log(out / out.sum())


run("prior, tails flat past q / 1-q", flat_tails, [0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3])
for q in (0.05, 0.1):
    run(f"  tails flat q={q}", flat_tails, [q])

# 2b. Student-t prior fitted to training set ratings (loc, scale by ML per df)
from math import lgamma, log, pi


def t_logpdf(x, df, loc, sc):
    z = (x - loc) / sc
    return (lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * log(df * pi) - log(sc)
            - (df + 1) / 2 * np.log1p(z * z / df))


def t_prior(df):
    best = None
    for loc in np.arange(1300, 1800, 10):
        for sc in np.arange(150, 500, 5):
            ll = float(t_logpdf(R_TR, df, loc, sc).sum())
            if best is None or ll > best[0]:
                best = (ll, loc, sc)
    _, loc, sc = best
    lp = t_logpdf(g, df, loc, sc)
    return lp - np.log(np.exp(lp).sum())


TP = {df: t_prior(df) for df in (1, 2, 3, 5, 10, 30)}
run("Student-t prior (ML loc/scale; df)", lambda df: TP[df], list(TP))

# 2c. a normal prior fitted to the ratings (mean, sd) -- thinner tails, for contrast
mu, sdv = R_TR.mean(), R_TR.std()
NP = -0.5 * ((g - mu) / sdv) ** 2
run("normal prior (training mean, sd)", lambda p: NP - np.log(np.exp(NP).sum()), [None])

# 3a. posterior mean instead of median
run("posterior mean, power prior", lambda p: logp, [None], estimator=post_mean)
run("posterior mean, mixture prior", mix, [0.001, 0.003, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5],
    estimator=post_mean)
json.dump(RESULTS, open(CACHE / "e1.json", "w"))
print("secs", round(time.time() - t0))
