"""The level a game, or a set of games, shows (STRENGTH.md §3, §3a). Pure but for reading the
model file.

Inputs: the moves' evals, the moves, the clock setting, the clocks where exported, the result
and the perf: never a rating (:class:`GameFeatures` keeps them all; the ``level-<perf>-5``
models read the evals of the player's own moves, what the board showed at them
(:mod:`tracker.analysis.board`), his own first two moves and the clock setting, never the
result, the status or the clocks; see ``docs/strength.md``). A model
(``tracker/analysis/models/level-<perf>-5.json``, fitted by ``scripts/fit_level_model.py`` from
the shared analysed games) turns a game's summary (:data:`SUMMARY`: accuracy, ACPL, error rates,
loss quantiles by phase…, then :class:`FeatureSpec`'s columns) into one score by a linear fit,
and knows, per rating of the perf's
Lichess scale, the mean and spread of that score (heteroscedastic). The likelihood over ratings
times a weak prior (a flat one for the range): the range is the 10th–90th percentiles,
calibrated on players the fit never saw so that it holds the real rating ~80 % of the time in
every 200-point band, not only on average.

A set of games (a month, the last 20) is read from the mean of what its games show. From
``set.min_games`` games on, by the model's set fit: another linear score, fitted on sets of
training players' games (the weights a set's average deserves are not a single game's), with
its own mean and spread per rating; as games of one player are correlated (style, form), that
spread does not shrink as 1/n but to ρ + (1 − ρ)/n. Fewer games (or a model without a set fit):
the mean of the games' scores, with the single-game spread shrunk the same way.

The set fit reads each game through a wider basis than the summary (model 4 on): the
summary and, per knot row of the fit (the training games' 10th, 50th and 90th percentiles of
each feature), max(0, feature − knot) (:func:`set_basis`). The set's score is the mean of its
games' set scores, so a game's set score can be computed once and kept. A set's estimate is the
median under the set prior^weight times a smooth tilt chosen on validation players
(:func:`prior_tilt`, model 5 on); its range stays the flat prior's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt

from tracker.analysis.board import (
    CAPTURE_AVAILABLE,
    CAPTURED,
    CHANCE,
    IN_CHECK,
    LEAVES_HANGING,
    OWN_HANGING,
    TOOK_HANGING,
    board_flags,
    own_opening,
)
from tracker.analysis.engine_calibration import lichess_era
from tracker.analysis.formulas import acpl as lichess_acpl
from tracker.analysis.formulas import move_accuracy, win_percent
from tracker.analysis.turning import win_curve
from tracker.core.evals import START, Color, PlyEval
from tracker.core.records import SPEEDS
from tracker.fide.scale import ScaleModel, fide_rating, models_for

#: The model files, one per perf fitted: ``level-<perf>-<version>.json``.
MODELS_DIR: Final = Path(__file__).parent / "models"
#: The model of each perf (key, version): each speed on its own Lichess scale.
MODEL_FILES: Final[Mapping[str, str]] = {
    speed: f"level-{speed}-5.json" for speed in ("bullet", "blitz", "rapid", "classical")}
#: Speeds without data of their own borrow the nearest speed's model, and every result says so.
BORROWED: Final[Mapping[str, str]] = {"ultraBullet": "bullet", "correspondence": "classical"}
#: Fewer moves than this in a game and the result says the range rests on little play.
FEW_MOVES: Final = 10
#: A range whose end comes within this many rating points of the end of the model's grid
#: (400–3000) is cut there: the likelihood goes on beyond it, so the range is narrower than
#: the moves say, and the result says so (:func:`grid_end`).
GRID_EDGE: Final = 30

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class MoveFeature:
    """One move of the player: their Win% (0–100, mover's view) before and after it, its ply
    (1-based), where the clocks were exported, the mover's time left before it (seconds), and
    where the moves are known, what the board showed (:func:`tracker.analysis.board.board_flags`'
    flags, ``None`` unknown)."""

    ply: int
    win_before: float
    win_after: float
    clock: float | None = None
    board: int | None = None


@dataclass(frozen=True, slots=True)
class GameFeatures:
    """What the level model reads of one player's game: model-independent, so it can be
    computed once and kept. ``moves``: the player's moves with an eval before and after;
    ``clock``: (initial s, increment s) or ``None``; ``score``: the player's result (1, ½, 0)
    or ``None``; ``acpl``: Lichess's ACPL of the player (for the baseline), ``None`` without
    a scored move; ``ending``: how the game ended from the player's side (:func:`ending`),
    ``None`` when unknown; ``local``: the evals come from a local engine (read through its
    calibration onto Lichess's scale where one covers its engine and budget,
    ``tracker.analysis.engine_calibration``), not Lichess's server analysis the model was
    fitted on (the result then says so); ``opening``: his own first two moves
    (:func:`tracker.analysis.board.own_opening`, ``()`` unknown)."""

    color: Color
    moves: tuple[MoveFeature, ...]
    clock: tuple[int, int] | None = None
    score: float | None = None
    acpl: int | None = None
    ending: str | None = None
    local: bool = False
    opening: tuple[str, ...] = ()


class Level(NamedTuple):
    """A level on the Lichess scale of the model's perf (rating points): ``estimate`` the
    posterior median under the model's prior (inside the range), ``low``/``high`` the 10th
    and 90th percentiles of the range (a flat prior: it holds for a 900 and a 2300 alike);
    ``model``: the model's key and version (``"level-blitz-4"``); ``note``: what the reader
    must know (what a speed borrows from the rapid fit, an estimate where the model is known to
    be weak or outside the fitted range, too few moves, local evals), else ``None``;
    ``games``/``moves``: how much play it rests on."""

    estimate: int
    low: int
    high: int
    model: str
    note: str | None
    games: int
    moves: int


class FideLevel(NamedTuple):
    """A :class:`Level` through one scale model (``tracker.fide.scale``): FIDE rating points on
    today's scale, ``None`` where the scale model gives no value (unrated)."""

    scale: str
    estimate: int | None
    low: int | None
    high: int | None


@dataclass(frozen=True, slots=True)
class LevelModel:
    """A fitted level model (the JSON file's data). ``perf``: the perf it is applied to;
    ``fitted_perf``: the perf whose scale it was fitted on (they differ: the result says so);
    ``data``: the file's parsed JSON (see ``docs/strength.md`` for its fields)."""

    key: str
    version: int
    perf: str
    fitted_perf: str
    data: Mapping[str, Any]
    tables: _Tables = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tables", _Tables(self.data))

    @property
    def name(self) -> str:
        """Key and version: ``"level-rapid-4"``."""
        return f"{self.key}-{self.version}"

    @property
    def borrows(self) -> str | None:
        """What this perf's model borrows from another fit, in words, or ``None``."""
        return self.tables.borrows or None


def level_features(evals: Sequence[PlyEval], color: Color, *, white_first: bool = True,
                   clock: tuple[int, int] | None = None, clocks: Sequence[int] | None = None,
                   result: float | None = None, status: str | None = None,
                   local: bool = False, sans: Sequence[str] | None = None,
                   initial_fen: str | None = None,
                   flags: Sequence[int] | None = None) -> GameFeatures:
    """The :class:`GameFeatures` of ``color`` in one game: ``evals`` one per ply (White's view);
    ``clock`` (initial s, increment s); ``clocks`` Lichess's exported clocks (centiseconds, one
    per ply, both players) or ``None``; ``result`` the player's score (1, 0.5, 0) or ``None``;
    ``status`` Lichess's game status (``"mate"``, ``"resign"``, ``"outoftime"``…) or ``None``;
    ``local`` whether the evals come from a local engine (not Lichess's server analysis);
    ``sans`` the moves (SAN, one per ply, from ``initial_fen`` or the standard start) or
    ``None``: what the board showed at each move and his first two moves; ``flags`` the
    game's :func:`~tracker.analysis.board.board_flags` when already computed (both sides read
    one list).
    """
    white = color == "white"
    if flags is None and sans is not None:
        flags = board_flags(sans, initial_fen)
    moves: list[MoveFeature] = []
    before = win_percent(START)
    for ply, after in enumerate(win_curve(evals, white_first=white_first), start=1):
        if ((ply % 2 == 1) == white_first) == white and before is not None and after is not None:
            left = clocks[ply - 1] / 100 if clocks is not None and ply <= len(clocks) else None
            mine = (before, after) if white else (100 - before, 100 - after)
            seen = flags[ply - 1] if flags is not None and ply <= len(flags) else None
            moves.append(MoveFeature(ply, mine[0], mine[1], left, seen))
        before = after
    cpl = lichess_acpl(evals, white_first=white_first)[0 if white else 1]
    opening = own_opening(sans, color, initial_fen) if sans is not None else ()
    return GameFeatures(color, tuple(moves), clock, result, cpl, ending(result, status), local,
                        opening)


def on_training_scale(evals: Sequence[PlyEval], played_at_ms: int | None) -> list[PlyEval]:
    """Lichess server evals on the centipawn scale the models were fitted on: those of a game
    played in Lichess's normalised era (from 2023-01-01, ms since the epoch, UTC) multiplied by
    the measured era factor (:func:`tracker.analysis.engine_calibration.lichess_era`; mates
    unchanged), others as they are. For the level only: accuracy, ACPL and judgments shown stay
    Lichess's own. Local-engine evals are not Lichess's: leave them to their own calibration."""
    return lichess_era().apply(evals, played_at_ms)


#: Lichess statuses by how a game ended, for :func:`ending`.
_STATUS_GROUPS: Final = {"mate": "mate", "resign": "resign", "outoftime": "time",
                         "timeout": "time", "draw": "draw", "stalemate": "stalemate"}


def ending(score: float | None, status: str | None) -> str | None:
    """How a game ended from one player's side: ``"win-mate"``, ``"loss-resign"``,
    ``"draw-stalemate"``, ``"loss-time"``… (outcome, then mate / resign / time / draw /
    stalemate / other); ``None`` without a score or status."""
    if score is None or status is None:
        return None
    outcome = "win" if score == 1 else "loss" if score == 0 else "draw"
    return f"{outcome}-{_STATUS_GROUPS.get(status, 'other')}"


#: The per-game summary a model reads (:func:`summary`), in order; a model file lists the
#: names it was fitted on and must match. Win% losses are of the mover (0–100); "rate" = share
#: of the player's moves; phases by ply: opening 1–20, middle 21–60, end 61 on.
SUMMARY: Final[tuple[str, ...]] = (
    "ln(1 + ACPL)", "mean move accuracy", "mean move accuracy, balanced positions",
    "rate of losses >= 5", "rate of losses >= 10", "rate of losses >= 15",
    "rate of losses <= 1", "rate of losses <= 0", "mean sqrt(loss)", "ln(moves)",
    "rate balanced (Win% 15-85 before)", "rate winning (> 85)", "rate losing (< 15)",
    "mean sqrt(loss), winning", "mean sqrt(loss), losing", "mean sqrt(loss), balanced",
    "median sqrt(loss)", "75th percentile sqrt(loss)", "90th percentile sqrt(loss)",
    "opening mean sqrt(loss)", "opening rate <= 1", "opening rate >= 10", "opening share",
    "middle mean sqrt(loss)", "middle rate <= 1", "middle rate >= 10", "middle share",
    "end mean sqrt(loss)", "end rate <= 1", "end rate >= 10", "end share",
)
_PHASES: Final = ((1, 20), (21, 60), (61, 1 << 30))
#: What the board showed (model 5 on; :mod:`tracker.analysis.board`): his moves' √loss by it,
#: and shares of his moves; the board experiment's "hanging + capture" (docs/strength.md).
BOARD_SUMMARY: Final[tuple[str, ...]] = (
    "capture available: mean sqrt(loss)", "no capture available: mean sqrt(loss)",
    "share of moves leaving a piece hanging", "in check: mean sqrt(loss)",
    "own piece hanging: mean sqrt(loss)", "free piece taken share (of chances)",
    "capture share",
)
#: The clock setting (model 5 on): a declared input (STRENGTH.md §3), never the clocks.
CLOCK_SUMMARY: Final[tuple[str, ...]] = ("ln(initial + 40 x increment)", "increment > 0")


@dataclass(frozen=True, slots=True)
class FeatureSpec:
    """What a model reads beyond :data:`SUMMARY` (model 5 on; the file's ``extra_features``):
    :data:`BOARD_SUMMARY`, :data:`CLOCK_SUMMARY`, then one column per opening identity
    (``identities``: his own first two moves, :func:`tracker.analysis.board.own_opening`; 1
    when his game's is that one). Where a game's board or clock setting is unknown, the
    training players' means (``board_fallback``, ``clock_fallback``) stand in; ``free_rate``:
    the training share of free pieces taken, for a game that offered none."""

    identities: tuple[tuple[str, ...], ...]
    board_fallback: tuple[float, ...]
    clock_fallback: tuple[float, ...]
    free_rate: float

    def names(self) -> list[str]:
        """The feature names of the columns after :data:`SUMMARY`."""
        return [*BOARD_SUMMARY, *CLOCK_SUMMARY,
                *(f"opening {' '.join(k)}" for k in self.identities)]

    def json(self) -> dict[str, Any]:
        """The model file's ``extra_features``."""
        return {"opening_identities": [list(k) for k in self.identities],
                "board_fallback": list(self.board_fallback),
                "clock_fallback": list(self.clock_fallback), "free_piece_rate": self.free_rate}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FeatureSpec:
        """From a model file's ``extra_features`` (KeyError, TypeError, ValueError if wrong)."""
        spec = cls(tuple(tuple(str(m) for m in k) for k in data["opening_identities"]),
                   tuple(_floats(data, "board_fallback")), tuple(_floats(data, "clock_fallback")),
                   float(data["free_piece_rate"]))
        if len(spec.board_fallback) != len(BOARD_SUMMARY) or len(
                spec.clock_fallback) != len(CLOCK_SUMMARY):
            raise ValueError("fallbacks of the wrong size")
        return spec


def _mean(xs: Sequence[float], fallback: float) -> float:
    return sum(xs) / len(xs) if xs else fallback


def _quantile(sorted_xs: Sequence[float], q: float) -> float:
    """numpy's default (linear) quantile of a sorted, non-empty sequence."""
    pos = q * (len(sorted_xs) - 1)
    i = int(pos)
    j = min(i + 1, len(sorted_xs) - 1)
    return sorted_xs[i] + (sorted_xs[j] - sorted_xs[i]) * (pos - i)


def summary(game: GameFeatures, spec: FeatureSpec | None = None) -> list[float]:
    """The :data:`SUMMARY` of one player's game (plain floats, in order), then with a ``spec``
    its columns (:meth:`FeatureSpec.names`). Raises ValueError for a game without a scored
    move. Pure Python: a few microseconds per move."""
    moves = game.moves
    if not moves:
        raise ValueError("no move with an eval before and after: no level")
    n = len(moves)
    loss = [max(0.0, m.win_before - m.win_after) for m in moves]
    root = [math.sqrt(x) for x in loss]
    acc = [move_accuracy(m.win_before, m.win_after) / 100 for m in moves]
    before = [m.win_before for m in moves]
    balanced = [i for i in range(n) if 15 <= before[i] <= 85]
    winning = [i for i in range(n) if before[i] > 85]
    losing = [i for i in range(n) if before[i] < 15]
    mean_acc, mean_root = sum(acc) / n, sum(root) / n
    ordered = sorted(root)
    flags = {edge: [x >= edge for x in loss] for edge in (5, 10, 15)}
    le1 = [x <= 1 for x in loss]
    out = [math.log1p(game.acpl or 0), mean_acc, _mean([acc[i] for i in balanced], mean_acc),
           sum(flags[5]) / n, sum(flags[10]) / n, sum(flags[15]) / n,
           sum(le1) / n, sum(1 for x in loss if x <= 0) / n, mean_root, math.log(n),
           len(balanced) / n, len(winning) / n, len(losing) / n,
           _mean([root[i] for i in winning], mean_root),
           _mean([root[i] for i in losing], mean_root),
           _mean([root[i] for i in balanced], mean_root),
           _quantile(ordered, 0.5), _quantile(ordered, 0.75), _quantile(ordered, 0.9)]
    for first, last in _PHASES:
        idx = [i for i in range(n) if first <= moves[i].ply <= last]
        if idx:
            out += [_mean([root[i] for i in idx], mean_root),
                    sum(1 for i in idx if le1[i]) / len(idx),
                    sum(1 for i in idx if flags[10][i]) / len(idx), len(idx) / n]
        else:
            out += [mean_root, out[6], out[4], 0.0]
    if spec is not None:
        out += _board_summary(moves, root, mean_root, spec)
        out += _clock_summary(game.clock, spec)
        out += [float(game.opening == k) for k in spec.identities]
    return out


def _board_summary(moves: Sequence[MoveFeature], root: Sequence[float], mean_root: float,
                   spec: FeatureSpec) -> list[float]:
    """:data:`BOARD_SUMMARY` of his moves (the training means where a move's board is unknown);
    a condition no move meets gives the game's mean √loss (the training rate for free pieces)."""
    flags = [m.board for m in moves]
    if any(f is None for f in flags):
        return list(spec.board_fallback)
    known = [f or 0 for f in flags]
    n = len(known)

    def root_where(bit: int, want: bool = True) -> float:
        return _mean([r for r, f in zip(root, known, strict=True) if bool(f & bit) == want],
                     mean_root)

    chances = [f for f in known if f & CHANCE]
    return [root_where(CAPTURE_AVAILABLE), root_where(CAPTURE_AVAILABLE, False),
            sum(1 for f in known if f & LEAVES_HANGING) / n, root_where(IN_CHECK),
            root_where(OWN_HANGING),
            (sum(1 for f in chances if f & TOOK_HANGING) / len(chances) if chances
             else spec.free_rate),
            sum(1 for f in known if f & CAPTURED) / n]


def _clock_summary(clock: tuple[int, int] | None, spec: FeatureSpec) -> list[float]:
    """:data:`CLOCK_SUMMARY` of a clock setting (the training means where there is none)."""
    setting = clock_setting(clock)
    return list(spec.clock_fallback) if setting is None else setting


def clock_setting(clock: tuple[int, int] | None) -> list[float] | None:
    """:data:`CLOCK_SUMMARY` of a clock setting (initial s, increment s): ln(initial + 40 ×
    increment) and whether there is an increment; ``None`` without a setting (or a zero one)."""
    if clock is None or clock[0] + 40 * clock[1] <= 0:
        return None
    return [math.log(clock[0] + 40 * clock[1]), float(clock[1] > 0)]


def _floats(data: Any, *path: str) -> list[float]:
    value: Any = data
    for key in path:
        value = value[key]
    return [float(x) for x in value]


def _schema(data: Mapping[str, Any]) -> None:
    """ValueError unless ``data`` has the fields :func:`game_level` and (where the model has a
    set fit) :func:`set_estimates` read, consistently."""
    try:
        grid = data["grid"]
        size = round((grid["high"] - grid["low"]) / grid["step"]) + 1
        features = list(data["features"])
        reg = data["regression"]
        ok = (len(data["prior"]) == size and len(data["likelihood"]["mean"]) == size
              and len(data["likelihood"]["sd"]) == size
              and min(_floats(data, "likelihood", "sd")) > 0
              and all(len(reg[k]) == len(features) for k in ("centre", "scale", "coef"))
              and 0 <= float(data["within_player_correlation"]) < 1
              and all(float(data["prior_weight"][k]) >= 0
                      for k in ("game_estimate", "game_range", "set_estimate", "set_range")))
        if ok and "set" in data:
            ok = _set_schema(data["set"], size, len(features))
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"malformed level model: missing or wrong field ({e})") from None
    if not ok:
        raise ValueError("malformed level model: sizes of prior, likelihood and regression "
                         "disagree, or a spread is not positive")
    try:
        spec = (FeatureSpec.from_json(data["extra_features"]) if "extra_features" in data
                else None)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"malformed level model: missing or wrong field ({e})") from None
    if features != [*SUMMARY, *(spec.names() if spec is not None else ())]:
        raise ValueError("level model fitted on other features than this version computes: "
                         "refit it (scripts/fit_level_model.py)")


