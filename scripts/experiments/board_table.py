"""The result table (docs/experiments-board.md) from board_sets.py's pickles."""
import pickle
import sys
import tempfile
from pathlib import Path

print("| variant | held-out set MAE [95 %] | val. MAE | worst val. band bias "
      "| held-out band bias | band coverage | weight | per-game MAE "
      "| blitz / bullet / classical per-game MAE |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for which in sys.argv[1:]:
    r = pickle.loads(Path(f"{tempfile.gettempdir()}/s3-board/res_{which}.pkl").read_bytes())
    m = r["held_out"]["model"]
    sets = m["sets"]
    w = r["set"]["prior_weight"]
    fr = next(f for f in r["set"]["training"]["prior_weight_frontier"] if f["prior_weight"] == w)
    bands = [f for f in m["sets_by_rating"].values() if f["n"] >= 20]
    bias = f"{min(f['bias'] for f in bands):+.0f}…{max(f['bias'] for f in bands):+.0f}"
    cover = [f["coverage_10_90"] for f in bands]
    cov = f"{min(cover):.2f}–{max(cover):.2f}"
    sp = " / ".join(f"{r['speeds'][s]['model']['games']['mae']:.0f}"
                    for s in ("blitz", "bullet", "classical"))
    ci = f"[{sets['mae_ci'][0]:.0f}–{sets['mae_ci'][1]:.0f}]"
    print(f"| {which} | {sets['mae']} {ci} | {fr['mae']} | {fr['worst_band_bias']} | {bias} "
          f"| {cov} | {w} | {m['games']['mae']} | {sp} |")
