"""Cache the rapid player-games per split (summary, rating, id/player/time, moves) and each
game's pooled statistics (feats_pooled.py) for the prior-shape experiments.

    .venv/bin/python scripts/experiments/prior_shape/cache.py [RAPID.ndjson.zst]

Writes $PRIOR_EXP_CACHE (default /tmp/prior-exp)/cache.pkl and pooled.npz (a throwaway cache:
pickle is fine here, never for a shipped model)."""
import os, sys, pickle, time
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts")); sys.path.insert(0, str(ROOT))
import numpy as np
import fit_level_model as F
from feats_pooled import pooled

CACHE = Path(os.environ.get("PRIOR_EXP_CACHE", "/tmp/prior-exp"))
DATA = (Path(sys.argv[1]) if len(sys.argv) > 1 else
        ROOT.parent / "shared" / "data" / "analysed" / "lichess-rapid-analysed-41k.ndjson.zst")


class _Moves:
    pass


if __name__ == "__main__":
    CACHE.mkdir(parents=True, exist_ok=True)
    t = time.time()
    pgs, sha, games = F.load(DATA)
    print("loaded", len(pgs), round(time.time() - t), flush=True)
    parts, pool = {}, {}
    for name in ("train", "validation", "held-out"):
        d = F.arrays([pg for pg in pgs if F.split_of(pg.player) == name])
        moves = [np.asarray([(m.ply, m.win_before, m.win_after) for m in pg.features.moves])
                 for pg in d.pgs]
        meta = [(pg.game_id, pg.player, pg.rating, pg.played_at) for pg in d.pgs]
        parts[name] = dict(x=d.x, ratings=d.ratings, acpl=d.acpl, meta=meta, moves=moves)
        m = _Moves(); m.moves = moves; m.acpl = d.acpl
        pool[name.replace("-", "_")] = pooled(m, [(None, [i]) for i in range(len(moves))])
        print(name, len(moves), round(time.time() - t), flush=True)
    pickle.dump(dict(parts=parts, sha=sha, games=games), open(CACHE / "cache.pkl", "wb"))
    np.savez(CACHE / "pooled.npz", **pool)
    print("done", round(time.time() - t))
