"""The level a game, or a set of games, shows (STRENGTH.md §3). Pure but for reading the
model file.

Inputs: the moves' evals, the clock setting, the clocks where exported, the result and the
perf: never a rating (:class:`GameFeatures` keeps them all; ``level-rapid-1`` reads the evals of
the player's own moves only, see ``docs/strength.md``). A model
(``tracker/analysis/models/level-<perf>-<n>.json``, fitted by ``scripts/fit_level_model.py``
from the shared analysed games) gives, per rating, how often players lose how much Win% per
move; a game's or a set's moves give a likelihood over ratings, tempered for moves that are not
independent, times the training prior: the posterior's median is the estimate, its 10th and
90th percentiles the range.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt

from tracker.analysis.formulas import acpl as lichess_acpl
from tracker.analysis.formulas import win_percent
from tracker.analysis.turning import win_curve
from tracker.core.evals import START, Color, PlyEval
from tracker.core.records import SPEEDS
from tracker.fide.scale import fide_rating, models_for

#: The model files, one per perf fitted: ``level-<perf>-<version>.json``.
MODELS_DIR: Final = Path(__file__).parent / "models"
#: The model of each perf (key, version); a perf without its own uses :data:`FALLBACK`.
MODEL_FILES: Final[Mapping[str, str]] = {"rapid": "level-rapid-1.json"}
FALLBACK: Final = "rapid"
#: Fewer moves than this in a game and the result says the range rests on little play.
FEW_MOVES: Final = 10

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class MoveFeature:
    """One move of the player: their Win% (0–100, mover's view) before and after it, its ply
    (1-based) and, where the clocks were exported, the mover's time left before it (seconds)."""

    ply: int
    win_before: float
    win_after: float
    clock: float | None = None


@dataclass(frozen=True, slots=True)
class GameFeatures:
    """What the level model reads of one player's game: model-independent, so it can be
    computed once and kept. ``moves``: the player's moves with an eval before and after;
    ``clock``: (initial s, increment s) or ``None``; ``score``: the player's result (1, ½, 0)
    or ``None``; ``acpl``: Lichess's ACPL of the player (for the baseline), ``None`` without
    a scored move; ``ending``: how the game ended from the player's side (:func:`ending`),
    ``None`` when unknown; ``local``: the evals come from a local engine, not Lichess's server
    analysis the model was fitted on (the result then says so)."""

    color: Color
    moves: tuple[MoveFeature, ...]
    clock: tuple[int, int] | None = None
    score: float | None = None
    acpl: int | None = None
    ending: str | None = None
    local: bool = False


class Level(NamedTuple):
    """A level on the Lichess scale of the model's perf (rating points): ``estimate`` the
    posterior median, ``low``/``high`` its 10th and 90th percentiles; ``model``: the model's
    key and version (``"level-rapid-1"``); ``note``: what the reader must know (a rapid model
    applied to blitz, an estimate at the edge of the fitted range, too few moves), else
    ``None``; ``games``/``moves``: how much play it rests on."""

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
    ``fitted_perf``: the perf it was fitted on (they differ: the result says so); ``data``: the
    file's parsed JSON (see ``docs/strength.md`` for its fields)."""

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
        """Key and version: ``"level-rapid-1"``."""
        return f"{self.key}-{self.version}"


def level_features(evals: Sequence[PlyEval], color: Color, *, white_first: bool = True,
                   clock: tuple[int, int] | None = None, clocks: Sequence[int] | None = None,
                   result: float | None = None, status: str | None = None,
                   local: bool = False) -> GameFeatures:
    """The :class:`GameFeatures` of ``color`` in one game: ``evals`` one per ply (White's view);
    ``clock`` (initial s, increment s); ``clocks`` Lichess's exported clocks (centiseconds, one
    per ply, both players) or ``None``; ``result`` the player's score (1, 0.5, 0) or ``None``;
    ``status`` Lichess's game status (``"mate"``, ``"resign"``, ``"outoftime"``…) or ``None``;
    ``local`` whether the evals come from a local engine (not Lichess's server analysis).
    """
    white = color == "white"
    moves: list[MoveFeature] = []
    before = win_percent(START)
    for ply, after in enumerate(win_curve(evals, white_first=white_first), start=1):
        if ((ply % 2 == 1) == white_first) == white and before is not None and after is not None:
            left = clocks[ply - 1] / 100 if clocks is not None and ply <= len(clocks) else None
            mine = (before, after) if white else (100 - before, 100 - after)
            moves.append(MoveFeature(ply, mine[0], mine[1], left))
        before = after
    cpl = lichess_acpl(evals, white_first=white_first)[0 if white else 1]
    return GameFeatures(color, tuple(moves), clock, result, cpl, ending(result, status), local)


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


def _schema(data: Mapping[str, Any]) -> None:
    """ValueError unless ``data`` has the fields :func:`game_level` reads, consistently."""
    try:
        cells = (len(data["contexts"]) * (len(data["loss_edges"]) + 1)
                 + len(data.get("endings", [])))
        grid = data["grid"]
        size = round((grid["high"] - grid["low"]) / grid["step"]) + 1
        ok = (len(data["prior"]) == size
              and all(len(row) == cells for row in data["log_probs"])
              and len(data["log_probs"]) == len(data["ratings"])
              and float(data["temper"]["game"]) > 0)
    except (KeyError, TypeError) as e:
        raise ValueError(f"malformed level model: missing or wrong field ({e})") from None
    if not ok:
        raise ValueError("malformed level model: sizes of prior, ratings and log_probs disagree")


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


def load_level_model(perf: str) -> LevelModel:
    """The level model for ``perf`` (a speed: bullet, blitz, rapid, classical): the perf's own
    model where there is one, else the rapid model, and every result then says so. Raises
    ValueError for a perf no model can serve (a variant)."""
    if perf not in SPEEDS:
        raise ValueError(f"no level model for {perf!r}: the level is shown for "
                         f"{', '.join(SPEEDS)} games only")
    return level_model_from_json(_load(MODEL_FILES.get(perf, MODEL_FILES[FALLBACK])), perf)


def normalised(log_probs: FloatArray, sizes: Sequence[int]) -> FloatArray:
    """``log_probs`` (rows × cells) with each block of columns (``sizes``, in order: one per
    context, then the endings) normalised to probabilities summing to 1 per row."""
    out = log_probs.copy()
    for start, stop in pairwise(np.cumsum([0, *sizes])):
        block = out[:, start:stop]
        top = block.max(axis=1, keepdims=True)
        block -= top + np.log(np.exp(block - top).sum(axis=1, keepdims=True))
    return out


class _Tables:
    """A model's arrays, read once per model: the cells' log-probabilities on the grid."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        grid = data["grid"]
        self.grid: FloatArray = np.arange(grid["low"], grid["high"] + grid["step"] / 2,
                                          grid["step"], dtype=np.float64)
        ratings = np.asarray(data["ratings"], dtype=np.float64)
        table = np.asarray(data["log_probs"], dtype=np.float64)
        # log-linear interpolation between the fitted ratings (flat beyond them), each
        # context's bins normalised again to sum to 1
        self.loss_edges: list[float] = [float(x) for x in data["loss_edges"]]
        self.contexts: list[dict[str, list[float]]] = list(data["contexts"])
        self.endings: list[str] = list(data.get("endings", []))
        self.log_probs = normalised(np.stack(
            [np.interp(self.grid, ratings, table[:, j]) for j in range(table.shape[1])], axis=1),
            blocks(self.contexts, self.loss_edges, self.endings))
        prior = np.asarray(data["prior"], dtype=np.float64)
        self.log_prior: FloatArray = np.log(prior / prior.sum())
        self.temper_game = float(data["temper"]["game"])
        self.set_exponent = float(data["temper"].get("set_exponent", 1.0))
        lo, hi = data["fitted_range"]
        self.fitted_range = (float(lo), float(hi))


def _tables(model: LevelModel) -> _Tables:
    return model.tables


def _context(contexts: Sequence[Mapping[str, Sequence[float]]], move: MoveFeature) -> int:
    """The index of the first context whose ranges hold the move (Win% before, ply)."""
    for i, c in enumerate(contexts):
        lo, hi = c["win_before"]
        first, last = c["ply"]
        if lo <= move.win_before < hi and first <= move.ply <= last:
            return i
    raise ValueError(f"no context of the model holds {move}")


def blocks(contexts: Sequence[object], loss_edges: Sequence[float],
           endings: Sequence[str]) -> list[int]:
    """The sizes of the blocks of cells: one block of loss bins per context, then the endings
    (when the model reads them)."""
    return [len(loss_edges) + 1] * len(contexts) + ([len(endings)] if endings else [])


def count_cells(contexts: Sequence[Mapping[str, Sequence[float]]], loss_edges: Sequence[float],
                games: Sequence[GameFeatures],
                endings: Sequence[str] = ()) -> npt.NDArray[np.int64]:
    """How many of the games' moves fall in each cell: context (the first whose ``win_before``
    [lo, hi) and ``ply`` [first, last] hold the move) × Win%-loss bin (loss ≤ first edge, then
    each (edge, next edge], then above the last), context-major; then, where ``endings`` are
    given, one count per game in its ending's cell (none for an ending not listed)."""
    bins = len(loss_edges) + 1
    counts = np.zeros(len(contexts) * bins + len(endings), dtype=np.int64)
    for game in games:
        for move in game.moves:
            loss = move.win_before - move.win_after
            counts[_context(contexts, move) * bins + bisect_left(loss_edges, loss)] += 1
        if game.ending is not None and game.ending in endings:
            counts[len(contexts) * bins + list(endings).index(game.ending)] += 1
    return counts