def _set_schema(fit: Any, size: int, features: int) -> bool:
    """Whether a model's ``set`` section is consistent: at least 2 games, the grid's and the
    features' sizes (its knot rows, where it has some, one number per feature; its regression
    one weight per number of :func:`set_basis`), positive spreads (KeyError, TypeError or
    ValueError when a field is missing or wrong)."""
    reg = fit["regression"]
    knots = [_floats(row) for row in fit.get("knots", [])]
    width = features * (1 + len(knots))
    return bool(int(fit["min_games"]) >= 2 and len(fit["prior"]) == size
                and len(fit["likelihood"]["mean"]) == size
                and len(fit["likelihood"]["sd"]) == size
                and min(_floats(fit, "likelihood", "sd")) > 0
                and all(len(row) == features for row in knots)
                and all(len(reg[k]) == width for k in ("centre", "scale", "coef"))
                and 0 <= float(fit["within_player_correlation"]) < 1
                and float(fit["prior_weight"]) >= 0)


def level_model_from_json(data: Mapping[str, object], perf: str | None = None) -> LevelModel:
    """A :class:`LevelModel` from a model file's parsed JSON, applied to ``perf`` (default: the
    perf it was fitted on). Raises ValueError for a malformed file."""
    _schema(data)
    fitted = str(data["perf"])
    return LevelModel(str(data["key"]), int(str(data["version"])), perf or fitted, fitted, data)


