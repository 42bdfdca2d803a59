"""Experiment (issue 33 point 4): do the player's OWN opening choices add to the level model?

python scripts/experiments/opening_exp.py VARIANT [--plies 30] [--speeds] [--table-share F]
    [--n-ident 12] [--ident-moves 1] [--own-only]

VARIANT: none (model 4), book, share, all (book5, book20, logshare, top), ident (all +
mainstream), book5, logshare, id (the identity one-hots alone), all+id. ``--speeds``: also the
blitz/bullet/classical models and the 2020 rapid sample (PGN); ``--table-share``: build the table
from that share of the training players; ``--n-ident``/``--ident-moves``/``--own-only``: the
identity (the N commonest of his first k moves, with the opponent's moves between or not).
Writes /tmp/s3-opening/held_<tag>.json (figures) and est_<tag>.npz (held-out estimates, for
opening_paired.py / opening_table.py).

1. A move-popularity table from the TRAINING players' own moves only (``split_of(player) ==
   "train"`` of scripts/fit_level_model.py) in the rapid NDJSON: for every position of the
   first ``--plies`` plies (key: python-chess's polyglot zobrist hash of the board), the count of
   each move a training player chose there, and the position's total.
2. Per player-game, features of his own moves in those plies (counts only, never a rating):
   - ``book5`` / ``book20``: how many of his moves he made before his first move played fewer
     than 5 / 20 times in training (his "book depth", in his own moves);
   - ``logshare``: the mean of ln((count(move) + 1) / (count(position) + 1)) over his moves in
     positions seen ≥ 20 times (a move seen < 5 times counts 0: what a table pruned at 5 keeps);
   - ``top``: the share of those moves that are the position's most popular;
   - ``mainstream`` (variant ``ident``): the mean ln(1 + count(position)) of the positions he
     met in those plies (how well-trodden his openings are, target-free).
   A training player's own moves are taken out of the counts when his features are computed
   (leave-one-out), so training features are distributed as held-out ones are.
3. The features are appended to the per-game summary (so the per-game ridge, the set basis with
   its hinges, and the speeds see them), and scripts/fit_level_model.py's ``fit`` (and the
   speeds' ``speed_model``) are run unchanged: same split, same protocol (prior weight chosen on
   validation players), same held-out figures. Variant ``none`` reproduces model 4.

Caches the loaded player-games in /tmp/s3-opening (pickle: a throwaway cache, never shipped).
"""
# ruff: noqa: B905  (parallel lists of one length, built together)

from __future__ import annotations

import hashlib
import json
import math
import pickle
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

import chess  # noqa: E402
import chess.pgn  # noqa: E402
import chess.polyglot  # noqa: E402
import fit_level_model as F  # noqa: E402
import numpy as np  # noqa: E402

import tracker.analysis.level as L  # noqa: E402

DATA = Path("/work/shared/data/analysed/lichess-rapid-analysed-41k.ndjson.zst")
SPEEDS_PGN = Path("/work/shared/data/analysed/lichess-2020-01-analysed-989.pgn")
CACHE_DIR = Path("/tmp/s3-opening")
MAX_PLIES = 30
PRUNE = 5
SEEN = 20
#: the share of the training players whose moves build the table (``--table-share``, default all)
TABLE_SHARE = (float(sys.argv[sys.argv.index("--table-share") + 1])
               if "--table-share" in sys.argv else 1.0)


def opening_of(sans: list[str], plies: int = MAX_PLIES) -> list[tuple[int, str]]:
    """(zobrist key of the position, uci of the move played there) for the first plies."""
    board = chess.Board()
    out = []
    for san in sans[:plies]:
        key = chess.polyglot.zobrist_hash(board)
        move = board.push_san(san)
        out.append((key, move.uci()))
    return out