def cell_counts(model: LevelModel, games: Sequence[GameFeatures]) -> npt.NDArray[np.int64]:
    """:func:`count_cells` with ``model``'s contexts and loss bins."""
    t = _tables(model)
    return count_cells(t.contexts, t.loss_edges, games, t.endings)


def posterior(model: LevelModel, counts: npt.NDArray[np.int64], games: int) -> FloatArray:
    """The posterior over the model's rating grid of a set of ``games`` games whose moves
    fall in the cells as ``counts``: prior × likelihood ^ (temper · games ^ (exponent − 1))."""
    t = _tables(model)
    weight = t.temper_game * max(1, games) ** (t.set_exponent - 1)
    log_post = t.log_prior + weight * (t.log_probs @ counts.astype(np.float64))
    log_post -= log_post.max()
    post = np.exp(log_post)
    result: FloatArray = post / post.sum()
    return result


def quantile(grid: FloatArray, post: FloatArray, q: float) -> float:
    """The ``q`` quantile (0–1) of a distribution on ``grid`` (each point's mass centred on it),
    interpolated linearly."""
    cdf = np.cumsum(post) - post / 2
    return float(np.interp(q, cdf, grid))


def _local_note(model: LevelModel) -> str:
    """What the model file measured of local-engine evals, in words."""
    local = model.data.get("local_engine")
    text = "local-engine evals (the model was fitted on Lichess's server analysis"
    if isinstance(local, Mapping) and "shift_median" in local:
        text += (f"; on {local['player_games']} held-out player-games, {local['engine']} at "
                 f"{local['nodes']:,} nodes read {local['shift_median']:+.0f} points against "
                 "Lichess's evals of the same games (median)")
    return text + ")"


