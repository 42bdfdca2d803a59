"""Experiment (issue 33 point 4): what the board in front of the player says of his losses.

Per ply of a game (python-chess, replaying Lichess's SAN ``moves``), descriptors of the board
BEFORE the move, from the mover's side (``PLY_COLUMNS``); per player-game, a handful of
summaries of his own moves' Win% losses conditioned on them (``BOARD_SUMMARY``). Only the
player's own positions and moves are read: never the opponent's moves' losses, ratings, result,
status or clock.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import chess
import numpy as np

VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9,
         chess.KING: 0}

#: One row per ply (the mover's view of the board before his move, then what he played).
PLY_COLUMNS = (
    "legal",            # legal move count
    "material",         # material on the board, both sides (P1 N3 B3 R5 Q9)
    "balance",          # the mover's material minus the opponent's
    "check",            # the mover is in check
    "captures",         # legal captures available
    "attacked",         # the mover's pieces (not the king) attacked by the opponent
    "hanging",          # ... attacked and not defended
    "opp_hanging",      # opponent's pieces (not the king) the mover attacks, undefended
    "queens",           # queens on the board (any)
    "played_capture",   # the move played captures
    "played_check",     # the move played gives check
    "recapture",        # captures on the square of the opponent's last capture
    "leaves_hanging",   # after the move, one of the mover's pieces is attacked and undefended
    "took_hanging",     # the move captured an undefended opponent piece
)
COL = {name: i for i, name in enumerate(PLY_COLUMNS)}


def _hanging(board: chess.Board, color: chess.Color) -> tuple[int, int]:
    """(attacked, attacked and undefended) pieces of ``color`` other than the king."""
    attacked = hanging = 0
    for sq in chess.SquareSet(board.occupied_co[color] & ~board.kings):
        if board.is_attacked_by(not color, sq):
            attacked += 1
            if not board.is_attacked_by(color, sq):
                hanging += 1
    return attacked, hanging


def ply_rows(san_moves: str) -> np.ndarray:
    """The :data:`PLY_COLUMNS` of every ply of a game (plies × columns, int16); stops at the
    first move it cannot read (the rows so far)."""
    board = chess.Board()
    rows: list[list[int]] = []
    last_capture_sq: int | None = None
    for san in san_moves.split():
        me = board.turn
        legal = board.legal_moves.count()
        captures = sum(1 for _ in board.generate_legal_captures())
        mine = sum(VALUE[pt] * len(board.pieces(pt, me)) for pt in VALUE)
        theirs = sum(VALUE[pt] * len(board.pieces(pt, not me)) for pt in VALUE)
        attacked, hanging = _hanging(board, me)
        _, opp_hanging = _hanging(board, not me)
        check = board.is_check()
        queens = int(board.queens != 0)
        try:
            move = board.parse_san(san)
        except ValueError:
            break
        is_capture = board.is_capture(move)
        took_hanging = 0
        if is_capture:
            target = move.to_square
            took_hanging = int(board.piece_at(target) is not None
                               and not board.is_attacked_by(not me, target))
        recapture = int(is_capture and last_capture_sq == move.to_square)
        gives_check = board.gives_check(move)
        board.push(move)
        _, left = _hanging(board, me)
        rows.append([legal, mine + theirs, mine - theirs, int(check), captures, attacked,
                     hanging, opp_hanging, queens, int(is_capture), int(gives_check),
                     recapture, int(left > 0), took_hanging])
        last_capture_sq = move.to_square if is_capture else None
    return np.asarray(rows, dtype=np.int16).reshape(len(rows), len(PLY_COLUMNS))


#: Per player-game: the summaries added to the level model's per-game summary.
BOARD_SUMMARY = (
    "complex: mean sqrt(loss)", "complex: rate >= 10", "simple: mean sqrt(loss)",
    "simple: rate >= 10", "complex share",
    "capture available: mean sqrt(loss)", "no capture available: mean sqrt(loss)",
    "share of moves leaving a piece hanging", "in check: mean sqrt(loss)",
    "own piece hanging: mean sqrt(loss)", "free piece taken share (of chances)",
    "mean ln(legal moves)", "capture share", "queens off: mean sqrt(loss)",
)


def board_summary(losses: Sequence[float], rows: np.ndarray, legal_median: float,
                  free_rate: float) -> list[float]:
    """:data:`BOARD_SUMMARY` of one player's game: ``losses`` his moves' Win% losses (≥ 0),
    ``rows`` their :func:`ply_rows` rows (same order); ``legal_median`` the training positions'
    median legal move count (what "complex" means); ``free_rate`` the training share of free
    pieces taken (the fallback when a game offers none). A condition no move meets falls back
    to the game's mean √loss (rates to its overall rate)."""
    loss = np.asarray(losses, dtype=np.float64)
    root = np.sqrt(loss)
    big = loss >= 10
    mean_root, big_rate = float(root.mean()), float(big.mean())

    def mean_of(mask: np.ndarray, x: np.ndarray, fallback: float) -> float:
        return float(x[mask].mean()) if mask.any() else fallback

    complex_ = (rows[:, COL["legal"]] > legal_median) | (rows[:, COL["hanging"]] > 0)
    simple = ~complex_
    cap = rows[:, COL["captures"]] > 0
    chance = rows[:, COL["opp_hanging"]] > 0
    return [mean_of(complex_, root, mean_root), mean_of(complex_, big, big_rate),
            mean_of(simple, root, mean_root), mean_of(simple, big, big_rate),
            float(complex_.mean()),
            mean_of(cap, root, mean_root), mean_of(~cap, root, mean_root),
            float(rows[:, COL["leaves_hanging"]].mean()),
            mean_of(rows[:, COL["check"]] > 0, root, mean_root),
            mean_of(rows[:, COL["hanging"]] > 0, root, mean_root),
            mean_of(chance, rows[:, COL["took_hanging"]].astype(np.float64), free_rate),
            float(np.log(np.maximum(rows[:, COL["legal"]], 1)).mean()),
            float(rows[:, COL["played_capture"]].mean()),
            mean_of(rows[:, COL["queens"]] == 0, root, mean_root)]


def _check() -> None:
    rows = ply_rows("e4 d5 exd5 Qxd5 Nc3 Qa5")
    assert rows.shape == (6, len(PLY_COLUMNS)), rows.shape
    assert rows[0, COL["legal"]] == 20 and rows[0, COL["material"]] == 78
    assert rows[2, COL["played_capture"]] == 1 and rows[3, COL["recapture"]] == 1
    # after 1.e4 d5, white's e4 pawn is attacked and defended by nothing: hanging
    assert rows[2, COL["hanging"]] == 1 and rows[2, COL["took_hanging"]] == 0  # Qd8 guards d5
    assert rows[3, COL["took_hanging"]] == 1 and rows[3, COL["opp_hanging"]] == 1
    assert math.isclose(float(rows[1, COL["balance"]]), 0.0)


if __name__ == "__main__":
    _check()
    print("ok")
