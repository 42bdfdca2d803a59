"""The power prior's held-out frontier (MAE, band bias range per weight) for model 4's score and
the combined score, to compare the free shape with the power prior at the same held-out bias
(this reads held-out sets at every weight: a comparison, never a selection)."""
import json
import numpy as np
from common import *

cols = combined_columns()
out = {}
for name, t in (("model 4's score", from_file()),
                ("combined score", refit(cols["train"], cols["validation"], cols["held-out"]))):
    llt = t.ll(t.s_test, N_TEST)
    lot, hit = flat_range(llt)
    logp = np.log(t.prior / t.prior.sum())
    rows = []
    for w in np.arange(0, 1.001, 0.05):
        e = np.clip(median(llt, w * logp), lot, hit)
        bb = F.band_biases(e, R_TEST)
        rows.append((round(float(w), 2), round(float(np.abs(e - R_TEST).mean()), 1),
                     round(min(bb)), round(max(bb))))
    out[name] = rows
    print(name, rows, flush=True)
json.dump(out, open(CACHE / "e8_frontier.json", "w"))