@cache
def _load(name: str) -> Mapping[str, Any]:
    loaded: Mapping[str, Any] = json.loads((MODELS_DIR / name).read_text(encoding="utf-8"))
    return loaded


@cache
def load_level_model(perf: str) -> LevelModel:
    """The level model for ``perf`` (a speed: bullet, blitz, rapid, classical), each on its own
    Lichess scale; what a speed's model borrows from the rapid fit, its results say;
    ultraBullet and correspondence borrow the bullet and classical models (:data:`BORROWED`),
    noted. Raises ValueError for a perf no model can serve (a variant)."""
    if perf not in SPEEDS:
        raise ValueError(f"no level model for {perf!r}: the level is shown for "
                         f"{', '.join(SPEEDS)} games only")
    return level_model_from_json(_load(MODEL_FILES[BORROWED.get(perf, perf)]), perf)


class _Tables:
    """A model's arrays, read once per model."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        grid = data["grid"]
        self.grid: FloatArray = np.arange(grid["low"], grid["high"] + grid["step"] / 2,
                                          grid["step"], dtype=np.float64)
        reg = data["regression"]
        scale = np.asarray(_floats(reg, "scale"))
        self.coef: FloatArray = np.asarray(_floats(reg, "coef")) / scale
        centre = np.asarray(_floats(reg, "centre"))
        self.offset = float(reg["intercept"]) - float(self.coef @ centre)
        self.mean: FloatArray = np.asarray(_floats(data, "likelihood", "mean"))
        self.var: FloatArray = np.asarray(_floats(data, "likelihood", "sd")) ** 2
        self.rho = float(data["within_player_correlation"])
        prior = np.asarray(data["prior"], dtype=np.float64)
        self.log_prior: FloatArray = np.log(prior / prior.sum())
        weight = data["prior_weight"]
        self.weights = {k: float(weight[k]) for k in
                        ("game_estimate", "game_range", "set_estimate", "set_range")}
        lo, hi = data["fitted_range"]
        self.fitted_range = (float(lo), float(hi))
        self.weak: list[Mapping[str, Any]] = list(data.get("weak", []))
        self.borrows = str(data.get("borrows") or "")
        self.spec = (FeatureSpec.from_json(data["extra_features"]) if "extra_features" in data
                     else None)
        self.width = len(SUMMARY) + (len(self.spec.names()) if self.spec is not None else 0)
        self.set: _SetTables | None = (_SetTables(data["set"], self.width, self.grid)
                                       if "set" in data else None)


def prior_tilt(tilt: Mapping[str, Any] | None, grid: FloatArray) -> FloatArray:
    """A set prior's tilt on ``grid`` (log scale, model 5 on; the file's ``set.prior_tilt``):
    Σ aⱼ · hatⱼ(r), triangles of half-width ``width`` centred on ``knots`` (rating points):
    the estimate's prior is the set prior^weight × exp(tilt), a shape chosen on validation
    players (docs/strength.md). Zeros without a tilt."""
    if not tilt:
        return np.zeros_like(grid)
    out: FloatArray = np.asarray(_floats(tilt, "a")) @ tilt_hats(
        _floats(tilt, "knots"), float(tilt["width"]), grid)
    return out


def tilt_hats(knots: Sequence[float], width: float, grid: FloatArray) -> FloatArray:
    """The triangles a :func:`prior_tilt` is made of (knots × grid): 1 at each knot (rating
    points), falling to 0 at ``width`` points from it."""
    out: FloatArray = np.maximum(
        0.0, 1 - np.abs(grid[None, :] - np.asarray(knots, dtype=np.float64)[:, None]) / width)
    return out


class _SetTables:
    """A model's set fit (its ``set`` section), read once per model."""

    def __init__(self, fit: Mapping[str, Any], width: int, grid: FloatArray) -> None:
        self.min_games = int(fit["min_games"])
        self.knots: FloatArray = np.asarray([_floats(row) for row in fit.get("knots", [])],
                                            dtype=np.float64).reshape(-1, width)
        reg = fit["regression"]
        scale = np.asarray(_floats(reg, "scale"))
        self.coef: FloatArray = np.asarray(_floats(reg, "coef")) / scale
        self.offset = float(reg["intercept"]) - float(self.coef @ np.asarray(
            _floats(reg, "centre")))
        self.mean: FloatArray = np.asarray(_floats(fit, "likelihood", "mean"))
        self.var: FloatArray = np.asarray(_floats(fit, "likelihood", "sd")) ** 2
        self.rho = float(fit["within_player_correlation"])
        prior = np.asarray(fit["prior"], dtype=np.float64)
        self.log_prior: FloatArray = np.log(prior / prior.sum())
        self.weight = float(fit["prior_weight"])
        #: The estimate's log prior on the grid: the set prior at its weight plus the tilt
        #: (model 5 on).
        self.log_estimate_prior: FloatArray = (self.weight * self.log_prior
                                               + prior_tilt(fit.get("prior_tilt"), grid))


