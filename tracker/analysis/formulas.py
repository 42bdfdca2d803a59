"""Lichess's per-game numbers from the evals: Win%, accuracy, ACPL, judgments (STRENGTH.md §2).

Pure (no I/O). Floats, as Lichess computes them (lila ``modules/analyse``
``AccuracyPercent.scala``, scalachess ``eval.scala``, lila ``modules/tree`` ``Advice.scala``);
the results equal Lichess's (``docs/strength.md``). ``evals`` is always one
:class:`~tracker.analysis.evals.PlyEval` per ply, after the move, White's view;
``white_first=False`` for a game that starts with Black to move.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from tracker.analysis.evals import Judgment, PlyEval


class JudgmentCounts(NamedTuple):
    """One player's inaccuracies, mistakes and blunders in one game."""

    inaccuracy: int
    mistake: int
    blunder: int


class PlayerSummary(NamedTuple):
    """One player's numbers for one game, as Lichess shows them.

    ``accuracy``: game accuracy in % rounded half up (``None`` without a scored move);
    ``acpl``: average centipawn loss rounded half up (``None`` without a scored move);
    the counts: the exported judgments of the player's moves (a local analysis fills
    ``PlyEval.judgment`` with :func:`judge` where its engine preferred another move).
    """

    accuracy: int | None
    acpl: int | None
    inaccuracy: int
    mistake: int
    blunder: int


class GameSummary(NamedTuple):
    """Both players' :class:`PlayerSummary`."""

    white: PlayerSummary
    black: PlayerSummary


def ceiled_cp(ev: PlyEval) -> int | None:
    """The eval in centipawns, White's view, clamped to ±1000; a mate counts ±1000 (mate 0,
    the side to move is mated, counts against it); ``None`` for a ply without eval."""
    raise NotImplementedError


def winning_chances(cp: float) -> float:
    """``clamp(2 / (1 + exp(−0.00368208 · cp)) − 1, −1, 1)``: −1 … 1."""
    raise NotImplementedError


def win_percent(ev: PlyEval) -> float | None:
    """Win% (0–100) for White of the ceiled eval: ``50 + 50 · wc(ceiled cp)``; ``None``
    without eval."""
    raise NotImplementedError


def move_accuracy(win_before: float, win_after: float) -> float:
    """Accuracy (0–100) of a move from the mover's Win% before and after it."""
    raise NotImplementedError


def game_accuracy(evals: Sequence[PlyEval], *,
                  white_first: bool = True) -> tuple[float | None, float | None]:
    """(White, Black) game accuracy in %, unrounded, ``None`` for a colour without a scored
    move (lila ``AccuracyPercent.gameAccuracy``)."""
    raise NotImplementedError


def acpl(evals: Sequence[PlyEval], *, white_first: bool = True) -> tuple[int | None, int | None]:
    """(White, Black) average centipawn loss rounded half up, ``None`` without a scored move."""
    raise NotImplementedError


def judge(before: PlyEval, after: PlyEval, *, white_moved: bool) -> Judgment | None:
    """Lichess's judgment of a move from the evals before and after it (``Advice.scala``),
    without the "engine preferred another move" condition: the caller applies it."""
    raise NotImplementedError


def recomputed_judgments(evals: Sequence[PlyEval], *,
                         white_first: bool = True) -> tuple[JudgmentCounts, JudgmentCounts]:
    """(White, Black) counts of :func:`judge` over every move (no engine-best condition)."""
    raise NotImplementedError


def exported_judgments(evals: Sequence[PlyEval], *,
                       white_first: bool = True) -> tuple[JudgmentCounts, JudgmentCounts]:
    """(White, Black) counts of the judgments the evals carry (``PlyEval.judgment``)."""
    raise NotImplementedError


def game_summary(evals: Sequence[PlyEval], *, white_first: bool = True) -> GameSummary:
    """Accuracy, ACPL and the exported judgment counts of both players."""
    raise NotImplementedError