def load_all() -> tuple:
    cache = CACHE_DIR / "loaded.pkl"
    if cache.exists():
        with cache.open("rb") as f:
            return pickle.load(f)
    t0 = time.time()
    digest = hashlib.sha256()
    pgs, meta, openings = [], [], []
    games = 0
    for line in F.read_lines(DATA, digest):
        if not line.strip():
            continue
        games += 1
        g = json.loads(line)
        gi = len(openings)
        openings.append(opening_of(g["moves"].split()))
        white = g["players"]["white"].get("user", {}).get("id")
        for pg in F.player_games(g):
            pgs.append(pg)
            meta.append((gi, "white" if pg.player == white else "black"))
    sha = digest.hexdigest()
    print("rapid loaded", len(pgs), round(time.time() - t0), flush=True)
    speed_pgs, speed_sha, _ = F.load_pgn(SPEEDS_PGN)
    by_site = {}
    with SPEEDS_PGN.open(encoding="utf-8") as text:
        while (game := chess.pgn.read_game(text)) is not None:
            board = game.board()
            sans = []
            for move in game.mainline_moves():
                sans.append(board.san(move))
                board.push(move)
            by_site[game.headers.get("Site", "")] = (opening_of(sans), game.headers["White"])
    speed_meta = []
    for pg in speed_pgs:
        op, white = by_site[pg.game_id]
        gi = len(openings)
        openings.append(op)
        speed_meta.append((gi, "white" if pg.player == white else "black"))
    out = (pgs, meta, sha, games, speed_pgs, speed_meta, speed_sha, openings)
    CACHE_DIR.mkdir(exist_ok=True)
    with cache.open("wb") as f:
        pickle.dump(out, f)
    print("all loaded", round(time.time() - t0), flush=True)
    return out


def own_moves(opening: list[tuple[int, str]], color: str, plies: int) -> list[tuple[int, str]]:
    first = 0 if color == "white" else 1
    return opening[first:plies:2]


def in_table(player: str) -> bool:
    """Whether the player's own moves build the table (training players, ``TABLE_SHARE``)."""
    return F.split_of(player) == "train" and (
        TABLE_SHARE >= 1
        or hashlib.sha256(f"table:{player}".encode()).digest()[0] < 256 * TABLE_SHARE)


def build_table(pgs, meta, openings, plies: int) -> dict[int, Counter]:
    """Counts of the moves training players chose, per position (rapid NDJSON only)."""
    table: dict[int, Counter] = defaultdict(Counter)
    seen_games = set()
    for pg, (gi, color) in zip(pgs, meta):
        if not in_table(pg.player) or (gi, color) in seen_games:
            continue
        seen_games.add((gi, color))
        for key, uci in own_moves(openings[gi], color, plies):
            table[key][uci] += 1
    return table


def features_of(table, own: list[tuple[int, str]], loo: bool) -> list[float]:
    """book5, book20, logshare, top, mainstream of one player's own opening moves (nan where
    undefined). ``loo``: his own moves are in the table, take them out."""
    self_ = 1 if loo else 0
    book = {PRUNE: None, SEEN: None}
    shares, tops, mainstream = [], [], []
    for i, (key, uci) in enumerate(own):
        counts = table.get(key)
        total = (sum(counts.values()) - self_) if counts else 0
        c = (counts[uci] - self_) if counts else 0
        for k in book:
            if book[k] is None and c < k:
                book[k] = i
        mainstream.append(math.log1p(total))
        if total >= SEEN:
            kept = c if c >= PRUNE else 0
            shares.append(math.log((kept + 1) / (total + 1)))
            best_other = max((n for m, n in counts.items() if m != uci), default=0)
            tops.append(1.0 if c >= best_other else 0.0)
    depth = [float(len(own) if book[k] is None else book[k]) for k in (PRUNE, SEEN)]
    return [*depth,
            float(np.mean(shares)) if shares else math.nan,
            float(np.mean(tops)) if tops else math.nan,
            float(np.mean(mainstream)) if mainstream else math.nan]


