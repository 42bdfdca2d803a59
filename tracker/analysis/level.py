"""The level a game, or a set of games, shows (STRENGTH.md §3). Pure but for reading the
model file.

Inputs: the moves' evals, the clock setting, the clocks where exported, the result and the
perf: never a rating. A model (``tracker/analysis/models/level-<perf>-<n>.json``, fitted by
``scripts/fit_level_model.py`` from the shared analysed games) gives, per rating band, how often
players lose how much Win% per move; a game's or a set's moves give a likelihood over ratings,
tempered for moves that are not independent, times the training prior: the posterior's median
is the estimate, its 10th and 90th percentiles the range (``docs/strength.md``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from tracker.analysis.evals import Color, PlyEval


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
    a scored move."""

    color: Color
    moves: tuple[MoveFeature, ...]
    clock: tuple[int, int] | None = None
    score: float | None = None
    acpl: int | None = None


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
    ``fitted_perf``: the perf it was fitted on (they differ: the result says so)."""

    key: str
    version: int
    perf: str
    fitted_perf: str
    data: Mapping[str, object]


def level_features(evals: Sequence[PlyEval], color: Color, *, white_first: bool = True,
                   clock: tuple[int, int] | None = None, clocks: Sequence[int] | None = None,
                   result: float | None = None) -> GameFeatures:
    """The :class:`GameFeatures` of ``color`` in one game: ``evals`` one per ply (White's view);
    ``clock`` (initial s, increment s); ``clocks`` Lichess's exported clocks (centiseconds, one
    per ply, both players) or ``None``; ``result`` the player's score (1, 0.5, 0) or ``None``."""
    raise NotImplementedError


def level_model_from_json(data: Mapping[str, object], perf: str | None = None) -> LevelModel:
    """A :class:`LevelModel` from a model file's parsed JSON, applied to ``perf`` (default: the
    perf it was fitted on). Raises ValueError for a malformed file."""
    raise NotImplementedError


def load_level_model(perf: str) -> LevelModel:
    """The level model for ``perf`` (a speed: bullet, blitz, rapid, classical): the perf's own
    model where there is one, else the rapid model, and every result then says so. Raises
    ValueError for a perf no model can serve (a variant)."""
    raise NotImplementedError


def game_level(model: LevelModel, features: GameFeatures) -> Level:
    """The level one player's game shows."""
    raise NotImplementedError


def set_level(model: LevelModel, games: Sequence[GameFeatures]) -> Level:
    """The level a set of one player's games shows together (a month, the last 20): its range
    narrows as games add up. Raises ValueError for an empty set."""
    raise NotImplementedError


def fide_levels(level: Level, perf: str) -> tuple[FideLevel, ...]:
    """``level`` through every scale model covering ``perf`` (may be empty)."""
    raise NotImplementedError
