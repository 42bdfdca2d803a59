"""Fit the level models from analysed Lichess games:
python scripts/fit_level_model.py RAPID [--speeds PGN] [--out-dir tracker/analysis/models]

RAPID: the shared analysed rapid games (``lichess-rapid-analysed-41k.ndjson.zst``: one game per
line in the Lichess API export format, with ``analysis[]``); PGN: the shared analysed games of
every speed (``lichess-2020-01-analysed-989.pgn``, ``[%eval]`` and ``[%clk]``). Writes
``level-<speed>-5.json`` for rapid, blitz, bullet and classical. Reproducible: the splits are a
fixed hash of the player's id, the bootstrap has a fixed seed. Prints the held-out figures beside
the two baselines measured in the same run (the training median; a least-squares line on
ln(1 + ACPL)) and writes them into each model file (``docs/strength.md``).

The model (STRENGTH.md §3, §3a; no rating among the inputs):

1. Each player-game → its summary (``tracker.analysis.level.SUMMARY``: ACPL, accuracy, error
   rates, loss quantiles, by phase and position; then, model 5, ``FeatureSpec``'s columns: his
   losses by what the board showed (``tracker.analysis.board``), his own first two moves among
   the 40 commonest in training, the clock setting) → one score, a ridge fit of the rating on
   the summary (training players, rapid).
2. The likelihood: per rating of the grid, the mean and the spread of the score of a player of
   that rating (local-linear kernel fits on the training players: heteroscedastic).
3. The range: the 10th–90th percentiles of the likelihood under a flat prior (a population prior
   shrinks a 2300 to 1700: its range misses); the spread is scaled on validation players so 80 %
   of the single games' ranges hold. The estimate: the median under the population prior, kept
   inside the range.
4. Sets (``set`` in the file): a second ridge fit, of a set's mean rating on the mean of its games'
   set basis (each game's summary and, per knot at the training games' 10th, 50th and 90th
   percentiles of each feature, max(0, feature − knot): a set's score is the mean of its games'
   scores, and the weights bend where a feature's effect does; with fewer than 20 training sets per
   weight, the summary alone), on training players' sets (their blocks of 20 and months of ≥ 10
   games, and 6 random sets of 5–25 games per player); its score's mean and spread per rating
   (kernel fits on those sets), a set of n games' spread ∝ √(ρ + (1 − ρ)/n), ρ by maximum
   likelihood. On validation players: the spread's scale so that 80 % of the sets' ranges hold (flat
   prior), and the set estimate's prior: the set prior^w × a smooth tilt (model 5), w and the
   tilt chosen by coordinate descent of the validation sets' MAE with a penalty on a worst
   200-point band bias beyond 60 (the power prior alone, w the largest within 60, is recorded
   beside it). Sets of fewer than 5 games: the mean of the games' scores through the
   single-game likelihood, its spread shrunk to ρ + (1 − ρ)/n (ρ set on validation players so that
   80 % of the sets' ranges hold), as in model 2.
5. Every other speed: the rapid scores (per game and per set), on the speed's own scale:
   mean(r) = rapid mean(c + d·(r − 1500)), spread k · rapid spread(…): c, d, k fitted (maximum
   likelihood) on 70 % of the PGN's players of that speed, figures on the other 30 %; the prior
   is the speed's ratings.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import chess.pgn
import numpy as np
import numpy.typing as npt
import zstandard

from tracker.analysis.board import CHANCE, TOOK_HANGING, board_flags
from tracker.analysis.level import (
    SUMMARY,
    FeatureSpec,
    GameFeatures,
    clock_setting,
    estimates,
    game_level,
    level_features,
    level_model_from_json,
    quantiles,
    set_estimates,
    set_log_likelihood,
    summary,
    tilt_hats,
)
from tracker.core.evals import PlyEval, from_lichess_entry

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tracker" / "analysis" / "models"
DEFAULT_SPEEDS = ROOT.parent / "shared" / "data" / "analysed" / "lichess-2020-01-analysed-989.pgn"

VERSION = 5
GRID = {"low": 400, "high": 3000, "step": 10}
RIDGE = 1.0
MEAN_BANDWIDTH, SD_BANDWIDTH, MIN_WEIGHT = 80.0, 120.0, 50.0
PRIOR_BANDWIDTH = 40.0
SPEED_PRIOR_BANDWIDTH = 100.0
SET_SIZE, SET_MIN = 20, 10
#: Bands (200 points) with fewer held-out player-games (sets) than this are not judged.
BAND_MIN_GAMES, BAND_MIN_SETS = 100, 20
BAND_MIN_SPEED = 30
MAX_SET_BIAS = 50.0
#: The set fit: sets of training players' games (their natural blocks and months, and
#: SET_FIT_SAMPLES random sets of SET_FIT_MIN–SET_FIT_MAX games per player), its ridge penalty,
#: bandwidths, the least kernel weight, the worst band bias allowed on validation players.
SET_FIT_MIN, SET_FIT_MAX, SET_FIT_SAMPLES = 5, 25, 6
SET_RIDGE = 10.0
#: The set fit's knots: these percentiles of each summary feature over the training games
#: (chosen on validation players among 1, 3 and 5 knots and ridge penalties 3, 10, 30).
SET_KNOTS = (0.1, 0.5, 0.9)
#: Fewer training sets than this per weight of the hinged basis and the set fit reads the
#: summary alone (no knots: on a few hundred sets 124 weights fit the noise).
SET_SETS_PER_WEIGHT = 20
SET_MEAN_BANDWIDTH, SET_SD_BANDWIDTH, SET_MIN_WEIGHT, SET_PRIOR_BANDWIDTH = 150.0, 150.0, 10.0, 60.0
#: The opening identities read (model 5): the commonest of the training player-games' own first
#: two moves (chosen on validation players among 12-120 identities, docs/experiments-opening.md).
OPENING_IDENTITIES = 40
#: The set estimate's prior shape (model 5): the set prior^w × exp(Σ aⱼ·hatⱼ(r)), triangles of
#: half-width TILT_WIDTH at TILT_KNOTS; w and a by coordinate descent, from TILT_STARTS starts
#: (seeded), of the validation sets' MAE + TILT_PENALTY per point of worst band bias beyond
#: SET_FIT_MAX_BIAS + TILT_ROUGHNESS · Σ(Δ²a)² (docs/experiments-prior.md, -stack.md).
TILT_KNOTS = (600.0, 1000.0, 1400.0, 1800.0, 2200.0, 2600.0)
TILT_WIDTH = 400.0
TILT_STARTS, TILT_SEED, TILT_PENALTY, TILT_ROUGHNESS = 12, 7, 10.0, 1.0
SET_FIT_MAX_BIAS = 60.0
#: Fewer training sets than this and the model has no set fit (model 2's combination only).
SET_FIT_LEAST = 20
#: The least coverage of the set ranges in any 200-point band of validation players' sets as
#: shown (blocks, months; bands with at least BAND_MIN_SETS sets): the spread widens until it
#: holds (overall coverage then a little above 80 %: a wide honest range beats a narrow one).
SET_BAND_MIN_COVERAGE = 0.75
BOOTSTRAP = 200
SPEEDS = ("blitz", "bullet", "classical")

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PlayerGame:
    """One player's side of one game: who, their rating (the target, never an input), when,
    the speed, and what the model reads."""

    game_id: str
    player: str
    rating: int
    played_at: int
    features: GameFeatures
    perf: str = "rapid"


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
    sans = str(game.get("moves", "")).split()
    flags = board_flags(sans)
    for color in ("white", "black"):
        side = game["players"][color]
        user = side.get("user", {}).get("id")
        if user is None or "rating" not in side:
            continue
        winner = game.get("winner")
        score = 0.5 if winner is None else 1.0 if winner == color else 0.0
        features = level_features(evals, color, clock=setting, result=score,
                                  clocks=game.get("clocks"), status=game.get("status"),
                                  sans=sans, flags=flags)
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


def speed_of(initial: int, increment: int) -> str:
    """Lichess's speed of a clock setting (estimated time initial + 40 × increment)."""
    total = initial + 40 * increment
    return ("ultraBullet" if total < 30 else "bullet" if total < 180 else "blitz" if total < 480
            else "rapid" if total < 1500 else "classical")


