"""One game as a chess player looks at it: the moves in SAN, the final position drawn by
python-chess as SVG, and the link to lichess.org.

Read from the game's stored source text (the NDJSON line or the PGN game), so nothing has to
be downloaded again. A game whose moves cannot be read (an old PGN without moves, a variant
python-chess does not know, an illegal move, a stored text that no longer decodes) is shown
without them, or with those read before the problem, and the reason in one line: never an
exception. Only the main line is read, and at most :data:`MAX_VIEW_PGN_CHARS` of a PGN game
(100,000 side variations cost python-chess 17 s when built as a tree).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import chess
import chess.pgn
import chess.svg
import chess.variant

from tracker.report.presentation import game_url
from tracker.sources.game_text import QuietBuilder, read_pgn_game

#: Board size on screen (pixels); the SVG scales.
BOARD_SIZE = 360
#: Characters of a stored PGN game the view reads: a real game with every clock and comment
#: is ~50 KB; beyond this only the moves read so far are shown, with a note.
MAX_VIEW_PGN_CHARS = 256 * 1024


class _MainLine(QuietBuilder):
    """python-chess's game builder that skips every side variation (the view shows the main
    line): no board is copied and no node built for them, in time linear in the text. Its
    errors are not logged: the first is said in our words (``problem``)."""

    # BaseVisitor.begin_variation may return SKIP; GameBuilder's stub narrows it to None
    def begin_variation(self) -> chess.pgn.SkipType:  # type: ignore[override]
        return chess.pgn.SKIP

    def end_variation(self) -> None:  # python-chess calls it for a skipped variation too
        return None


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
    text; the moves read before a bad one are kept. A null move (``--``) is kept as one."""
    start = chess.Board()
    board = start.copy()
    try:
        if source == "pgn":
            cut = len(raw) > MAX_VIEW_PGN_CHARS
            game, bad = read_pgn_game(raw[:MAX_VIEW_PGN_CHARS], _MainLine)
            if game is None:
                return start, board, "the stored PGN has no game"
            start = game.board()
            board = start.copy()
            for move in game.mainline_moves():
                board.push(move)
            problem = (f"moves read up to an error: {bad}" if bad else
                       f"only the first {MAX_VIEW_PGN_CHARS // 1024} KB of this game's "
                       f"{len(raw) // 1024} KB were read" if cut else "")
            return start, board, problem
        obj = json.loads(raw)
        start = _board(variant, obj.get("initialFen") or initial_fen)
        board = start.copy()
        for san in str(obj.get("moves") or "").split():
            board.push_san(san)
        return start, board, ""
    except (ValueError, AttributeError, IndexError) as exc:
        return start, board, f"the moves cannot be read: {exc}"


def _sans(start: chess.Board, played: list[chess.Move]) -> tuple[list[str], str]:
    """The moves in SAN and numbered as people write them (``1. e4 e5``, ``1... e5`` when
    Black moved first; a null move is ``--``)."""
    replay = start.copy()
    sans: list[str] = []
    parts: list[str] = []
    for move in played:
        san = replay.san(move)
        if replay.turn == chess.WHITE:
            parts.append(f"{replay.fullmove_number}. {san}")
        else:
            parts.append(f"{replay.fullmove_number}... {san}" if not parts else san)
        sans.append(san)
        replay.push(move)
    return sans, " ".join(parts)


def game_moves(game_id: str, raw: str, *, source: str, variant: str = "standard",
               initial_fen: str | None = None, orientation: str = "white") -> GameMoves:
    """A stored game's moves and final position (see :class:`GameMoves`)."""
    start, board, problem = read_moves(raw, source=source, variant=variant,
                                       initial_fen=initial_fen)
    played = list(board.move_stack)
    sans, numbered = _sans(start, played)
    svg = chess.svg.board(board, size=BOARD_SIZE, lastmove=played[-1] if played else None,
                          orientation=chess.WHITE if orientation == "white" else chess.BLACK,
                          check=board.king(board.turn) if board.is_check() else None)
    return GameMoves(game_id, sans, numbered, board.fen(), svg,
                     game_url(game_id, orientation), problem)


def unreadable(game_id: str, reason: str, *, orientation: str = "white") -> GameMoves:
    """The view of a game whose stored text cannot be read (``reason``, one line): no moves,
    the start position, and how to repair it."""
    board = chess.Board()
    return GameMoves(
        game_id, [], "", board.fen(),
        chess.svg.board(board, size=BOARD_SIZE,
                        orientation=chess.WHITE if orientation == "white" else chess.BLACK),
        game_url(game_id, orientation),
        f"this game's stored text cannot be read: {reason}; import the game again to repair "
        "it")