def _tables(model: LevelModel) -> _Tables:
    return model.tables


def score(model: LevelModel, game: GameFeatures) -> float:
    """The model's score of one game: its linear fit on :func:`summary` (rating points on the
    fitted perf's scale, before the likelihood). Raises ValueError without a scored move."""
    return _score_of(model, summary(game, _tables(model).spec))


def _score_of(model: LevelModel, summarised: Sequence[float]) -> float:
    t = _tables(model)
    return t.offset + float(np.dot(t.coef, summarised))


def set_basis(model: LevelModel, summaries: FloatArray) -> FloatArray:
    """What the model's set fit reads of games (rows × :data:`SUMMARY`): per row the summary,
    then per knot row of the fit max(0, summary − knot) (rows × features · (1 + knot rows));
    the summaries as they are for a model without knots or without a set fit."""
    fit = _tables(model).set
    rows = np.atleast_2d(np.asarray(summaries, dtype=np.float64))
    if fit is None or not len(fit.knots):
        return rows
    out: FloatArray = np.hstack([rows, *(np.maximum(rows - k, 0.0) for k in fit.knots)])
    return out


def set_score(model: LevelModel, game: GameFeatures) -> float | None:
    """The model's set score of one game (its set fit's linear score of the game's
    :func:`set_basis`; a set's is the mean of its games'), ``None`` for a model without a set
    fit. Raises ValueError without a scored move."""
    return _set_score_of(model, summary(game, _tables(model).spec))