def load_pgn(path: Path) -> tuple[list[PlayerGame], str, int]:
    """Every player-game of a PGN with ``[%eval]`` (and ``[%clk]``) comments, its speed from
    the TimeControl tag (games without one, correspondence, are left out), the sha256 of the
    file, the game count."""
    raw = path.read_bytes()
    out: list[PlayerGame] = []
    games = 0
    with io.StringIO(raw.decode("utf-8")) as text:
        while (game := chess.pgn.read_game(text)) is not None:
            games += 1
            tags = game.headers
            control = tags.get("TimeControl", "-")
            if "+" not in control:
                continue
            initial, increment = (int(x) for x in control.split("+"))
            evals: list[PlyEval] = []
            clocks: list[int | None] = []
            sans = [node.san() for node in game.mainline()]
            flags = board_flags(sans)
            for node in game.mainline():
                pov = node.eval()
                white = pov.white() if pov is not None else None
                evals.append(PlyEval(None, None) if white is None
                             else PlyEval(None, white.mate()) if white.is_mate()
                             else PlyEval(white.score(), None))
                seconds = node.clock()
                clocks.append(None if seconds is None else round(seconds * 100))
            known = [c for c in clocks if c is not None]
            result = tags.get("Result", "*")
            played = datetime.strptime(f"{tags['UTCDate']} {tags['UTCTime']}",
                                       "%Y.%m.%d %H:%M:%S").replace(tzinfo=UTC)
            for color, tag in (("white", "White"), ("black", "Black")):
                score = (0.5 if result == "1/2-1/2" else None if result == "*"
                         else 1.0 if (result == "1-0") == (color == "white") else 0.0)
                features = level_features(evals, color, clock=(initial, increment),
                                          clocks=known if len(known) == len(clocks) else None,
                                          result=score, sans=sans, flags=flags)
                out.append(PlayerGame(tags.get("Site", ""), tags[tag], int(tags[f"{tag}Elo"]),
                                      int(played.timestamp() * 1000), features,
                                      speed_of(initial, increment)))
    return out, hashlib.sha256(raw).hexdigest(), games


def split_of(player: str) -> str:
    """The fixed split by player: sha256 of the id, 60 % train, 20 % validation, 20 % held out.
    """
    bucket = hashlib.sha256(f"level-split:{player}".encode()).digest()[0] % 10
    return "train" if bucket < 6 else "validation" if bucket < 8 else "held-out"


def speed_split_of(player: str) -> str:
    """The speeds' split by player (PGN): 70 % fit, 30 % held out."""
    bucket = hashlib.sha256(f"level-speed-split:{player}".encode()).digest()[0] % 10
    return "train" if bucket < 7 else "held-out"


def grid() -> Floats:
    out: Floats = np.arange(GRID["low"], GRID["high"] + GRID["step"] / 2, GRID["step"],
                            dtype=np.float64)
    return out


def rounded(xs: Floats | Sequence[float], digits: int = 6) -> list[float]:
    return [float(f"{float(v):.{digits}g}") for v in xs]


# --- the fit -----------------------------------------------------------------------------------

@dataclass
class Ridge:
    """rating ≈ intercept + Σ coef · (x − centre) / scale, least squares with an L2 penalty."""

    centre: Floats
    scale: Floats
    coef: Floats
    intercept: float

    @classmethod
    def fit(cls, x: Floats, y: Floats, penalty_weight: float = RIDGE) -> Ridge:
        centre, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
        z = (x - centre) / scale
        penalty = penalty_weight * np.eye(z.shape[1])
        coef = np.linalg.solve(z.T @ z + penalty, z.T @ (y - y.mean()))
        return cls(centre, scale, coef, float(y.mean()))

    def predict(self, x: Floats) -> Floats:
        out: Floats = self.intercept + ((x - self.centre) / self.scale) @ self.coef
        return out

    def json(self) -> dict[str, Any]:
        return {"centre": rounded(self.centre), "scale": rounded(self.scale),
                "coef": rounded(self.coef), "intercept": float(f"{self.intercept:.8g}")}


def kernel_fit(x: Floats, y: Floats, at: Floats, bandwidth: float,
               least: float = MIN_WEIGHT) -> Floats:
    """Local-linear kernel regression of ``y`` on ``x`` at ``at`` (NaN where the kernel's weight
    is below ``least``)."""
    out = np.full(len(at), np.nan)
    for i, g in enumerate(at):
        w = np.exp(-0.5 * ((x - g) / bandwidth) ** 2)
        if w.sum() < least:
            continue
        a = np.stack([np.ones_like(x), x - g], axis=1) * np.sqrt(w)[:, None]
        out[i] = np.linalg.lstsq(a, y * np.sqrt(w), rcond=None)[0][0]
    return out


def extended(values: Floats, linear: bool) -> Floats:
    """``values`` (NaN outside the data) carried to the grid's ends: linearly (the slope of the
    last 100 points) or as constants."""
    out = values.copy()
    ok = np.flatnonzero(~np.isnan(out))
    first, last = int(ok[0]), int(ok[-1])
    g = grid()
    span = min(10, last - first)
    slope0 = (out[first + span] - out[first]) / (g[first + span] - g[first]) if linear else 0.0
    slope1 = (out[last] - out[last - span]) / (g[last] - g[last - span]) if linear else 0.0
    out[:first] = out[first] + slope0 * (g[:first] - g[first])
    out[last + 1:] = out[last] + slope1 * (g[last + 1:] - g[last])
    return out


def fit_likelihood(score: Floats, rating: Floats) -> tuple[Floats, Floats]:
    """The score's mean (non-decreasing) and spread per rating of the grid."""
    g = grid()
    mean = np.maximum.accumulate(extended(kernel_fit(rating, score, g, MEAN_BANDWIDTH), True))
    residual = score - np.interp(rating, g, mean)
    var = extended(kernel_fit(rating, residual ** 2, g, SD_BANDWIDTH), False)
    return mean, np.sqrt(np.maximum(var, 1.0))


def fit_prior(ratings: Floats, bandwidth: float = PRIOR_BANDWIDTH) -> Floats:
    """The ratings' density on the grid (Gaussian kernel), with a floor of 1e-4 of its peak so
    no rating on the grid is impossible."""
    g = grid()
    density = np.exp(-0.5 * ((g[:, None] - ratings[None, :]) / bandwidth) ** 2).sum(axis=1)
    density /= density.sum()
    floored = np.maximum(density, density.max() * 1e-4)
    out: Floats = floored / floored.sum()
    return out


