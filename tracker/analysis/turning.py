"""Where a game turned (STRENGTH.md §4). Pure.

Per player: their move with the largest drop in Win% (mover's view). For the game: the move
after which the eventual result became likely (the winner's Win% reached 70 % and stayed
there), else "balanced to the end".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from tracker.analysis.formulas import win_percent
from tracker.core.evals import START, Color, PlyEval

#: The winner's Win% from which the result counts as likely (STRENGTH.md §4).
LIKELY: Final = 70.0
#: The glyph of each exported judgment, as a chess player writes it after the move.
GLYPHS: Final = {"Inaccuracy": "?!", "Mistake": "?", "Blunder": "??"}


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


def win_curve(evals: Sequence[PlyEval], *, white_first: bool = True) -> list[float | None]:
    """White's Win% (0–100) after each ply, ``None`` where the ply has no eval: the eval graph.
    """
    return [win_percent(ev, white_to_move=(i % 2 == 1) == white_first)
            for i, ev in enumerate(evals)]


def notation(ply: int, san: str, *, white_first: bool = True, first_move_number: int = 1,
             judgment: str | None = None) -> str:
    """Move number and SAN as a chess player writes them: ``"7.Nf3"``, ``"24…Qxb2"``, with the
    judgment's glyph (``"24…Qxb2??"``) where given. ``ply`` is 1-based."""
    index = ply - 1 + (0 if white_first else 1)
    number = first_move_number + index // 2
    dots = "." if index % 2 == 0 else "…"
    return f"{number}{dots}{san}{GLYPHS.get(judgment or '', '')}"


def _point(ply: int, evals: Sequence[PlyEval], sans: Sequence[str], before: float,
           after: float, white_first: bool, first_move_number: int) -> TurningPoint:
    """The move at ``ply`` (1-based) with White's Win% ``before`` and ``after`` it."""
    white = (ply % 2 == 1) == white_first
    ev = evals[ply - 1]
    mover = (before, after) if white else (100 - before, 100 - after)
    return TurningPoint(ply, "white" if white else "black", sans[ply - 1],
                        notation(ply, sans[ply - 1], white_first=white_first,
                                 first_move_number=first_move_number, judgment=ev.judgment),
                        mover[0], mover[1], ev.best)


def _game_turn(curve: list[tuple[int, float, float]], winner: Color | None,
               make: _Maker) -> GameTurn:
    """The game's turn from (ply, White's Win% before, after) of the plies with evals."""
    if not curve:
        return GameTurn(None, "no evals")
    if winner is None:
        inside = [abs(after - 50) < LIKELY - 50 for _, _, after in curve]
        if all(inside) and abs(curve[0][1] - 50) < LIKELY - 50:
            return GameTurn(None, "balanced to the end")
        if not inside[-1]:
            return GameTurn(None, "drawn against the evals")
        k = max(i for i, ok in enumerate(inside) if not ok) + 1
        point = make(*curve[k])
        return GameTurn(point, f"the draw became likely after {point.notation}")
    sign = 1 if winner == "white" else -1
    mine = [50 + sign * (after - 50) >= LIKELY for _, _, after in curve]
    if not mine[-1]:
        final = 50 + sign * (curve[-1][2] - 50)
        if final <= 100 - LIKELY:
            return GameTurn(None, f"{winner} won against the evals")
        return GameTurn(None, "balanced to the end")
    k = next(i for i in range(len(mine) - 1, -1, -1) if i == 0 or not mine[i - 1])
    if k == 0 and 50 + sign * (curve[0][1] - 50) >= LIKELY:
        return GameTurn(None, f"{winner} winning for good from the first eval")
    point = make(*curve[k])
    return GameTurn(point, f"{winner} winning for good after {point.notation}")


class _Maker:
    """Builds the :class:`TurningPoint` of a ply from White's Win% before and after it."""

    def __init__(self, evals: Sequence[PlyEval], sans: Sequence[str], white_first: bool,
                 first_move_number: int) -> None:
        self.args = (evals, sans)
        self.white_first, self.first = white_first, first_move_number

    def __call__(self, ply: int, before: float, after: float) -> TurningPoint:
        return _point(ply, *self.args, before, after, self.white_first, self.first)


def turning_points(evals: Sequence[PlyEval], sans: Sequence[str], *, winner: Color | None,
                   white_first: bool = True, first_move_number: int = 1) -> TurningPoints:
    """The turning points of a game from its evals (one per ply, White's view) and its moves
    (SAN, one per ply). ``winner`` ``None``: a draw (or no result). Raises ValueError when
    ``evals`` is longer than ``sans``.

    A player's turning point is their move with the largest Win% drop (mover's view; the first
    such move on a tie; ``None`` when no move of theirs lost Win%). Moves whose eval before or
    after is missing are skipped. The game's: the move that started the final stretch in which
    the winner's Win% stayed at 70 % or more (for a draw, within 30–70 %).
    """
    if len(evals) > len(sans):
        raise ValueError(f"{len(evals)} evals for {len(sans)} moves")
    curve: list[tuple[int, float, float]] = []
    before = win_percent(START)
    for ply, after in enumerate(win_curve(evals, white_first=white_first), start=1):
        if before is not None and after is not None:
            curve.append((ply, before, after))
        before = after
    make = _Maker(evals, sans, white_first, first_move_number)
    worst: dict[Color, TurningPoint | None] = {"white": None, "black": None}
    for ply, b, a in curve:
        point = make(ply, b, a)
        drop = point.win_before - point.win_after
        best_so_far = worst[point.color]
        if drop > 0 and (best_so_far is None
                         or drop > best_so_far.win_before - best_so_far.win_after):
            worst[point.color] = point
    return TurningPoints(worst["white"], worst["black"], _game_turn(curve, winner, make))