def _note(model: LevelModel, games: Sequence[GameFeatures], estimate: int, low: int,
          high: int, moves: int) -> str | None:
    t = _tables(model)
    notes: list[str] = []
    if model.perf != model.fitted_perf:
        notes.append(f"{model.fitted_perf} model applied to {model.perf}")
    lo, hi = t.fitted_range
    if estimate < lo or estimate > hi:
        notes.append(f"outside the range the model was fitted on ({lo:.0f}–{hi:.0f})")
    elif low < lo or high > hi:
        notes.append(f"range reaches beyond the fitted range ({lo:.0f}–{hi:.0f})")
    if any(g.local for g in games):
        notes.append(_local_note(model))
    if moves < FEW_MOVES:
        notes.append(f"only {moves} moves with evals")
    return "; ".join(notes) or None


def _level(model: LevelModel, games: Sequence[GameFeatures]) -> Level:
    counts = cell_counts(model, games)
    post = posterior(model, counts, len(games))
    grid = _tables(model).grid
    low, estimate, high = (round(quantile(grid, post, q)) for q in (0.1, 0.5, 0.9))
    moves = sum(len(g.moves) for g in games)
    return Level(estimate, low, high, model.name, _note(model, games, estimate, low, high, moves),
                 len(games), moves)


def game_level(model: LevelModel, features: GameFeatures) -> Level:
    """The level one player's game shows."""
    return _level(model, [features])


def set_level(model: LevelModel, games: Sequence[GameFeatures]) -> Level:
    """The level a set of one player's games shows together (a month, the last 20): its range
    narrows as games add up. Raises ValueError for an empty set."""
    if not games:
        raise ValueError("no games: a set's level needs at least one game")
    return _level(model, games)


def fide_levels(level: Level, perf: str) -> tuple[FideLevel, ...]:
    """``level`` through every scale model covering ``perf`` (may be empty)."""
    return tuple(FideLevel(m.key, fide_rating(m, perf, level.estimate),
                           fide_rating(m, perf, level.low), fide_rating(m, perf, level.high))
                 for m in models_for(perf))