def within_player_correlation(z: Floats, players: Sequence[str]) -> float:
    """The share of the standardised scores' variance common to a player's games (one-way
    analysis of variance over players with ≥ 2 games)."""
    by_player: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(players):
        by_player[p].append(i)
    groups = [z[ix] for ix in by_player.values() if len(ix) >= 2]
    if not groups:
        return 0.0
    within = float(np.mean([g.var(ddof=1) for g in groups]))
    between = float(np.var([g.mean() for g in groups]) - np.mean([within / len(g) for g in groups]))
    return max(0.0, between / (between + within))


def solve(target: float, f: Callable[[float], float], lo: float, hi: float) -> float:
    """The x in [lo, hi] where the increasing ``f`` crosses ``target`` (bisection, 30 steps)."""
    for _ in range(30):
        mid = (lo + hi) / 2
        if f(mid) < target:
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
        indices.sort(key=lambda i: (pgs[i].played_at, pgs[i].game_id))
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

class Boot:
    """Player-level bootstrap weights: :data:`BOOTSTRAP` resamples of the players (fixed seed),
    each item weighted by how often its player was drawn."""

    def __init__(self, players: Sequence[str]) -> None:
        names = sorted(set(players))
        code = {p: i for i, p in enumerate(names)}
        ix = np.asarray([code[p] for p in players])
        rng = np.random.default_rng(20261206)
        draws = rng.integers(0, len(names), size=(BOOTSTRAP, len(names)))
        counts = np.stack([np.bincount(d, minlength=len(names)) for d in draws])
        self.weights: Floats = counts[:, ix].astype(np.float64)  # resamples × items
        self.players = len(names)


def _ci(values: Floats, weights: Floats, digits: int = 1) -> list[float]:
    """The 2.5th–97.5th percentiles of the weighted means of ``values`` over the resamples."""
    total = weights.sum(axis=1)
    ok = total > 0
    means = (weights[ok] @ values) / total[ok]
    return [round(float(v), digits) for v in np.percentile(means, [2.5, 97.5])]


def figures(estimate: Floats, low: Floats, high: Floats, real: Floats,
            boot: Boot | None = None, mask: npt.NDArray[np.bool_] | None = None
            ) -> dict[str, Any]:
    """MAE, median AE, mean signed error (bias), 10–90 % coverage, mean width; with ``boot``,
    95 % intervals of MAE, bias and coverage from the player-level bootstrap."""
    m = np.ones(len(real), dtype=bool) if mask is None else mask
    err = estimate[m] - real[m]
    hit = ((real[m] >= low[m]) & (real[m] <= high[m])).astype(np.float64)
    out: dict[str, Any] = {
        "n": int(m.sum()), "mae": round(float(np.abs(err).mean()), 1),
        "median_ae": round(float(np.median(np.abs(err))), 1),
        "bias": round(float(err.mean()), 1),
        "coverage_10_90": round(float(hit.mean()), 3),
        "mean_width": round(float(np.mean(high[m] - low[m])), 1)}
    if boot is not None:
        w = boot.weights[:, m]
        out["mae_ci"] = _ci(np.abs(err), w)
        out["bias_ci"] = _ci(err, w)
        out["coverage_ci"] = _ci(hit, w, 3)
    return out


def by_band(estimate: Floats, low: Floats, high: Floats, real: Floats, boot: Boot | None,
            least: int) -> dict[str, dict[str, Any]]:
    """:func:`figures` per 200-point band of real ratings with at least ``least`` items."""
    out = {}
    for lo in range(600, 2800, 200):
        m = (real >= lo) & (real < lo + 200)
        if m.sum() >= least:
            out[f"{lo}-{lo + 199}"] = figures(estimate, low, high, real, boot, m)
    return out


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

    def ranges(self, acpl: Floats) -> tuple[Floats, Floats, Floats]:
        est = self.predict(acpl)
        return est, est + self.r10, est + self.r90

    def figures(self, acpl: Floats, real: Floats) -> dict[str, Any]:
        return figures(*self.ranges(acpl), real)


def median_ranges(train: Floats, n: int) -> tuple[Floats, Floats, Floats]:
    med, p10, p90 = (float(v) for v in np.percentile(train, [50, 10, 90]))
    return np.full(n, med), np.full(n, p10), np.full(n, p90)


def median_figures(train: Floats, real: Floats) -> dict[str, Any]:
    """The training median's :func:`figures` on ``real``."""
    return figures(*median_ranges(train, len(real)), real)


@dataclass
class Data:
    """A split's player-games with a scored move: summaries, ratings, ACPL, players, and what
    the set fit reads of each game (:func:`hinged`: ``x`` until the knots are known)."""

    pgs: list[PlayerGame]
    x: Floats
    ratings: Floats
    acpl: Floats
    sx: Floats | None = None

    @property
    def players(self) -> list[str]:
        return [pg.player for pg in self.pgs]


def feature_spec(train: Sequence[PlayerGame]) -> FeatureSpec:
    """What model 5 reads beyond the summary, from the training player-games only: the
    :data:`OPENING_IDENTITIES` commonest own first two moves, the share of free pieces taken
    (for a game that offers none), and the means standing in for an unknown board or clock
    setting."""
    counts: dict[tuple[str, ...], int] = defaultdict(int)
    for pg in train:
        counts[pg.features.opening] += 1
    identities = tuple(k for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                       [:OPENING_IDENTITIES])  # ties by name: the order of the games is not read
    seen = [pg for pg in train if pg.features.moves
            and all(m.board is not None for m in pg.features.moves)]
    flags = [m.board or 0 for pg in seen for m in pg.features.moves]
    chances = [f for f in flags if f & CHANCE]
    free = sum(1 for f in chances if f & TOOK_HANGING) / len(chances) if chances else 0.5
    clocks = [c for pg in train if (c := clock_setting(pg.features.clock)) is not None]
    clock_mean = tuple(rounded(np.mean(clocks, axis=0))) if clocks else (0.0, 0.0)
    provisional = FeatureSpec(identities, (0.0,) * 7, clock_mean, round(free, 6))
    board = [summary(pg.features, provisional)[len(SUMMARY):len(SUMMARY) + 7] for pg in seen]
    board_mean = tuple(rounded(np.mean(board, axis=0))) if board else (0.0,) * 7
    return FeatureSpec(identities, board_mean, clock_mean, round(free, 6))


def arrays(pgs: Sequence[PlayerGame], spec: FeatureSpec | None = None) -> Data:
    """The player-games with a scored move and their summaries (with ``spec``'s columns)."""
    kept = [pg for pg in pgs if pg.features.moves and pg.features.acpl is not None]
    width = len(SUMMARY) + (len(spec.names()) if spec is not None else 0)
    x = (np.asarray([summary(pg.features, spec) for pg in kept], dtype=np.float64) if kept
         else np.zeros((0, width)))
    return Data(kept, x, np.asarray([pg.rating for pg in kept], dtype=np.float64),
                np.asarray([pg.features.acpl for pg in kept], dtype=np.float64))


