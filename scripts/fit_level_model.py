"""Fit the level model from analysed Lichess games: python scripts/fit_level_model.py DATA
[--out tracker/analysis/models/level-rapid-1.json]

DATA: the shared analysed rapid games (``lichess-rapid-analysed-41k.ndjson.zst``: one game per
line in the Lichess API export format, with ``analysis[]``). Reproducible: the split is a fixed
hash of the player's id, the fit has no randomness. Prints the held-out figures beside the two
baselines (the training median; a least-squares line on log(1 + ACPL)) and writes them into the
model file with the model (``docs/strength.md``).

The model (STRENGTH.md §3, no rating among the inputs): each move of a player falls in a cell,
context (the mover's Win% before it × the phase by ply) × the Win% it lost (8 bins). Per rating
(every 50 points), the share of each bin within each context, from the training players' moves
weighted by a Gaussian kernel over their rating (σ 75) and smoothed toward the pooled shares
(20 moves' worth). A game's likelihood over a rating grid is the product over its moves,
tempered (raised to a power < 1, fitted on validation players so that the 10–90 % range holds
~80 % of real ratings: moves of one game are not independent); a set of n games is tempered
once more by n^(β − 1) (games of one player are not independent either; β fitted the same way
on sets). Times the prior (the training players' ratings), normalised: the median is the
estimate, the 10th and 90th percentiles the range.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import zstandard

from tracker.analysis.level import (
    GameFeatures,
    blocks,
    count_cells,
    game_level,
    level_features,
    level_model_from_json,
    normalised,
    set_level,
)
from tracker.core.evals import from_lichess_entry

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tracker" / "analysis" / "models" / "level-rapid-1.json"

KEY, VERSION, PERF = "level-rapid", 1, "rapid"
LOSS_EDGES = [0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 35.0]
WIN_BEFORE = [(0.0, 15.0), (15.0, 85.0), (85.0, 100.5)]
PLIES = [(1.0, 20.0), (21.0, 60.0), (61.0, 100000.0)]
CONTEXTS: list[dict[str, list[float]]] = [{"win_before": list(w), "ply": list(p)}
                                          for w in WIN_BEFORE for p in PLIES]
#: How the game ended from the player's side (tracker.analysis.level.ending), one more
#: observation per game where listed. Not used: measured on the held-out players, the full
#: endings lowered the MAE by ~1 point (per game 235.5 → 234.6, sets 144.6 → 143.2), and the
#: gain came from the opponent's decisions (whether the loser resigned or played on to mate):
#: restricted to the player's own (a won game as one category), it was gone (235.5, 145.2).
#: An opponent's habits reflect the opponent's rating, i.e. the pairing, not the play.
ENDINGS: list[str] = []
CENTRES = list(range(500, 3001, 50))
KERNEL_SIGMA = 75.0
SMOOTHING = 20.0
GRID = {"low": 400, "high": 3000, "step": 10}
PRIOR_BANDWIDTH = 40.0
SET_SIZE, SET_MIN = 20, 10

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class PlayerGame:
    """One player's side of one game: who, their rating (the target, never an input), when,
    and what the model reads."""

    game_id: str
    player: str
    rating: int
    played_at: int
    features: GameFeatures


def read_lines(path: Path, digest: Any) -> Iterator[bytes]:
    """The lines of an NDJSON file (zstd or plain), hashing the decompressed bytes."""
    with path.open("rb") as raw:
        stream: Any = (io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw))
                       if path.suffix == ".zst" else raw)
        for line in stream:
            digest.update(line)
            yield line


def player_games(game: dict[str, Any]) -> Iterator[PlayerGame]:
    """Both sides of one analysed game (a side without a user or rating is left out)."""
    evals = [from_lichess_entry(e) for e in game.get("analysis", [])]
    clock = game.get("clock")
    setting = (clock["initial"], clock["increment"]) if clock else None
    for color in ("white", "black"):
        side = game["players"][color]
        user = side.get("user", {}).get("id")
        if user is None or "rating" not in side:
            continue
        winner = game.get("winner")
        score = 0.5 if winner is None else 1.0 if winner == color else 0.0
        features = level_features(evals, color, clock=setting, result=score,
                                  clocks=game.get("clocks"), status=game.get("status"))
        yield PlayerGame(game["id"], user, side["rating"], game["createdAt"], features)


def load(path: Path) -> tuple[list[PlayerGame], str, int]:
    """Every player-game of the file, the sha256 of the decompressed file, the game count."""
    digest = hashlib.sha256()
    out: list[PlayerGame] = []
    games = 0
    for line in read_lines(path, digest):
        if line.strip():
            games += 1
            out.extend(player_games(json.loads(line)))
    return out, digest.hexdigest(), games


def split_of(player: str) -> str:
    """The fixed split by player: sha256 of the id, 60 % train, 20 % validation, 20 % held out.
    """
    bucket = hashlib.sha256(f"level-split:{player}".encode()).digest()[0] % 10
    return "train" if bucket < 6 else "validation" if bucket < 8 else "held-out"


# --- the fit -----------------------------------------------------------------------------------

def fit_log_probs(counts: Ints, ratings: Floats) -> Floats:
    """log P(bin | context, rating) at each of :data:`CENTRES` (rows) for every cell."""
    bins = len(LOSS_EDGES) + 1
    centres = np.asarray(CENTRES, dtype=np.float64)
    weights = np.exp(-0.5 * ((centres[:, None] - ratings[None, :]) / KERNEL_SIGMA) ** 2)
    weighted = weights @ counts.astype(np.float64)  # centres × cells
    pooled = counts.sum(axis=0).astype(np.float64)
    out = np.empty_like(weighted)
    starts = [c * bins for c in range(len(CONTEXTS) + 1)]
    if ENDINGS:
        starts.append(starts[-1] + len(ENDINGS))
    for start, stop in pairwise(starts):
        cols = slice(start, stop)
        shares = (pooled[cols] + 1) / (pooled[cols] + 1).sum()
        smoothed = weighted[:, cols] + SMOOTHING * shares[None, :]
        out[:, cols] = np.log(smoothed / smoothed.sum(axis=1, keepdims=True))
    return out


def grid() -> Floats:
    out: Floats = np.arange(GRID["low"], GRID["high"] + GRID["step"] / 2, GRID["step"],
                            dtype=np.float64)
    return out


def fit_prior(ratings: Floats) -> Floats:
    """The training ratings' density on the grid (Gaussian kernel), with a floor of 1e-4 of its
    peak so no rating on the grid is impossible."""
    g = grid()
    density = np.exp(-0.5 * ((g[:, None] - ratings[None, :]) / PRIOR_BANDWIDTH) ** 2).sum(axis=1)
    density /= density.sum()
    floored = np.maximum(density, density.max() * 1e-4)
    out: Floats = floored / floored.sum()
    return out


def quantiles(log_post: Floats, qs: Sequence[float]) -> list[Floats]:
    """Per row of unnormalised log-posteriors on the grid, the ``qs`` quantiles (linear)."""
    g = grid()
    post = np.exp(log_post - log_post.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    cdf = np.cumsum(post, axis=1) - post / 2  # each grid point's mass centred on it
    out: list[Floats] = []
    rows = np.arange(cdf.shape[0])
    for q in qs:
        i = np.clip((cdf < q).sum(axis=1), 1, len(g) - 1)
        c0, c1 = cdf[rows, i - 1], cdf[rows, i]
        frac = np.clip((q - c0) / np.maximum(c1 - c0, 1e-300), 0, 1)
        out.append(g[i - 1] + frac * (g[i] - g[i - 1]))
    return out


def coverage(loglik: Floats, log_prior: Floats, weight: Floats, real: Floats) -> float:
    low, high = quantiles(log_prior[None, :] + weight[:, None] * loglik, (0.1, 0.9))
    return float(np.mean((real >= low) & (real <= high)))


def solve(target: float, f: Any, lo: float, hi: float) -> float:
    """The x in [lo, hi] where the decreasing ``f`` crosses ``target`` (bisection, 30 steps)."""
    for _ in range(30):
        mid = (lo + hi) / 2
        if f(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


# --- sets --------------------------------------------------------------------------------------

def sets_of(pgs: Sequence[PlayerGame]) -> list[tuple[str, list[int]]]:
    """Sets of one player's games, as the product shows them: chronological blocks of 20 (a
    last block of 10–19 kept) and calendar months with at least 10 games. (kind, indices)."""
    by_player: dict[str, list[int]] = defaultdict(list)
    for i, pg in enumerate(pgs):
        by_player[pg.player].append(i)
    out: list[tuple[str, list[int]]] = []
    for indices in by_player.values():
        indices.sort(key=lambda i: pgs[i].played_at)
        for start in range(0, len(indices), SET_SIZE):
            block = indices[start:start + SET_SIZE]
            if len(block) >= SET_MIN:
                out.append(("block of 20", block))
        months: dict[str, list[int]] = defaultdict(list)
        for i in indices:
            months[datetime.fromtimestamp(pgs[i].played_at / 1000, UTC).strftime("%Y-%m")].append(i)
        out += [("month", m) for m in months.values() if len(m) >= SET_MIN]
    return out


# --- figures -----------------------------------------------------------------------------------

def figures(estimate: Floats, low: Floats, high: Floats, real: Floats) -> dict[str, float]:
    err = np.abs(estimate - real)
    return {"n": len(real), "mae": round(float(err.mean()), 1),
            "median_ae": round(float(np.median(err)), 1),
            "coverage_10_90": round(float(np.mean((real >= low) & (real <= high))), 3),
            "mean_width": round(float(np.mean(high - low)), 1)}


class AcplLine:
    """The one-feature baseline: rating = a + b · log(1 + ACPL) by least squares, its range the
    10th and 90th percentiles of the training residuals."""

    def __init__(self, acpl: Floats, rating: Floats) -> None:
        x = np.log1p(acpl)
        self.b, self.a = (float(v) for v in np.polyfit(x, rating, 1))
        residuals = rating - self.predict(acpl)
        self.r10, self.r90 = (float(v) for v in np.percentile(residuals, [10, 90]))

    def predict(self, acpl: Floats) -> Floats:
        out: Floats = self.a + self.b * np.log1p(acpl)
        return out

    def figures(self, acpl: Floats, real: Floats) -> dict[str, float]:
        est = self.predict(acpl)
        return figures(est, est + self.r10, est + self.r90, real)


def median_figures(train: Floats, real: Floats) -> dict[str, float]:
    med, p10, p90 = (float(v) for v in np.percentile(train, [50, 10, 90]))
    n = len(real)
    return figures(np.full(n, med), np.full(n, p10), np.full(n, p90), real)


@dataclass
class Data:
    """The split's arrays: cell counts, ratings, ACPL of the player-games with a scored move."""

    pgs: list[PlayerGame]
    counts: Ints
    ratings: Floats
    acpl: Floats


