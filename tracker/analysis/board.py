"""What the board in front of a player shows at each of his moves (python-chess), for the level
model (``level-<perf>-5`` on, ``docs/strength.md``): per ply a few flags of the position before
the move and of the move played, and the player's own first two moves. Pure; only the player's
positions and his own moves are read, never a rating, a result or a clock.

The flags are those of the board experiment (``scripts/experiments/board_features.py``,
``docs/experiments-board.md``), computed from attack masks: a piece is *hanging* when the other
side attacks it and its own side does not (pins ignored, as ``chess.Board.is_attacked_by``
does); kings are never counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import chess

from tracker.core.evals import Color

#: Before the move: a legal capture is available.
CAPTURE_AVAILABLE: Final = 1
#: Before the move: the mover is in check.
IN_CHECK: Final = 2
#: Before the move: one of the mover's pieces is hanging.
OWN_HANGING: Final = 4
#: Before the move: one of the opponent's pieces is hanging (a free piece on offer).
CHANCE: Final = 8
#: The move played captures.
CAPTURED: Final = 16
#: The move played took a piece its side did not defend.
TOOK_HANGING: Final = 32
#: After the move, one of the mover's pieces is hanging.
LEAVES_HANGING: Final = 64


def _attacked(board: chess.Board, color: chess.Color) -> int:
    """The squares ``color``'s pieces attack (a bitboard)."""
    mask = 0
    for square in chess.scan_forward(board.occupied_co[color]):
        mask |= int(board.attacks_mask(square))
    return mask


def _hanging(board: chess.Board, color: chess.Color, by_color: int, by_other: int) -> bool:
    """Whether a piece of ``color`` (not the king) is attacked (``by_other``: the other side's
    attack mask) and undefended (``by_color``: its own side's)."""
    return bool(board.occupied_co[color] & ~board.kings & by_other & ~by_color)


def board_flags(sans: Sequence[str], initial_fen: str | None = None) -> list[int]:
    """Per ply (in order, from ``initial_fen`` or the standard start), the mover's flags
    (:data:`CAPTURE_AVAILABLE` … :data:`LEAVES_HANGING`, or-ed). Stops at the first move it
    cannot read (SAN that is not legal there): the list is then shorter than ``sans``. ~1 ms
    per 10 plies."""
    try:
        board = chess.Board(initial_fen) if initial_fen else chess.Board()
    except ValueError:
        return []
    out: list[int] = []
    attacks = {chess.WHITE: _attacked(board, chess.WHITE),
               chess.BLACK: _attacked(board, chess.BLACK)}
    for san in sans:
        me = board.turn
        mine, theirs = attacks[me], attacks[not me]
        flags = 0
        if any(True for _ in board.generate_legal_captures()):
            flags |= CAPTURE_AVAILABLE
        if board.is_check():
            flags |= IN_CHECK
        if _hanging(board, me, mine, theirs):
            flags |= OWN_HANGING
        if _hanging(board, not me, theirs, mine):
            flags |= CHANCE
        try:
            move = board.parse_san(san)
        except ValueError:
            break
        if board.is_capture(move):
            flags |= CAPTURED
            if board.piece_at(move.to_square) is not None and not theirs & chess.BB_SQUARES[
                    move.to_square]:
                flags |= TOOK_HANGING
        board.push(move)
        attacks = {chess.WHITE: _attacked(board, chess.WHITE),
                   chess.BLACK: _attacked(board, chess.BLACK)}
        if _hanging(board, me, attacks[me], attacks[not me]):
            flags |= LEAVES_HANGING
        out.append(flags)
    return out


def own_opening(sans: Sequence[str], color: Color, initial_fen: str | None = None
                ) -> tuple[str, ...]:
    """The player's own first two moves as an opening's identity: ``("w", "e2e4", "g1f3")``
    (his colour's initial, his moves in UCI; fewer where the game is shorter or a move cannot
    be read); ``()`` for a game from another position than the standard start."""
    if initial_fen and initial_fen != chess.STARTING_FEN:
        return ()
    board = chess.Board()
    ucis: list[str] = []
    for san in sans[:4]:
        try:
            ucis.append(board.push_san(san).uci())
        except ValueError:
            break
    first = 0 if color == "white" else 1
    return (color[0], *ucis[first:3 + first:2])
