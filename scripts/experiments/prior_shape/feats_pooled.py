"""Per-game (or per-set) pooled statistics of the moves: 44 numbers (quantiles 50-98 % of
√loss, rates of losses >= 2 ... 30 and <= 0, <= 1, ACPL and accuracy over all moves, by phase and
by position, ln(moves)); the "pooled statistics" of docs/strength.md's table, as measured there."""
import numpy as np
def game_arrays(d):
    out = []
    for m in d.moves:
        ply, b, a = m[:, 0], m[:, 1], m[:, 2]
        loss = np.maximum(0.0, b - a)
        out.append((ply, b, loss))
    d.ga = out

def pooled_one(d, ix, acpl):
    ply = np.concatenate([d.ga[i][0] for i in ix]); b = np.concatenate([d.ga[i][1] for i in ix])
    loss = np.concatenate([d.ga[i][2] for i in ix]); root = np.sqrt(loss)
    n = len(loss)
    ns = np.asarray([len(d.ga[i][2]) for i in ix], float)
    f = list(np.quantile(root, [0.5, 0.75, 0.9, 0.95, 0.98]))
    f += [(loss >= e).mean() for e in (2, 5, 10, 15, 20, 30)]
    f += [(loss <= 0).mean(), (loss <= 1).mean(), root.mean()]
    f += [np.log1p((acpl[ix] * ns).sum() / ns.sum())]
    acc = np.clip(103.1668 * np.exp(-0.043544 * loss) - 3.1669 + 1, 0, 100) / 100
    acc[loss <= 0] = 1.0
    f += [acc.mean()]
    for lo, hi in ((1, 20), (21, 60), (61, 1 << 30)):
        m = (ply >= lo) & (ply <= hi)
        if m.sum():
            f += [root[m].mean(), (loss[m] >= 10).mean(), (loss[m] <= 1).mean(), (loss[m] >= 5).mean(), m.mean()]
        else:
            f += [root.mean(), (loss >= 10).mean(), (loss <= 1).mean(), (loss >= 5).mean(), 0.0]
    for m in (b > 85, (b >= 15) & (b <= 85), b < 15):
        if m.sum():
            f += [root[m].mean(), (loss[m] >= 10).mean(), (loss[m] <= 1).mean(), m.mean()]
        else:
            f += [root.mean(), (loss >= 10).mean(), (loss <= 1).mean(), 0.0]
    f += [np.log(n / len(ix))]
    return f

def pooled(d, sets):
    if not hasattr(d, "ga"):
        game_arrays(d)
    return np.asarray([pooled_one(d, ix, d.acpl) for _, ix in sets])