def set_knots(train: Data) -> Floats:
    """The set fit's knot rows: the :data:`SET_KNOTS` percentiles of each summary feature over
    the training games (knot rows × features), rounded as the model file stores them."""
    out: Floats = np.asarray([rounded(row) for row in np.percentile(
        train.x, [100 * q for q in SET_KNOTS], axis=0)], dtype=np.float64)
    return out


def hinged(x: Floats, knots: Floats) -> Floats:
    """The set basis of games (rows × features): each row, then per knot row max(0, x − knot)
    (``tracker.analysis.level.set_basis``)."""
    out: Floats = np.hstack([x, *(np.maximum(x - k, 0.0) for k in knots)])
    return out


@dataclass
class Sets:
    """A split's sets: kind, indices, mean score, size, mean rating, mean ACPL, the player,
    the mean of the games' set basis (sets × basis; its first columns the mean summary)."""

    kinds: list[str]
    indices: list[list[int]]
    score: Floats
    size: Floats
    real: Floats
    acpl: Floats
    players: list[str]
    mean_x: Floats


def set_arrays(d: Data, score: Floats,
               sets: Sequence[tuple[str, list[int]]] | None = None) -> Sets:
    """The arrays of ``sets`` of ``d``'s games (default: :func:`sets_of`, as shown)."""
    chosen = sets_of(d.pgs) if sets is None else sets
    basis = d.x if d.sx is None else d.sx
    return Sets([k for k, _ in chosen], [ix for _, ix in chosen],
                np.asarray([score[ix].mean() for _, ix in chosen]),
                np.asarray([len(ix) for _, ix in chosen], dtype=np.float64),
                np.asarray([d.ratings[ix].mean() for _, ix in chosen]),
                np.asarray([d.acpl[ix].mean() for _, ix in chosen]),
                [d.pgs[ix[0]].player for _, ix in chosen],
                np.asarray([basis[ix].mean(axis=0) for _, ix in chosen]).reshape(
                    len(chosen), basis.shape[1]))


def by_player_in_time(d: Data) -> list[list[int]]:
    """Each player's games (indices into ``d``) in time order, players in sorted order: what
    the draws below depend on, whatever the input order."""
    by_player: dict[str, list[int]] = defaultdict(list)
    for i, pg in enumerate(d.pgs):
        by_player[pg.player].append(i)
    return [sorted(by_player[p], key=lambda i: (d.pgs[i].played_at, d.pgs[i].game_id))
            for p in sorted(by_player)]


def sampled_sets(d: Data, seed: int) -> list[tuple[str, list[int]]]:
    """Random sets for the set fit: :data:`SET_FIT_SAMPLES` per player with at least
    :data:`SET_FIT_MIN` games, each of a size drawn uniformly from SET_FIT_MIN to
    min(:data:`SET_FIT_MAX`, the player's games), its games drawn without replacement (seeded)."""
    rng = np.random.default_rng(seed)
    out: list[tuple[str, list[int]]] = []
    for games in by_player_in_time(d):
        if len(games) < SET_FIT_MIN:
            continue
        for _ in range(SET_FIT_SAMPLES):
            n = int(rng.integers(SET_FIT_MIN, min(SET_FIT_MAX, len(games)) + 1))
            out.append(("sample", sorted(games[k] for k in rng.choice(len(games), n,
                                                                      replace=False))))
    return out


def blocks_of(d: Data, size: int) -> list[tuple[str, list[int]]]:
    """Each player's games in chronological blocks of exactly ``size`` (a rest left out)."""
    return [(f"block of {size}", games[start:start + size])
            for games in by_player_in_time(d)
            for start in range(0, len(games) - size + 1, size)]


def fit_sets(train: Data, val: Data, knots: Floats) -> dict[str, Any]:
    """The set fit (a model file's ``set`` section): a ridge fit of a set's mean rating on the mean
    of its games' set basis (:func:`hinged` at ``knots``), on training players' sets
    (:func:`sets_of` and :func:`sampled_sets`); the mean and spread of its score per rating
    (local-linear kernel fits), the spread of a set of n games ∝ √(ρ + (1 − ρ)/n), ρ by maximum
    likelihood; the prior from the sets' ratings. Its spread's scale and prior weight are set on
    validation players (:func:`calibrate_sets`)."""
    s = set_arrays(train, np.zeros(len(train.pgs)), sets_of(train.pgs) + sampled_sets(train, 1))
    ridge = Ridge.fit(s.mean_x, s.real, SET_RIDGE)
    score = ridge.predict(s.mean_x)
    g = grid()
    mean = np.maximum.accumulate(extended(
        kernel_fit(s.real, score, g, SET_MEAN_BANDWIDTH, SET_MIN_WEIGHT), True))
    residual2 = (score - np.interp(s.real, g, mean)) ** 2
    best: tuple[float, float, Floats] | None = None
    for rho in np.arange(0.0, 0.5, 0.02):
        shrink = rho + (1 - rho) / s.size
        var = np.maximum(extended(kernel_fit(s.real, residual2 / shrink, g, SET_SD_BANDWIDTH,
                                             SET_MIN_WEIGHT), False), 1.0)
        at = np.interp(s.real, g, var) * shrink
        nll = 0.5 * float(np.sum(residual2 / at + np.log(at)))
        if best is None or nll < best[0]:
            best = (nll, float(rho), var)
    assert best is not None
    _, rho, var = best
    fit: dict[str, Any] = {
        "min_games": SET_FIT_MIN,
        "features": "the mean of the games' set basis: each game's summary (the model's "
                    "features, in order), then per knot row max(0, feature - knot)",
        "knots": [rounded(row) for row in knots],
        "knot_percentiles": [round(100 * q) for q in SET_KNOTS][:len(knots)],
        "regression": ridge.json(),
        "likelihood": {"mean": rounded(mean), "sd": rounded(np.sqrt(var))},
        "within_player_correlation": round(rho, 4),
        "prior": rounded(fit_prior(s.real, SET_PRIOR_BANDWIDTH)),
        "prior_weight": 0.0,
        "training": {"sets": len(s.kinds), "players": len(set(s.players)),
                     "sizes": f"{int(s.size.min())}-{int(s.size.max())}",
                     "ridge_penalty": SET_RIDGE,
                     "bandwidths": {"mean": SET_MEAN_BANDWIDTH, "sd": SET_SD_BANDWIDTH,
                                    "prior": SET_PRIOR_BANDWIDTH}}}
    return fit


def band_biases(est: Floats, real: Floats) -> list[float]:
    """The mean signed error per 200-point band with at least :data:`BAND_MIN_SETS` sets."""
    return [float((est - real)[m].mean()) for lo in range(600, 2800, 200)
            if (m := (real >= lo) & (real < lo + 200)).sum() >= BAND_MIN_SETS]


