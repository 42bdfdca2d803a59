"""Diagnosis on VALIDATION players only (never held-out): how much of model 4's set error the
opening features could explain. Per validation set (as shown: blocks of 20, months of >= 10):
the correlation of the set's mean opening features with its real mean rating, and with model
4's residual (real − estimate); likewise per game. Also a set-level "repertoire" measure (the
share of the set's games whose first 4 own moves, same colour, repeat another game of the set).

python scripts/experiments/opening_diag.py [--plies 30]
"""
# ruff: noqa: B905  (parallel lists of one length, built together)

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import opening_exp as X

F, L = X.F, X.L


def main() -> None:
    plies = int(sys.argv[sys.argv.index("--plies") + 1]) if "--plies" in sys.argv else 30
    pgs, meta, sha, games, *_r, openings = X.load_all()
    table = X.build_table(pgs, meta, openings, plies)
    feats = {id(pg.features): X.features_of(table, X.own_moves(openings[gi], c, plies),
                                            X.in_table(pg.player))
             for pg, (gi, c) in zip(pgs, meta)}
    rep_key = {id(pg.features): (c, tuple(u for _, u in X.own_moves(openings[gi], c, 8)))
               for pg, (gi, c) in zip(pgs, meta)}
    model = F.fit(pgs, sha, games, X.DATA.name)
    lm = L.level_model_from_json(model)
    val = F.arrays([pg for pg in pgs if F.split_of(pg.player) == "validation"])
    val.sx = F.hinged(val.x, np.asarray(model["set"]["knots"]).reshape(-1, val.x.shape[1]))
    st = F.set_arrays(val, np.zeros(len(val.pgs)), F.sets_of(val.pgs))
    est, _, _ = L.set_estimates(lm, st.mean_x, st.size)
    resid = st.real - est
    fx = np.asarray([feats[id(pg.features)] for pg in val.pgs])
    fx = np.where(np.isnan(fx), np.nanmean(fx, axis=0), fx)
    mean_f = np.asarray([fx[ix].mean(axis=0) for ix in st.indices])
    reps = []
    for ix in st.indices:
        keys = Counter(rep_key[id(val.pgs[i].features)] for i in ix)
        reps.append(sum(n for n in keys.values() if n > 1) / len(ix))
    # opening identity: white's first move (his, as white) / white's first move and his reply
    # (as black); the 12 commonest in training, one-hot, as set shares
    def ident(pg, gi, c):  # type: ignore[no-untyped-def]
        moves = [u for _, u in openings[gi][:2]]
        return ("w", moves[0]) if c == "white" and moves else ("b", *moves[:2])
    train_ids = Counter(ident(pg, gi, c) for pg, (gi, c) in zip(pgs, meta)
                        if F.split_of(pg.player) == "train")
    top = [k for k, _ in train_ids.most_common(12)]
    where = {id(pg.features): (gi, c) for pg, (gi, c) in zip(pgs, meta)}
    onehot = np.asarray([[float(ident(pg, *where[id(pg.features)]) == k) for k in top]
                         for pg in val.pgs])
    id_share = np.asarray([onehot[ix].mean(axis=0) for ix in st.indices])
    mean_f = np.column_stack([mean_f, reps])
    names = (*X.NAMES, "repertoire")
    print(f"validation sets: {len(st.real)}, model 4 MAE {np.abs(resid).mean():.1f}")
    for j, n in enumerate(names):
        print(f"  {n:<11} corr with rating {np.corrcoef(mean_f[:, j], st.real)[0, 1]:+.3f}, "
              f"with residual {np.corrcoef(mean_f[:, j], resid)[0, 1]:+.3f}")
    # the best a linear correction of the estimate by all the set means could do, in-sample
    design = np.column_stack([np.ones(len(resid)), mean_f])
    coef, *_ = np.linalg.lstsq(design, resid, rcond=None)
    print(f"  in-sample linear correction by all: MAE {np.abs(resid - design @ coef).mean():.1f}")
    for j, k in enumerate(top):
        print(f"  identity {'/'.join(k):<14} corr with rating "
              f"{np.corrcoef(id_share[:, j], st.real)[0, 1]:+.3f}, with residual "
              f"{np.corrcoef(id_share[:, j], resid)[0, 1]:+.3f}")
    design = np.column_stack([design, id_share])
    coef, *_ = np.linalg.lstsq(design, resid, rcond=None)
    print(f"  in-sample linear correction by all + identity ({design.shape[1]} weights on "
          f"{len(resid)} sets): MAE {np.abs(resid - design @ coef).mean():.1f}")
    score = np.asarray([lm.tables.offset + float(lm.tables.coef @ x) for x in val.x])
    g_est, _, _ = L.estimates(lm, score, np.ones(len(score)))
    g_res = val.ratings - g_est
    for j, n in enumerate(X.NAMES):
        print(f"  game {n:<11} corr with rating {np.corrcoef(fx[:, j], val.ratings)[0, 1]:+.3f}"
              f", with residual {np.corrcoef(fx[:, j], g_res)[0, 1]:+.3f}")


if __name__ == "__main__":
    main()