#: the opening identity: the N_IDENT commonest (``--n-ident``) of the first IDENT_MOVES of his
#: own moves (``--ident-moves``) with the opponent's moves before them
N_IDENT = int(sys.argv[sys.argv.index("--n-ident") + 1]) if "--n-ident" in sys.argv else 12
OWN_ONLY = "--own-only" in sys.argv
IDENT_MOVES = (int(sys.argv[sys.argv.index("--ident-moves") + 1])
               if "--ident-moves" in sys.argv else 1)
NAMES = ("book5", "book20", "logshare", "top", "mainstream",
         *(f"id{j}" for j in range(N_IDENT)))
IDS = list(range(5, 5 + N_IDENT))
VARIANTS = {"none": [], "book": [0, 1], "share": [2, 3], "all": [0, 1, 2, 3],
            "ident": [0, 1, 2, 3, 4], "book5": [0], "logshare": [2],
            "id": IDS, "all+id": [0, 1, 2, 3, *IDS]}


def identity(opening: list[tuple[int, str]], color: str) -> tuple[str, ...]:
    """His opening's identity: the plies up to his IDENT_MOVES-th move (uci; as white his first
    move, as black white's first move and his reply, by default)."""
    plies = 2 * IDENT_MOVES - 1 if color == "white" else 2 * IDENT_MOVES
    if OWN_ONLY:  # his moves only, not the opponent's
        return (color[0], *(u for _, u in own_moves(opening, color, plies)))
    return (color[0], *(u for _, u in opening[:plies]))


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "none"
    plies = int(sys.argv[sys.argv.index("--plies") + 1]) if "--plies" in sys.argv else MAX_PLIES
    speeds = "--speeds" in sys.argv
    t0 = time.time()
    pgs, meta, sha, games, speed_pgs, speed_meta, speed_sha, openings = load_all()
    print("loaded", len(pgs), len(speed_pgs), round(time.time() - t0), flush=True)
    t1 = time.time()
    table = build_table(pgs, meta, openings, plies)
    kept = sum(1 for c in table.values() for n in c.values() if n >= PRUNE)
    print(f"table: {len(table)} positions, {sum(len(c) for c in table.values())} entries, "
          f"{kept} with count >= {PRUNE}; built in {time.time() - t1:.1f} s", flush=True)
    feats = []
    for pg, (gi, color) in zip(pgs, meta):
        feats.append(features_of(table, own_moves(openings[gi], color, plies),
                                 in_table(pg.player)))
    speed_feats = [features_of(table, own_moves(openings[gi], color, plies), False)
                   for gi, color in speed_meta]
    # the opening identity: one-hot of the N_IDENT commonest identities among training games
    ident_counts = Counter(identity(openings[gi], color) for pg, (gi, color) in zip(pgs, meta)
                           if F.split_of(pg.player) == "train")
    top_ids = [k for k, _ in ident_counts.most_common(N_IDENT)]
    print("identities:", ["/".join(k) for k in top_ids], flush=True)
    for f, (gi, color) in zip([*feats, *speed_feats], [*meta, *speed_meta]):
        own_id = identity(openings[gi], color)
        f.extend(float(own_id == k) for k in top_ids)
    arr = np.asarray(feats)
    train_mask = np.asarray([F.split_of(pg.player) == "train" for pg in pgs])
    fill = np.nanmean(arr[train_mask], axis=0)
    print("feature means (train):", dict(zip(NAMES, np.round(fill, 3))),
          "nan share:", np.round(np.isnan(arr).mean(axis=0), 4), flush=True)
    for held in (False, True):
        m = ~train_mask if held else train_mask
        r = np.asarray([pg.rating for pg in pgs])[m]
        a = arr[m]
        cors = [np.corrcoef(a[~np.isnan(a[:, j]), j], r[~np.isnan(a[:, j])])[0, 1]
                for j in range(a.shape[1])]
        print("corr with rating", "non-train" if held else "train", dict(zip(NAMES,
              np.round(cors, 3))), flush=True)
    cols = VARIANTS[which]
    extra = {}
    for pg, f in zip([*pgs, *speed_pgs], [*feats, *speed_feats]):
        f = [fill[j] if math.isnan(f[j]) else f[j] for j in range(len(f))]
        extra[id(pg.features)] = [f[j] for j in cols]
    if cols:
        orig_summary, orig = F.summary, tuple(F.SUMMARY)
        names = tuple(f"opening_{NAMES[j]}" for j in cols)

        def patched(g):  # type: ignore[no-untyped-def]
            return orig_summary(g) + extra[id(g)]
        F.summary = L.summary = patched
        F.SUMMARY = L.SUMMARY = orig + names
    model = F.fit(pgs, sha, games, DATA.name)
    print("VARIANT", which, "plies", plies)
    print(F.render(model))
    set_fit = model.get("set", {})
    w = set_fit.get("prior_weight")
    val_mae = [f["mae"] for f in set_fit.get("training", {}).get("prior_weight_frontier", [])
               if f["prior_weight"] == w]
    print(f"SETS: prior weight {w}, validation MAE at it {val_mae}, set rho "
          f"{set_fit.get('within_player_correlation')}", flush=True)
    out = {"held_out": model["held_out"], "prior_weight": model["prior_weight"],
           "set_validation": {k: v for k, v in set_fit.items()
                              if k not in ("regression", "likelihood", "prior", "knots")}}
    # the held-out sets' and games' estimates, for paired comparisons between variants
    lm = L.level_model_from_json(model)
    test = F.arrays([pg for pg in pgs if F.split_of(pg.player) == "held-out"])
    test.sx = F.hinged(test.x, np.asarray(model["set"]["knots"]).reshape(-1, test.x.shape[1]))
    st = F.set_arrays(test, np.zeros(len(test.pgs)), F.sets_of(test.pgs))
    set_est, _, _ = L.set_estimates(lm, st.mean_x, st.size)
    game_score = np.asarray([lm.tables.offset + float(lm.tables.coef @ x) for x in test.x])
    game_est, _, _ = L.estimates(lm, game_score, np.ones(len(game_score)))
    tag = f"{which}_{plies}" + (f"_t{TABLE_SHARE}" if TABLE_SHARE < 1 else "") + (
        f"_n{N_IDENT}m{IDENT_MOVES}" if (N_IDENT, IDENT_MOVES) != (12, 1) else "") + (
        "_own" if OWN_ONLY else "")
    np.savez(CACHE_DIR / f"est_{tag}.npz", set_est=set_est, set_real=st.real,
             set_players=np.asarray(st.players), set_size=st.size, game_est=game_est,
             game_real=test.ratings, game_players=np.asarray(test.players))
    print("check: held-out set MAE", round(float(np.abs(set_est - st.real).mean()), 1),
          "game MAE", round(float(np.abs(game_est - test.ratings).mean()), 1), flush=True)
    if speeds:
        out["speeds"] = {}
        for s in F.SPEEDS:
            sm = F.speed_model(model, s, speed_pgs, speed_sha, SPEEDS_PGN.name)
            print(F.render(sm))
            out["speeds"][s] = sm["held_out"]
        out["rapid_2020"] = F.rapid_check(model, speed_pgs)
        print("rapid 2020 sample:", out["rapid_2020"])
    tag = f"{which}_{plies}" + (f"_t{TABLE_SHARE}" if TABLE_SHARE < 1 else "") + (
        f"_n{N_IDENT}m{IDENT_MOVES}" if (N_IDENT, IDENT_MOVES) != (12, 1) else "") + (
        "_own" if OWN_ONLY else "")
    with (CACHE_DIR / f"held_{tag}.json").open("w") as f:
        json.dump(out, f, default=float)
    print("time", round(time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