def calibrate_sets(model: dict[str, Any], val: Data) -> None:
    """On validation players' sets (as shown, and sampled): the set spread's scale so that
    80 % of the ranges hold, widened (by 1 % steps) until every band of the sets as shown holds
    :data:`SET_BAND_MIN_COVERAGE`; then the set prior's weight: the largest of 0, 0.05 … 1
    whose worst band bias stays within :data:`SET_FIT_MAX_BIAS` (the frontier is recorded)."""
    fit = model["set"]
    shown = sets_of(val.pgs)
    s = set_arrays(val, np.zeros(len(val.pgs)), shown + sampled_sets(val, 2))
    base_sd = np.asarray(fit["likelihood"]["sd"])

    def hits(k: float) -> npt.NDArray[np.bool_]:
        fit["likelihood"]["sd"] = rounded(base_sd * k)
        _, low, high = set_estimates(level_model_from_json(model), s.mean_x, s.size)
        out: npt.NDArray[np.bool_] = (s.real >= low) & (s.real <= high)
        return out

    def worst_band(k: float) -> float:
        hit, real = hits(k)[:len(shown)], s.real[:len(shown)]
        return min((float(hit[m].mean()) for lo in range(600, 2800, 200)
                    if (m := (real >= lo) & (real < lo + 200)).sum() >= BAND_MIN_SETS),
                   default=1.0)

    if not s.kinds:
        fit["training"]["validation_sets"] = 0
        return
    k = solve(0.8, lambda k: float(hits(k).mean()), 0.5, 2.0)
    while worst_band(k) < SET_BAND_MIN_COVERAGE and k < 2.0:
        k *= 1.01
    fit["likelihood"]["sd"] = rounded(base_sd * k)
    fit["likelihood"]["sd_scale"] = round(k, 4)
    fit["training"]["validation_coverage"] = round(float(hits(k).mean()), 3)
    frontier = []
    weight = 0.0
    for w in np.arange(0.0, 1.001, 0.05):
        fit["prior_weight"] = round(float(w), 2)
        est, _, _ = set_estimates(level_model_from_json(model), s.mean_x, s.size)
        worst = max((abs(b) for b in band_biases(est, s.real)), default=0.0)
        frontier.append({"prior_weight": round(float(w), 2),
                         "mae": round(float(np.abs(est - s.real).mean()), 1),
                         "worst_band_bias": round(worst, 1)})
        if worst <= SET_FIT_MAX_BIAS:
            weight = round(float(w), 2)
    fit["prior_weight"] = weight
    fit["training"]["validation_sets"] = len(s.kinds)
    fit["training"]["prior_weight_frontier"] = frontier
    tilt(model, s)


def tilt(model: dict[str, Any], s: Sets) -> None:
    """The set estimate's prior shape (model 5) on validation sets ``s``: the weight w and the
    tilt a of the set prior^w × exp(Σ aⱼ·hatⱼ) (:data:`TILT_KNOTS`) minimising the sets' MAE
    + :data:`TILT_PENALTY` per point of worst band bias beyond :data:`SET_FIT_MAX_BIAS` +
    :data:`TILT_ROUGHNESS` · Σ(Δ²a)², by coordinate descent (w in [0, 1], steps 1 … 0.05, w's
    a quarter of a's) from :data:`TILT_STARTS` seeded starts; the best start's (w, a) are
    written with their validation MAE and worst band bias beside the power prior's."""
    fit = model["set"]
    lm = level_model_from_json(model)
    t, sf = lm.tables, lm.tables.set
    assert sf is not None
    ll = set_log_likelihood(lm, sf.offset + s.mean_x @ sf.coef, s.size)
    low, high = quantiles(t.grid, ll, (0.1, 0.9))
    hats = tilt_hats(TILT_KNOTS, TILT_WIDTH, t.grid)

    def objective(w: float, a: Floats) -> tuple[float, float, float]:
        (e,) = quantiles(t.grid, ll + (w * sf.log_prior + a @ hats)[None, :], (0.5,))
        e = np.clip(e, low, high)
        mae = float(np.abs(e - s.real).mean())
        worst = max((abs(b) for b in band_biases(e, s.real)), default=0.0)
        rough = float(np.sum(np.diff(a, 2) ** 2))
        return (mae + TILT_PENALTY * max(0.0, worst - SET_FIT_MAX_BIAS) + TILT_ROUGHNESS * rough,
                mae, worst)

    rng = np.random.default_rng(TILT_SEED)
    starts = [(w, np.zeros(len(TILT_KNOTS))) for w in (0.4, 0.6, 0.8, 1.0)]
    starts += [(float(rng.choice([0.4, 0.6, 0.8, 1.0])), rng.normal(0, 0.5, len(TILT_KNOTS)))
               for _ in range(TILT_STARTS - len(starts))]
    best: tuple[float, Floats, tuple[float, float, float]] | None = None
    for w, a in starts:
        found = descend(objective, w, a)
        if best is None or found[2][0] < best[2][0]:
            best = found
    assert best is not None
    w, a, (_, mae, worst) = best
    power = next(f for f in fit["training"]["prior_weight_frontier"]
                 if f["prior_weight"] == fit["prior_weight"])
    fit["training"]["power_prior"] = power
    fit["prior_weight"] = round(w, 4)
    fit["prior_tilt"] = {"knots": list(TILT_KNOTS), "width": TILT_WIDTH, "a": rounded(a, 4),
                         "validation": {"mae": round(mae, 1), "worst_band_bias": round(worst, 1)},
                         "chosen": f"coordinate descent from {TILT_STARTS} starts (seed "
                                   f"{TILT_SEED}) of the validation sets' MAE + {TILT_PENALTY:g} "
                                   f"per point of worst band bias beyond {SET_FIT_MAX_BIAS:g} + "
                                   f"{TILT_ROUGHNESS:g} x roughness"}


def descend(objective: Callable[[float, Floats], tuple[float, float, float]], w: float,
            a: Floats) -> tuple[float, Floats, tuple[float, float, float]]:
    """Coordinate descent of ``objective(w, a)`` (its first value) over w in [0, 1] and each
    aⱼ, steps 1, 0.5, 0.25, 0.1, 0.05 (w's a quarter of that): (w, a, the objective there)."""
    current = objective(w, a)
    for step in (1.0, 0.5, 0.25, 0.1, 0.05):
        improved = True
        while improved:
            improved = False
            for j in range(-1, len(a)):
                for sign in (1, -1):
                    if j < 0:
                        w2, a2 = min(1.0, max(0.0, w + sign * step / 4)), a
                    else:
                        w2, a2 = w, a.copy()
                        a2[j] += sign * step
                    new = objective(w2, a2)
                    if new[0] < current[0] - 1e-6:
                        w, a, current = w2, a2, new
                        improved = True
    return w, a, current


def coverage_of(model: dict[str, Any], score: Floats, size: Floats, real: Floats) -> float:
    _, low, high = estimates(level_model_from_json(model), score, size)
    return float(np.mean((real >= low) & (real <= high)))


def worst_set_bias(model: dict[str, Any], s: Sets) -> float:
    est, _, _ = estimates(level_model_from_json(model), s.score, s.size)
    biases = [abs(float((est - s.real)[m].mean())) for lo in range(600, 2800, 200)
              if (m := (s.real >= lo) & (s.real < lo + 200)).sum() >= BAND_MIN_SETS]
    return max(biases, default=0.0)


