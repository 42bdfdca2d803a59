"""Load the rapid set's player-games with, per player move, its board row (board_features), once:
a throwaway pickle cache for board_sets.py. Prints the extraction time per game."""
import hashlib
import json
import pickle
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent.parent)]
import board_features as B  # noqa: E402
import fit_level_model as F  # noqa: E402

DATA = F.DEFAULT_SPEEDS.parent / "lichess-rapid-analysed-41k.ndjson.zst"
CACHE = (Path(sys.argv[1]) if len(sys.argv) > 1
         else Path(tempfile.gettempdir()) / "s3-board" / "pgs.pkl")
CACHE.parent.mkdir(parents=True, exist_ok=True)

t0 = time.time()
digest = hashlib.sha256()
pgs, rows, games, board_time, plies, missing = [], [], 0, 0.0, 0, 0
for line in F.read_lines(DATA, digest):
    if not line.strip():
        continue
    games += 1
    g = json.loads(line)
    t = time.perf_counter()
    r = B.ply_rows(g["moves"])
    board_time += time.perf_counter() - t
    plies += len(r)
    for pg in F.player_games(g):
        idx = [m.ply - 1 for m in pg.features.moves]
        if idx and max(idx) >= len(r):
            missing += 1
            idx = [i for i in idx if i < len(r)]
        pgs.append(pg)
        rows.append(r[idx] if len(idx) == len(pg.features.moves) else None)
    if games % 5000 == 0:
        print(games, round(time.time() - t0), flush=True)
sha = digest.hexdigest()
CACHE.write_bytes(pickle.dumps((pgs, rows, sha, games)))
print(f"games {games} player-games {len(pgs)} plies {plies} missing {missing}")
print(f"board extraction {board_time:.1f} s: {1000 * board_time / games:.2f} ms/game, "
      f"{1e6 * board_time / plies:.1f} us/ply; 2,000 games ≈ {2000 * board_time / games:.0f} s")
print(f"total {time.time() - t0:.0f} s")
