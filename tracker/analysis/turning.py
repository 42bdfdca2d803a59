"""Where a game turned (STRENGTH.md §4). Pure.

Per player: their move with the largest drop in Win% (mover's view). For the game: the move
after which the eventual result became likely (the winner's Win% reached 70 % and stayed
there), else "balanced to the end".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from tracker.analysis.evals import Color, PlyEval


class TurningPoint(NamedTuple):
    """One move, shown as a chess player expects.

    ``ply``: 1-based index of the move in the game (``evals[ply - 1]`` is the eval after it);
    ``color``: the mover; ``san``: the move (``"Qxb2"``); ``notation``: move number and SAN
    (``"24…Qxb2"``, ``"7.Nf3"``); ``win_before``/``win_after``: the mover's Win% (0–100)
    before and after the move; ``best``: the engine's preferred move (UCI) where known.
    """

    ply: int
    color: Color
    san: str
    notation: str
    win_before: float
    win_after: float
    best: str | None


class GameTurn(NamedTuple):
    """The game's turning point: ``point`` is ``None`` when the game stayed balanced to the
    end (or the result was never foreseen by the evals); ``label`` says it in words."""

    point: TurningPoint | None
    label: str


class TurningPoints(NamedTuple):
    """Each player's largest Win% drop (``None``: no move with an eval) and the game's turn."""

    white: TurningPoint | None
    black: TurningPoint | None
    game: GameTurn


def turning_points(evals: Sequence[PlyEval], sans: Sequence[str], *, winner: Color | None,
                   white_first: bool = True, first_move_number: int = 1) -> TurningPoints:
    """The turning points of a game from its evals (one per ply, White's view) and its moves
    (SAN, one per ply). ``winner`` ``None``: a draw (or no result). Raises ValueError when
    ``evals`` is longer than ``sans``."""
    raise NotImplementedError