def calibrate(model: dict[str, Any], val: Data, score: Floats) -> None:
    """On validation players: the spread's scale so that 80 % of single games' ranges hold,
    the within-player correlation so that 80 % of sets' ranges hold, and the prior's weight in
    a set's estimate (the largest of 0, 0.1 … 1 whose worst band bias stays within 50)."""
    base_sd = np.asarray(model["likelihood"]["sd"])
    ones = np.ones(len(score))

    def with_scale(k: float) -> float:
        model["likelihood"]["sd"] = rounded(base_sd * k)
        return coverage_of(model, score, ones, val.ratings)

    k = solve(0.8, with_scale, 0.5, 2.0)
    model["likelihood"]["sd"] = rounded(base_sd * k)
    model["likelihood"]["sd_scale"] = round(k, 4)
    s = set_arrays(val, score)
    if len(s.kinds):
        def with_rho(rho: float) -> float:
            model["within_player_correlation"] = rho
            return coverage_of(model, s.score, s.size, s.real)

        model["within_player_correlation"] = round(solve(0.8, with_rho, 0.0, 0.9), 4)
        weight = 0.0
        for w in np.arange(0.0, 1.01, 0.1):
            model["prior_weight"]["set_estimate"] = round(float(w), 2)
            if worst_set_bias(model, s) <= MAX_SET_BIAS:
                weight = round(float(w), 2)
        model["prior_weight"]["set_estimate"] = weight


def evaluate(model: dict[str, Any], test: Data, train: Data, train_score: Floats
             ) -> dict[str, Any]:
    """The held-out figures of the model as shipped (``tracker.analysis.level.estimates``) and
    of the baselines fitted on the training players in the same run: per game, per set, by
    band, by set size and kind, with 95 % player-level bootstrap intervals."""
    lm = level_model_from_json(model)
    score = np.asarray([lm.tables.offset + float(lm.tables.coef @ x) for x in test.x])
    est, low, high = estimates(lm, score, np.ones(len(score)))
    boot = Boot(test.players)
    line = AcplLine(train.acpl, train.ratings)
    out: dict[str, Any] = {
        "players": boot.players,
        "model": {"games": figures(est, low, high, test.ratings, boot),
                  "games_by_rating": by_band(est, low, high, test.ratings, boot,
                                             BAND_MIN_GAMES)},
        "training_median": {"games": figures(*median_ranges(train.ratings, len(test.ratings)),
                                             test.ratings, boot)},
        "acpl_line": {"games": figures(*line.ranges(test.acpl), test.ratings, boot),
                      "fit": f"rating = {line.a:.1f} + {line.b:.1f} · ln(1 + ACPL) per game"},
    }
    out["acpl_line"]["games_by_rating"] = by_band(*line.ranges(test.acpl), test.ratings, boot,
                                                  BAND_MIN_GAMES)
    out["mae_vs_acpl_line"] = round(out["model"]["games"]["mae"]
                                    / out["acpl_line"]["games"]["mae"], 3)
    s = set_arrays(test, score)
    if not s.kinds:
        return out
    s_est, s_low, s_high = set_estimates(lm, s.mean_x, s.size)
    sboot = Boot(s.players)
    model_sets = out["model"]
    model_sets["sets"] = figures(s_est, s_low, s_high, s.real, sboot)
    # model 2's combination (the mean of the games' scores), recalibrated in this run
    mean_scores = estimates(lm, s.score, s.size)
    out["mean_of_game_scores"] = {
        "sets": figures(*mean_scores, s.real, sboot),
        "sets_by_rating": by_band(*mean_scores, s.real, sboot, BAND_MIN_SETS),
        "how": "model 2's combination: the mean of the games' scores through the single-game "
               "likelihood, spread × √(ρ + (1 − ρ)/n), prior weight set_estimate"}
    for size in (2, SET_FIT_MIN):
        b = set_arrays(test, score, blocks_of(test, size))
        if b.kinds:
            model_sets.setdefault("blocks_by_size", {})[str(size)] = figures(
                *set_estimates(lm, b.mean_x, b.size), b.real, Boot(b.players))
    model_sets["sets_by_rating"] = by_band(s_est, s_low, s_high, s.real, sboot, BAND_MIN_SETS)
    kinds = np.asarray(s.kinds)
    model_sets["sets_by_kind"] = {k: figures(s_est, s_low, s_high, s.real, sboot, kinds == k)
                                  for k in ("block of 20", "month") if (kinds == k).any()}
    sizes = {"10-14": (10, 14), "15-19": (15, 19), "20+": (20, 10 ** 6)}
    model_sets["sets_by_size"] = {
        label: figures(s_est, s_low, s_high, s.real, sboot, (s.size >= a) & (s.size <= b))
        for label, (a, b) in sizes.items() if ((s.size >= a) & (s.size <= b)).any()}
    t = set_arrays(train, train_score)
    set_line = AcplLine(t.acpl, t.real)
    out["training_median"]["sets"] = figures(*median_ranges(t.real, len(s.real)), s.real, sboot)
    out["acpl_line"]["sets"] = figures(*set_line.ranges(s.acpl), s.real, sboot)
    out["acpl_line"]["sets_by_rating"] = by_band(*set_line.ranges(s.acpl), s.real, sboot,
                                                 BAND_MIN_SETS)
    out["acpl_line"]["fit"] += (f"; {set_line.a:.1f} + {set_line.b:.1f} · ln(1 + mean ACPL) "
                                "per set")
    return out


def weak_bands(held: dict[str, Any]) -> list[dict[str, Any]]:
    """Where the held-out figures say the model is weak: a band whose coverage is outside
    70–90 %, or whose set bias exceeds ±75, and the ends beyond the judged bands."""
    out: list[dict[str, Any]] = []
    for kind in ("games", "sets"):
        bands = held["model"].get(f"{kind}_by_rating", {})
        for band, f in bands.items():
            lo, hi = (int(v) for v in band.split("-"))
            why = []
            if not 0.7 <= f["coverage_10_90"] <= 0.9:
                why.append(f"the range held {f['coverage_10_90']:.0%} of held-out {kind} rated "
                           f"{band}")
            if kind == "sets" and abs(f["bias"]) > 75:
                why.append(f"sets rated {band} read {f['bias']:+.0f} on average")
            if why:
                out.append({"kind": kind, "low": lo, "high": hi, "why": "; ".join(why)})
        if bands:
            first = min(int(b.split("-")[0]) for b in bands)
            last = max(int(b.split("-")[1]) for b in bands)
            out.append({"kind": kind, "low": GRID["low"], "high": first - 1,
                        "why": f"too few held-out {kind} below {first} to check the model"})
            out.append({"kind": kind, "low": last + 1, "high": GRID["high"],
                        "why": f"too few held-out {kind} above {last} to check the model"})
    return out