def arrays(pgs: list[PlayerGame]) -> Data:
    kept = [pg for pg in pgs if pg.features.acpl is not None]
    counts = np.stack([count_cells(CONTEXTS, LOSS_EDGES, [pg.features], ENDINGS)
                       for pg in kept])
    return Data(kept, counts, np.asarray([pg.rating for pg in kept], dtype=np.float64),
                np.asarray([pg.features.acpl for pg in kept], dtype=np.float64))


def set_arrays(d: Data) -> tuple[list[tuple[str, list[int]]], Ints, Floats, Floats, Floats]:
    """The sets of a split: (kind, indices), summed counts, size, mean rating, mean ACPL."""
    sets = sets_of(d.pgs)
    counts = np.stack([d.counts[ix].sum(axis=0) for _, ix in sets])
    sizes = np.asarray([len(ix) for _, ix in sets], dtype=np.float64)
    real = np.asarray([d.ratings[ix].mean() for _, ix in sets])
    acpl = np.asarray([d.acpl[ix].mean() for _, ix in sets])
    return sets, counts, sizes, real, acpl


def calibrate(val: Data, log_probs_grid: Floats, log_prior: Floats) -> tuple[float, float]:
    """The game temper τ and the set exponent β, each so that 80 % of validation ranges hold."""
    ll = val.counts.astype(np.float64) @ log_probs_grid
    ones = np.ones(len(val.ratings))
    tau = solve(0.8, lambda t: coverage(ll, log_prior, t * ones, val.ratings), 0.01, 1.0)
    _, counts, sizes, real, _ = set_arrays(val)
    set_ll = counts.astype(np.float64) @ log_probs_grid
    beta = solve(0.8, lambda b: coverage(set_ll, log_prior, tau * sizes ** (b - 1), real),
                 0.0, 1.0)
    return tau, beta