def _set_score_of(model: LevelModel, summarised: Sequence[float]) -> float | None:
    fit = _tables(model).set
    if fit is None:
        return None
    return fit.offset + float(set_basis(model, np.asarray(summarised))[0] @ fit.coef)


def scores(model: LevelModel, game: GameFeatures) -> tuple[float, float | None]:
    """:func:`score` and :func:`set_score` of one game, its :func:`summary` computed once.
    Raises ValueError without a scored move."""
    summarised = summary(game, _tables(model).spec)
    return _score_of(model, summarised), _set_score_of(model, summarised)


def quantiles(grid: FloatArray, log_post: FloatArray, qs: Sequence[float]) -> list[FloatArray]:
    """Per row of unnormalised log-densities on ``grid`` (rows × grid), the ``qs`` quantiles
    (0–1; each grid point's mass centred on it, interpolated linearly)."""
    post = np.exp(log_post - log_post.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    cdf = np.cumsum(post, axis=1) - post / 2
    out: list[FloatArray] = []
    rows = np.arange(cdf.shape[0])
    for q in qs:
        i = np.clip((cdf < q).sum(axis=1), 1, len(grid) - 1)
        c0, c1 = cdf[rows, i - 1], cdf[rows, i]
        frac = np.clip((q - c0) / np.maximum(c1 - c0, 1e-300), 0, 1)
        out.append(grid[i - 1] + frac * (grid[i] - grid[i - 1]))
    return out


def log_likelihood(model: LevelModel, mean_score: FloatArray, games: FloatArray) -> FloatArray:
    """log p(mean score of a set of ``games`` games | rating) on the model's grid (rows × grid):
    normal, with the rating's variance × (ρ + (1 − ρ)/n)."""
    t = _tables(model)
    return _normal_log_likelihood(t.mean, t.var, t.rho, mean_score, games)


def set_log_likelihood(model: LevelModel, mean_set_score: FloatArray, games: FloatArray
                       ) -> FloatArray:
    """:func:`log_likelihood` of the sets' mean :func:`set_score` through the model's set fit
    (its mean, spread and ρ). Raises ValueError for a model without a set fit."""
    fit = _tables(model).set
    if fit is None:
        raise ValueError(f"{model.name} has no set fit")
    return _normal_log_likelihood(fit.mean, fit.var, fit.rho, mean_set_score, games)


def _normal_log_likelihood(mean: FloatArray, var: FloatArray, rho: float, score: FloatArray,
                           games: FloatArray) -> FloatArray:
    """Per row, log N(score | mean(r), var(r) × (ρ + (1 − ρ)/n)) on the grid (rows × grid),
    up to a constant."""
    shrink = rho + (1 - rho) / np.maximum(games, 1)
    at = var[None, :] * shrink[:, None]
    out: FloatArray = -0.5 * (score[:, None] - mean[None, :]) ** 2 / at - 0.5 * np.log(at)
    return out


def estimates(model: LevelModel, mean_score: FloatArray, games: FloatArray
              ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(estimate, low, high) per set (rows): the range from the likelihood times the prior at
    its range weight, the estimate the median with the prior at its estimate weight (one game:
    the ``game_*`` weights, more: the ``set_*`` ones), kept inside the range."""
    t = _tables(model)
    ll = log_likelihood(model, mean_score, games)
    one = games <= 1
    w_est = np.where(one, t.weights["game_estimate"], t.weights["set_estimate"])
    w_range = np.where(one, t.weights["game_range"], t.weights["set_range"])
    (est,) = quantiles(t.grid, ll + w_est[:, None] * t.log_prior[None, :], (0.5,))
    low, high = quantiles(t.grid, ll + w_range[:, None] * t.log_prior[None, :], (0.1, 0.9))
    return np.clip(est, low, high), low, high


def set_estimates(model: LevelModel, mean_basis: FloatArray, games: FloatArray
                  ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(estimate, low, high) per set (rows) from the mean of its games' :func:`set_basis`
    (rows × basis; its first :data:`SUMMARY` columns are the mean summary) and its number of
    games: from the set fit's ``min_games`` on, its score's
    likelihood (spread × √(ρ + (1 − ρ)/n)); the range under a flat prior, the estimate the
    median with the set prior at its weight, kept inside the range. Fewer games, or a model
    without a set fit: :func:`estimates` of the mean of the games' scores."""
    t = _tables(model)
    fit = t.set
    set_score_mean = (np.full(len(games), np.nan) if fit is None
                      else fit.offset + mean_basis @ fit.coef)
    return estimates_of_scores(model, t.offset + mean_basis[:, :t.width] @ t.coef,
                               set_score_mean, games)


def estimates_of_scores(model: LevelModel, mean_score: FloatArray, mean_set_score: FloatArray,
                        games: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`set_estimates` from the sets' mean :func:`score` and mean :func:`set_score`
    (NaN where unknown: then the mean score's :func:`estimates`, as for fewer games)."""
    t = _tables(model)
    est, low, high = estimates(model, mean_score, games)
    fit = t.set
    use = (games >= fit.min_games) & ~np.isnan(mean_set_score) if fit is not None else None
    if fit is None or use is None or not use.any():
        return est, low, high
    ll = set_log_likelihood(model, np.where(use, mean_set_score, 0.0), games)
    (s_est,) = quantiles(t.grid, ll + fit.log_estimate_prior[None, :], (0.5,))
    s_low, s_high = quantiles(t.grid, ll, (0.1, 0.9))
    return (np.where(use, np.clip(s_est, s_low, s_high), est), np.where(use, s_low, low),
            np.where(use, s_high, high))


def _local_note(model: LevelModel) -> str:
    """What the reader of a level from local-engine evals must know, in words."""
    local = model.data.get("local_engine")
    text = ("local-engine evals, read through their engine's calibration where one exists "
            "(the model was fitted on Lichess's server analysis")
    if isinstance(local, Mapping) and "shift_median" in local:
        text += (f"; on {local['player_games']} held-out player-games, {local['engine']} at "
                 f"{local['nodes']:,} nodes read {local['shift_median']:+.0f} points against "
                 "Lichess's evals of the same games (median)")
    return text + ")"


def model_note(model: LevelModel) -> str | None:
    """What every level of ``model`` says first, whatever its games: the model applied to a
    perf it was not fitted on, what a speed borrows from the rapid fit; ``None`` when nothing.
    Each :class:`Level`'s ``note`` starts with it (then ``"; "`` and what that level alone
    needs said), so a report can say it once."""
    t = _tables(model)
    notes: list[str] = []
    if model.perf != model.fitted_perf:
        notes.append(f"{model.fitted_perf} model applied to {model.perf}")
    if t.borrows:
        notes.append(t.borrows)
    return "; ".join(notes) or None


def set_fit_games(model: LevelModel) -> int | None:
    """The games from which a set is read by the model's set fit (its ``min_games``; fewer:
    the mean of the games' scores), ``None`` for a model without a set fit."""
    fit = _tables(model).set
    return None if fit is None else fit.min_games


def _outside(model: LevelModel, estimate: int) -> bool:
    lo, hi = _tables(model).fitted_range
    return estimate < lo or estimate > hi


def _weak(model: LevelModel, games: int, estimate: int) -> list[Mapping[str, Any]]:
    """The model file's ``weak`` entries (single games, or sets) the estimate falls in."""
    kind = "games" if games <= 1 else "sets"
    return [weak for weak in _tables(model).weak
            if weak.get("kind") == kind and weak["low"] <= estimate <= weak["high"]]


def caution(model: LevelModel, level: Level) -> str | None:
    """A few words for a cell too narrow for ``level``'s note: ``"outside the model's fitted
    range"`` or ``"where the model is weak"`` where its note says so (its estimate outside the
    training ratings' range, or in one of the model's ``weak`` bands), else ``None``."""
    if _outside(model, level.estimate):
        return "outside the model's fitted range"
    if _weak(model, level.games, level.estimate):
        return "where the model is weak"
    return None


def grid_end(model: LevelModel, low: int, high: int) -> int | None:
    """The end of the model's grid (its lowest or highest rating) that a range ``low``–``high``
    comes within :data:`GRID_EDGE` points of, cut there (a 3-game set of a strong player:
    2866 (2673–2979), 306 points wide because the grid stops at 3000), else ``None``."""
    grid = _tables(model).grid
    if high >= grid[-1] - GRID_EDGE:
        return round(float(grid[-1]))
    if low <= grid[0] + GRID_EDGE:
        return round(float(grid[0]))
    return None


def _note(model: LevelModel, games: int, local: bool, estimate: int, moves: int,
          low: int, high: int) -> str | None:
    t = _tables(model)
    shared = model_note(model)
    notes: list[str] = [shared] if shared else []
    lo, hi = t.fitted_range
    if _outside(model, estimate):
        notes.append(f"outside the range the model was fitted on ({lo:.0f}–{hi:.0f})")
    notes.extend(f"the model is weak here: {weak['why']}"
                 for weak in _weak(model, games, estimate))
    end = grid_end(model, low, high)
    if end is not None:
        notes.append(f"the range is cut at {end}, where the model's ratings end: the moves "
                     "alone say less than its width")
    if local:
        notes.append(_local_note(model))
    if moves < FEW_MOVES:
        notes.append(f"only {moves} moves with evals")
    return "; ".join(notes) or None


def _level(model: LevelModel, games: Sequence[GameFeatures]) -> Level:
    both = [scores(model, g) for g in games]
    return level_of_scores(model, [s for s, _ in both], sum(len(g.moves) for g in games),
                           any(g.local for g in games), [s for _, s in both])


def level_of_scores(model: LevelModel, scores: Sequence[float], moves: int, local: bool,
                    set_scores: Sequence[float | None] | None = None) -> Level:
    """The level a set of games shows from their :func:`score` s (in the set's order; one
    score: one game's level, as :func:`game_level`) and their :func:`set_score` s (what the
    set fit reads from ``min_games`` games on; without them, or with a ``None`` among them,
    the mean of the scores as for fewer games), ``moves`` the scored moves they hold together
    and ``local`` whether any game's evals come from a local engine: what :func:`set_level`
    computes, for scores computed once and kept. Raises ValueError for no score."""
    return levels_of_scores(model, [(scores, moves, local)],
                            None if set_scores is None else [set_scores])[0]


def _mean_of_all(values: Sequence[float | None], n: int) -> float:
    """The mean of ``values`` where it holds ``n`` values and none is ``None``; NaN else."""
    known = [x for x in values if x is not None]
    return sum(known) / n if len(known) == len(values) == n else float("nan")


def levels_of_scores(model: LevelModel, sets: Sequence[tuple[Sequence[float], int, bool]],
                     set_scores: Sequence[Sequence[float | None]] | None = None
                     ) -> list[Level]:
    """:func:`level_of_scores` of each ``(scores, moves, local)`` in ``sets`` (with its
    ``set_scores``, one sequence per set, where given), the posteriors of all computed at once
    (one array of sets × the model's grid: the same figures as one by one). Raises ValueError
    for a set without a score."""
    if any(not scores for scores, _, _ in sets):
        raise ValueError("no games: a set's level needs at least one game")
    if not sets:
        return []
    mean_set = np.asarray([np.nan if set_scores is None else _mean_of_all(set_scores[i], len(s))
                           for i, (s, _, _) in enumerate(sets)])
    games = np.asarray([float(len(scores)) for scores, _, _ in sets])
    est, low, high = estimates_of_scores(
        model, np.asarray([sum(scores) / len(scores) for scores, _, _ in sets]), mean_set, games)
    out: list[Level] = []
    for i, (scores, moves, local) in enumerate(sets):
        estimate, lo, hi = round(float(est[i])), round(float(low[i])), round(float(high[i]))
        out.append(Level(estimate, lo, hi, model.name,
                         _note(model, len(scores), local, estimate, moves, lo, hi),
                         len(scores), moves))
    return out


def game_level(model: LevelModel, features: GameFeatures) -> Level:
    """The level one player's game shows. Raises ValueError without a scored move."""
    return _level(model, [features])


def set_level(model: LevelModel, games: Sequence[GameFeatures]) -> Level:
    """The level a set of one player's games shows together (a month, the last 20): read from
    the mean of the games' set scores (:func:`set_estimates`), its range narrows as games add up,
    down to the spread a player's games share. Raises ValueError for an empty set or a game
    without a scored move."""
    if not games:
        raise ValueError("no games: a set's level needs at least one game")
    return _level(model, games)


def fide_levels(level: Level, perf: str,
                memo: dict[tuple[str, int], int | None] | None = None) -> tuple[FideLevel, ...]:
    """``level`` through every scale model covering ``perf`` (may be empty). ``memo``: the
    readings already made of the same ``perf``, by (model key, Lichess rating), kept across
    calls (many levels share their values)."""
    if memo is None:
        memo = {}

    def reading(m: ScaleModel, lichess: int) -> int | None:
        at = (m.key, lichess)
        if at not in memo:
            memo[at] = fide_rating(m, perf, lichess)
        return memo[at]

    return tuple(FideLevel(m.key, reading(m, level.estimate), reading(m, level.low),
                           reading(m, level.high)) for m in models_for(perf))