def fit(pgs: list[PlayerGame], sha256: str, games: int, data_name: str) -> dict[str, Any]:
    """The rapid model (the base of every speed), with its held-out figures."""
    spec = feature_spec([pg for pg in pgs if split_of(pg.player) == "train"])
    parts = {name: arrays([pg for pg in pgs if split_of(pg.player) == name], spec)
             for name in ("train", "validation", "held-out")}
    train, val, test = parts["train"], parts["validation"], parts["held-out"]
    ridge = Ridge.fit(train.x, train.ratings)
    train_score = ridge.predict(train.x)
    mean, sd = fit_likelihood(train_score, train.ratings)
    g = grid()
    z = (train_score - np.interp(train.ratings, g, mean)) / np.interp(train.ratings, g, sd)
    rho = within_player_correlation(z, train.players)
    prior = fit_prior(train.ratings)
    lo, hi = (float(v) for v in np.percentile(train.ratings, [0.5, 99.5]))
    model: dict[str, Any] = {
        "key": "level-rapid", "version": VERSION, "perf": "rapid",
        "description": "The level a rapid game shows, from a summary of the Win% and centipawns "
                       "its moves lost, what the board showed at them, his own first two moves "
                       "and the clock setting (docs/strength.md). Never a rating, the result, "
                       "the status or the clocks.",
        "features": [*SUMMARY, *spec.names()],
        "extra_features": spec.json(),
        "regression": ridge.json(),
        "grid": GRID,
        "likelihood": {"mean": rounded(mean), "sd": rounded(sd)},
        "within_player_correlation": round(rho, 4),
        "prior": rounded(prior),
        "prior_weight": {"game_estimate": 1.0, "game_range": 0.0, "set_estimate": 0.0,
                         "set_range": 0.0},
        "fitted_range": [round(lo), round(hi)],
        "borrows": None,
    }
    val_score = ridge.predict(val.x)
    calibrate(model, val, val_score)
    n_sets = len(sets_of(train.pgs)) + len(sampled_sets(train, 1))
    if n_sets >= SET_FIT_LEAST:
        weights = train.x.shape[1] * (1 + len(SET_KNOTS))
        knots = (set_knots(train) if n_sets >= SET_SETS_PER_WEIGHT * weights
                 else np.zeros((0, train.x.shape[1])))
        for part in parts.values():
            part.sx = hinged(part.x, knots)
        model["set"] = fit_sets(train, val, knots)
        calibrate_sets(model, val)
    model["training"] = {
        "data": f"{data_name}: {games:,} rated standard rapid Lichess games with Lichess's "
                "server analysis (2014-07 … 2022-12), the game histories of ~4,750 players "
                "met in rapid tournaments: a sample of analysed games",
        "sha256": sha256,
        "split": "by player: sha256('level-split:' + user id), first byte mod 10: 0-5 train, "
                 "6-7 validation (spread, correlation, prior weight), 8-9 held out (figures)",
        "player_games": {k: len(v.pgs) for k, v in parts.items()},
        "players": {k: len(set(v.players)) for k, v in parts.items()},
        "within_player_correlation_training": round(rho, 4),
        "ridge_penalty": RIDGE, "bandwidths": {"mean": MEAN_BANDWIDTH, "sd": SD_BANDWIDTH,
                                               "prior": PRIOR_BANDWIDTH},
    }
    model["held_out"] = evaluate(model, test, train, train_score)
    model["held_out"]["evals"] = "Lichess server analysis"
    model["weak"] = weak_bands(model["held_out"])
    return model


def speed_model(base: dict[str, Any], speed: str, pgs: Sequence[PlayerGame], sha256: str,
                data_name: str) -> dict[str, Any]:
    """``speed``'s model: the rapid model's score on the speed's own scale (c, d, k by maximum
    likelihood on the fit players of the speed), the speed's prior, held-out figures."""
    lm = level_model_from_json(base)
    parts = {name: arrays([pg for pg in pgs if pg.perf == speed
                           and speed_split_of(pg.player) == name], lm.tables.spec)
             for name in ("train", "held-out")}
    train, test = parts["train"], parts["held-out"]
    g = grid()
    mean, sd = np.asarray(base["likelihood"]["mean"]), np.asarray(base["likelihood"]["sd"])
    score = np.asarray([lm.tables.offset + float(lm.tables.coef @ x) for x in train.x])
    best: tuple[float, float, float, float] | None = None
    for c in np.arange(800.0, 2400.0, 10.0):
        for d in np.arange(0.3, 1.71, 0.02):
            at = c + d * (train.ratings - 1500)
            zz = (score - np.interp(at, g, mean)) / np.interp(at, g, sd)
            k2 = float(np.mean(zz ** 2))
            nll = 0.5 * len(zz) * np.log(k2) + float(np.log(np.interp(at, g, sd)).sum())
            if best is None or nll < best[0]:
                best = (nll, float(c), float(d), k2 ** 0.5)
    assert best is not None
    _, c, d, k = best
    at = c + d * (g - 1500)
    lo, hi = (float(v) for v in np.percentile(train.ratings, [2.5, 97.5]))
    model = {**{k_: v for k_, v in base.items() if k_ not in ("held_out", "weak", "training")},
             "key": f"level-{speed}", "perf": speed,
             "description": base["description"].replace("rapid game", f"{speed} game"),
             "likelihood": {"mean": rounded(np.interp(at, g, mean)),
                            "sd": rounded(np.interp(at, g, sd) * k)},
             "prior": rounded(fit_prior(train.ratings, SPEED_PRIOR_BANDWIDTH)),
             "fitted_range": [round(lo), round(hi)],
             **({"set": speed_set(base["set"], at, k, fit_prior(train.ratings,
                                                                 SPEED_PRIOR_BANDWIDTH))}
                if "set" in base else {}),
             "speed_scale": {"c": round(c, 1), "d": round(d, 3), "k": round(k, 4),
                             "means": "score of a rated-r player = rapid mean(c + d·(r − 1500)),"
                                      " spread k · rapid spread(c + d·(r − 1500))"},
             "borrows": f"{speed} scale fitted on {len(train.pgs)} player-games; the feature "
                        "weights (per game and per set), the game-to-game correlation of a "
                        "player's games and the set prior's shape are the rapid fit's"}
    test_score = np.asarray([lm.tables.offset + float(lm.tables.coef @ x) for x in test.x])
    shipped = level_model_from_json(model)
    est, low, high = estimates(shipped, test_score, np.ones(len(test_score)))
    r_est, r_low, r_high = estimates(lm, test_score, np.ones(len(test_score)))
    boot = Boot(test.players)
    line = AcplLine(train.acpl, train.ratings)
    model["training"] = {
        "data": f"{data_name}: the {speed} games among 989 rated Lichess games of 2020-01-01 "
                "with Lichess's server analysis and clocks", "sha256": sha256,
        "split": "by player: sha256('level-speed-split:' + user name), first byte mod 10: 0-6 "
                 "fit (c, d, k, prior), 7-9 held out (figures)",
        "player_games": {k_: len(v.pgs) for k_, v in parts.items()},
        "players": {k_: len(set(v.players)) for k_, v in parts.items()}}
    model["held_out"] = {
        "players": boot.players,
        "model": {"games": figures(est, low, high, test.ratings, boot),
                  "games_by_rating": by_band(est, low, high, test.ratings, boot,
                                             BAND_MIN_SPEED)},
        "rapid_model_as_is": {"games": figures(r_est, r_low, r_high, test.ratings, boot)},
        "training_median": {"games": figures(*median_ranges(train.ratings, len(test.ratings)),
                                             test.ratings, boot)},
        "acpl_line": {"games": figures(*line.ranges(test.acpl), test.ratings, boot),
                      "fit": f"rating = {line.a:.1f} + {line.b:.1f} · ln(1 + ACPL) per game"},
        "sets": "not measured: the players of this file have one or two games each; a set's "
                f"combination is the rapid fit's (figures in level-rapid-{VERSION}.json)",
        "evals": "Lichess server analysis"}
    model["held_out"]["mae_vs_acpl_line"] = round(
        model["held_out"]["model"]["games"]["mae"]
        / model["held_out"]["acpl_line"]["games"]["mae"], 3)
    model["weak"] = [w for w in weak_bands(model["held_out"]) if w["kind"] == "games"]
    return model