def model_figures(model_data: dict[str, Any], d: Data) -> dict[str, Any]:
    """The held-out figures of the model as shipped (through tracker.analysis.level)."""
    model = level_model_from_json(model_data)
    levels = [game_level(model, pg.features) for pg in d.pgs]
    est, low, high = (np.asarray(v, dtype=np.float64) for v in zip(
        *((lv.estimate, lv.low, lv.high) for lv in levels), strict=True))
    sets = sets_of(d.pgs)
    set_levels = [set_level(model, [d.pgs[i].features for i in ix]) for _, ix in sets]
    real = np.asarray([d.ratings[ix].mean() for _, ix in sets])
    s_est, s_low, s_high = (np.asarray(v, dtype=np.float64) for v in zip(
        *((lv.estimate, lv.low, lv.high) for lv in set_levels), strict=True))
    per_kind = {kind: figures(s_est[m], s_low[m], s_high[m], real[m])
                for kind in ("block of 20", "month")
                if (m := np.asarray([k == kind for k, _ in sets])).any()}
    bands = {}
    for lo in range(600, 2800, 200):
        m = (d.ratings >= lo) & (d.ratings < lo + 200)
        if m.sum() >= 50:
            bands[f"{lo}-{lo + 199}"] = figures(est[m], low[m], high[m], d.ratings[m])
    return {"games": figures(est, low, high, d.ratings),
            "sets": figures(s_est, s_low, s_high, real), "sets_by_kind": per_kind,
            "games_by_rating": bands}


