"""One game as a chess player looks at it: the moves in SAN, the final position drawn by
python-chess as SVG, and the link to lichess.org.

Read from the game's stored source text (the NDJSON line or the PGN game), so nothing has to
be downloaded again. A game whose moves cannot be read (an old PGN without moves, a variant
python-chess does not know) is shown without them, with the reason.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import chess
import chess.pgn
import chess.svg
import chess.variant

from tracker.presentation import game_url

#: Board size on screen (pixels); the SVG scales.
BOARD_SIZE = 360


@dataclass(frozen=True, slots=True)
class GameMoves:
    """``moves``: SAN, in order; ``numbered``: the same as people write them (``1. e4 e5
    2. Nf3 …``, ``1... e5`` when Black moved first from a set-up position); ``final_fen``: the
    position after the last move; ``svg``: that position drawn by python-chess, from
    ``orientation``'s side, the last move highlighted; ``url``: the game on lichess.org
    (``None`` for a PGN game without a Lichess id); ``problem``: why moves are missing, else
    ``""``."""

    game_id: str
    moves: list[str]
    numbered: str
    final_fen: str
    svg: str
    url: str | None
    problem: str = ""


def _board(variant: str, fen: str | None) -> chess.Board:
    if variant in ("standard", "fromPosition"):
        return chess.Board(fen) if fen else chess.Board()
    if variant == "chess960":
        return chess.Board(fen, chess960=True) if fen else chess.Board(chess960=True)
    board_cls = chess.variant.find_variant(variant.lower())
    return board_cls(fen) if fen else board_cls()


def read_moves(raw: str, *, source: str, variant: str = "standard",
               initial_fen: str | None = None) -> tuple[chess.Board, chess.Board, str]:
    """(start position, final position with its move stack, problem) from a game's stored
    text; the moves read before a bad one are kept."""
    start = chess.Board()
    board = start.copy()
    try:
        if source == "pgn":
            game = chess.pgn.read_game(io.StringIO(raw))
            if game is None:
                return start, board, "the stored PGN has no game"
            start = game.board()
            board = start.copy()
            for move in game.mainline_moves():
                board.push(move)
            problem = f"moves read up to an error: {game.errors[0]}" if game.errors else ""
            return start, board, problem
        obj = json.loads(raw)
        start = _board(variant, obj.get("initialFen") or initial_fen)
        board = start.copy()
        for san in str(obj.get("moves") or "").split():
            board.push_san(san)
        return start, board, ""
    except ValueError as exc:
        return start, board, f"the moves cannot be read: {exc}"


def game_moves(game_id: str, raw: str, *, source: str, variant: str = "standard",
               initial_fen: str | None = None, orientation: str = "white") -> GameMoves:
    """A stored game's moves and final position (see :class:`GameMoves`)."""
    start, board, problem = read_moves(raw, source=source, variant=variant,
                                       initial_fen=initial_fen)
    played = list(board.move_stack)
    replay = start.copy()
    sans = []
    for move in played:
        sans.append(replay.san(move))
        replay.push(move)
    numbered = start.variation_san(played) if played else ""
    svg = chess.svg.board(board, size=BOARD_SIZE, lastmove=played[-1] if played else None,
                          orientation=chess.WHITE if orientation == "white" else chess.BLACK,
                          check=board.king(board.turn) if board.is_check() else None)
    return GameMoves(game_id, sans, numbered, board.fen(), svg,
                     game_url(game_id, orientation), problem)