def speed_set(fit: dict[str, Any], at: Floats, k: float, prior: Floats) -> dict[str, Any]:
    """The rapid set fit on a speed's scale: its mean and spread at ``at`` (c + d·(r − 1500)
    per rating r of the grid), the spread × ``k``, the speed's prior."""
    g = grid()
    mean, sd = np.asarray(fit["likelihood"]["mean"]), np.asarray(fit["likelihood"]["sd"])
    return {**fit, "likelihood": {**fit["likelihood"], "mean": rounded(np.interp(at, g, mean)),
                                  "sd": rounded(np.interp(at, g, sd) * k)},
            "prior": rounded(prior)}


def clock_summary(game: GameFeatures) -> list[float] | None:
    """What the clocks say of one player's game, or ``None`` without clocks: the share of the
    time budget left after the last move, the mean time spent per move against the budget's
    pace ((initial + 40 · increment) / 40), the share of moves made with < 10 % of the initial
    time left."""
    if game.clock is None or not game.moves or any(m.clock is None for m in game.moves):
        return None
    initial, increment = game.clock
    if initial <= 0:
        return None
    left = [float(m.clock) for m in game.moves if m.clock is not None]
    spent = [max(0.0, before - after + increment)
             for before, after in zip([float(initial), *left[:-1]], left, strict=True)]
    pace = (initial + 40 * increment) / 40
    return [left[-1] / initial, sum(spent) / len(spent) / pace,
            sum(1 for x in left if x < 0.1 * initial) / len(left)]


def clock_gain(models: dict[str, dict[str, Any]], pgs: Sequence[PlayerGame]) -> dict[str, Any]:
    """Do the clocks help, on held-out players? On the speeds' PGN games with clocks: a least
    squares correction of the shipped estimate by :func:`clock_summary` (with a speed's
    intercept), fitted on the speeds' fit players, its MAE on their held-out players against the
    estimate alone (the model does not ship it: this measures whether it should)."""
    rows: dict[str, list[tuple[float, list[float], float, str]]] = {"train": [], "held-out": []}
    for pg in pgs:
        extra = clock_summary(pg.features)
        if pg.perf not in models or extra is None or pg.features.acpl is None:
            continue
        lm = level_model_from_json(models[pg.perf])
        est = float(game_level(lm, pg.features).estimate)
        rows[speed_split_of(pg.player)].append((est, extra, float(pg.rating), pg.perf))
    speeds = sorted(models)

    def design(part: list[tuple[float, list[float], float, str]]) -> Floats:
        return np.asarray([[est, *extra, *(float(sp == s) for s in speeds)]
                           for est, extra, _, sp in part])

    train, test = rows["train"], rows["held-out"]
    if len(train) < 50 or len(test) < 20:
        return {"note": "too few games with clocks"}
    real_train = np.asarray([r for _, _, r, _ in train])
    real_test = np.asarray([r for _, _, r, _ in test])
    alone = np.asarray([est for est, _, _, _ in test])
    with_clocks = design(test) @ np.linalg.lstsq(design(train), real_train, rcond=None)[0]
    plain = [0, *range(4, 4 + len(speeds))]  # the estimate and the speeds' intercepts
    base = design(test)[:, plain] @ np.linalg.lstsq(design(train)[:, plain], real_train,
                                                    rcond=None)[0]
    return {"player_games": {"train": len(train), "held-out": len(test)},
            "mae_estimate": round(float(np.abs(alone - real_test).mean()), 1),
            "mae_recalibrated_without_clocks": round(float(np.abs(base - real_test).mean()), 1),
            "mae_recalibrated_with_clocks": round(float(np.abs(with_clocks - real_test).mean()),
                                                  1),
            "features": "share of the time left at the end, mean time per move against the "
                        "budget's pace, share of moves with < 10 % of the initial time left"}


def rapid_check(base: dict[str, Any], pgs: Sequence[PlayerGame]) -> dict[str, Any]:
    """The rapid model on the PGN's rapid games of every player (a population and a year the fit
    never saw)."""
    lm = level_model_from_json(base)
    d = arrays([pg for pg in pgs if pg.perf == "rapid"], lm.tables.spec)
    est, low, high = estimates(lm, np.asarray([lm.tables.offset + float(lm.tables.coef @ x)
                                               for x in d.x]), np.ones(len(d.pgs)))
    return figures(est, low, high, d.ratings, Boot(d.players))


# --- output ------------------------------------------------------------------------------------

def _row(label: str, f: dict[str, Any]) -> str:
    ci = f.get("mae_ci", ["", ""])
    return (f"{label:<34}{f['n']:>7}{f['mae']:>8} [{ci[0]}–{ci[1]}]{f['median_ae']:>8}"
            f"{f['bias']:>8}{f['coverage_10_90']:>8}{f['mean_width']:>8}")


def render(model: dict[str, Any]) -> str:
    h = model["held_out"]
    lines = [f"{model['key']}-{model['version']}: player-games "
             f"{model['training']['player_games']}, ρ {model['within_player_correlation']}, "
             f"prior weights {model['prior_weight']}",
             f"{'held out':<34}{'n':>7}{'MAE [95 %]':>16}{'medAE':>8}{'bias':>8}{'cover':>8}"
             f"{'width':>8}"]
    for label in ("model", "mean_of_game_scores", "rapid_model_as_is", "training_median",
                  "acpl_line"):
        for unit in ("games", "sets"):
            if isinstance(h.get(label), dict) and unit in h[label]:
                lines.append(_row(f"{label}, {unit}", h[label][unit]))
    for key in ("games_by_rating", "sets_by_rating", "sets_by_size", "sets_by_kind",
                "blocks_by_size"):
        for band, f in h["model"].get(key, {}).items():
            lines.append(_row(f"  {key.split('_by_')[0]} {band}", f))
    lines.append(f"MAE / ACPL line (games): {h['mae_vs_acpl_line']}")
    return "\n".join(lines)


def write(model: dict[str, Any], out_dir: Path) -> Path:
    path = out_dir / f"{model['key']}-{model['version']}.json"
    path.write_text(json.dumps(model, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--speeds", type=Path, default=DEFAULT_SPEEDS)
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    pgs, sha256, games = load(args.data)
    base = fit(pgs, sha256, games, args.data.name)
    speed_pgs, speed_sha, _ = load_pgn(args.speeds)
    base["held_out"]["rapid_2020_sample"] = rapid_check(base, speed_pgs)
    models = [base] + [speed_model(base, s, speed_pgs, speed_sha, args.speeds.name)
                       for s in SPEEDS]
    clocks = clock_gain({m["perf"]: m for m in models}, speed_pgs)
    for model in models[1:]:
        model["held_out"]["clocks"] = clocks
    for model in models:
        print(render(model))
        print(f"written: {write(model, args.out_dir)}")
    print(f"rapid model on the 2020 rapid sample: {base['held_out']['rapid_2020_sample']}")
    print(f"clocks, on the PGN's held-out players: {clocks}")
    print(f"refit in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