def baseline_figures(train: Data, test: Data) -> dict[str, Any]:
    line = AcplLine(train.acpl, train.ratings)
    _, _, _, train_real, train_acpl = set_arrays(train)
    _, _, _, test_real, test_acpl = set_arrays(test)
    set_line = AcplLine(train_acpl, train_real)
    return {
        "training_median": {"games": median_figures(train.ratings, test.ratings),
                            "sets": median_figures(train_real, test_real)},
        "acpl_line": {"games": line.figures(test.acpl, test.ratings),
                      "sets": set_line.figures(test_acpl, test_real),
                      "fit": f"rating = {line.a:.1f} + {line.b:.1f} · ln(1 + ACPL) per game; "
                             f"{set_line.a:.1f} + {set_line.b:.1f} · ln(1 + mean ACPL) per set"},
    }


def fit(pgs: list[PlayerGame], sha256: str, games: int, data_name: str) -> dict[str, Any]:
    parts = {name: arrays([pg for pg in pgs if split_of(pg.player) == name])
             for name in ("train", "validation", "held-out")}
    train = parts["train"]
    log_probs = fit_log_probs(train.counts, train.ratings)
    prior = fit_prior(train.ratings)
    g = grid()
    # cells × grid: log P(cell's bin | its context, rating) between the centres
    log_probs_grid = normalised(np.stack([np.interp(g, CENTRES, log_probs[:, j])
                                          for j in range(log_probs.shape[1])], axis=1),
                                blocks(CONTEXTS, LOSS_EDGES, ENDINGS)).T
    tau, beta = calibrate(parts["validation"], log_probs_grid, np.log(prior))
    lo, hi = (float(v) for v in np.percentile(train.ratings, [0.5, 99.5]))
    model: dict[str, Any] = {
        "key": KEY, "version": VERSION, "perf": PERF,
        "description": "The level a rapid game shows, from the Win% each move lost "
                       "(docs/strength.md). Inputs: the evals of the player's moves (Win% before "
                       "and after, ply). Never a rating.",
        "features": "per move: context (mover's Win% before: <15, 15-85, >85 × ply 1-20, "
                    "21-60, 61+) × Win% lost (bins by loss_edges)",
        "loss_edges": LOSS_EDGES, "contexts": CONTEXTS, "endings": ENDINGS,
        "ratings": CENTRES,
        "log_probs": [[round(float(v), 5) for v in row] for row in log_probs],
        "grid": GRID, "prior": [float(f"{v:.6g}") for v in prior],
        "temper": {"game": round(tau, 4), "set_exponent": round(beta, 4)},
        "fitted_range": [round(lo), round(hi)],
        "training": {
            "data": f"{data_name}: {games:,} rated standard rapid Lichess games with Lichess's "
                    "server analysis (2014-07 … 2022-12), the game histories of ~4,750 players "
                    "met in rapid tournaments: a sample of analysed games",
            "sha256": sha256,
            "split": "by player: sha256('level-split:' + user id), first byte mod 10: 0-5 "
                     "train, 6-7 validation (temper), 8-9 held out (figures)",
            "player_games": {k: len(v.pgs) for k, v in parts.items()},
            "players": {k: len({pg.player for pg in v.pgs}) for k, v in parts.items()},
            "kernel_sigma": KERNEL_SIGMA, "smoothing_moves": SMOOTHING,
            "prior_bandwidth": PRIOR_BANDWIDTH,
        },
    }
    test = parts["held-out"]
    model["held_out"] = {"model": model_figures(model, test),
                         **baseline_figures(train, test),
                         "evals": "Lichess server analysis"}
    return model


def render(model: dict[str, Any]) -> str:
    h = model["held_out"]
    rows = [("level model", h["model"]), ("training median", h["training_median"]),
            ("ACPL line", h["acpl_line"])]
    lines = [f"{model['key']}-{model['version']}: temper {model['temper']}, fitted range "
             f"{model['fitted_range']}, player-games {model['training']['player_games']}",
             f"{'held out':<18}{'':>3}{'n':>7}{'MAE':>8}{'medAE':>8}{'cover':>8}{'width':>8}"]
    for label, f in rows:
        for unit in ("games", "sets"):
            x = f[unit]
            lines.append(f"{label:<18}{unit:>6}{x['n']:>7}{x['mae']:>8}{x['median_ae']:>8}"
                         f"{x['coverage_10_90']:>8}{x['mean_width']:>8}")
    for kind, x in h["model"]["sets_by_kind"].items():
        lines.append(f"  model, sets by {kind}: {x}")
    for band, x in h["model"]["games_by_rating"].items():
        lines.append(f"  model, games rated {band}: {x}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    pgs, sha256, games = load(args.data)
    model = fit(pgs, sha256, games, args.data.name)
    args.out.write_text(json.dumps(model, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(render(model))
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
