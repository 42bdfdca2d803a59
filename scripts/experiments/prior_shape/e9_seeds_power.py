"""The shipped rule (power prior, largest weight within ±60 on validation) under other seeds of the
validation players' random sets (PRIOR_EXP_VAL_SEED; calibrate_sets uses 2): the selection noise
the free shape's rows must be read against."""
import numpy as np
from common import *

T = from_file()
llv, llt = T.ll(T.s_val, N_VAL), T.ll(T.s_test, N_TEST)
lov, hiv = flat_range(llv)
lot, hit = flat_range(llt)
logp = np.log(T.prior / T.prior.sum())
best, _ = select([(round(float(w), 2), np.clip(median(llv, w * logp), lov, hiv))
                  for w in np.arange(0, 1.001, 0.05)])
e = np.clip(median(llt, best[0] * logp), lot, hit)
held(f"power prior, validation seed {VAL_SEED}", e, lot, hit, val_mae=round(best[1], 1),
     label=best[0])
