"""A stored game's text read again: its moves (SAN) and the evals it carries.

Pure: the game's raw text (the NDJSON line or the PGN game, as the store keeps it) in, the
main line's moves and Lichess's evals out. Used by a local analysis (which moves to search,
and whether Lichess already analysed the game) and by the strength report (the moves and
clocks beside the evals, and why a game without evals cannot have any). A move that cannot be
read is said in our words (:func:`bad_move`: ``move 14.Qh6 is illegal there``); python-chess's
own log of it (the ``chess.pgn`` logger) is never written.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

import chess.pgn

from tracker.core.records import Analysis
from tracker.sources.ndjson import analysis_from_json
from tracker.sources.pgn_evals import pgn_analysis


@dataclass(frozen=True, slots=True)
class GameText:
    """``sans``: the main line's moves; ``clocks``: Lichess's exported clocks (centiseconds,
    one per ply, both players) or ``None``; ``analysis``: the Lichess evals in the text, or
    ``None``; ``problem``: why the moves could not be read (all of them: ``sans`` then holds
    the moves before the bad one), else ``""``."""

    sans: tuple[str, ...]
    clocks: tuple[int, ...] | None
    analysis: Analysis | None
    problem: str = ""


def move_label(board: chess.Board, san: str) -> str:
    """``san`` numbered as people write it, played from ``board``: ``14.Qh6`` (White's
    move), ``14...Qh6`` (Black's)."""
    return f"{board.fullmove_number}{'.' if board.turn == chess.WHITE else '...'}{san}"


def bad_move(board: chess.Board, san: str, error: Exception) -> str:
    """Why ``san`` cannot be played from ``board`` (``error``: python-chess's ValueError for
    it), in one phrase: ``move 14.Qh6 is illegal there``, ``… is ambiguous there``, or
    ``… is not a move``."""
    kind = ("is ambiguous there" if isinstance(error, chess.AmbiguousMoveError) else
            "is not a move" if isinstance(error, chess.InvalidMoveError) else
            "is illegal there")
    return f"move {move_label(board, san)} {kind}"


def read_game_text(raw: str, source: str) -> GameText:
    """The moves, clocks and evals of a stored game (``source``: ``api``, ``ndjson`` or
    ``pgn``). Never raises: a text that cannot be read gives no moves and says why."""
    if source == "pgn":
        return _pgn_text(raw)
    try:
        obj = json.loads(raw)
    except ValueError:
        return GameText((), None, None, "the stored text is not JSON")
    if not isinstance(obj, dict):
        return GameText((), None, None, "the stored text is not a game object")
    moves = obj.get("moves")
    clocks = obj.get("clocks")
    return GameText(
        tuple(moves.split()) if isinstance(moves, str) else (),
        tuple(int(c) for c in clocks) if isinstance(clocks, list) and all(
            isinstance(c, int) and not isinstance(c, bool) for c in clocks) else None,
        analysis_from_json(obj.get("analysis")),
    )


def unreadable_moves(raw: str, source: str, initial_fen: str | None = None) -> str:
    """Why a stored game's moves cannot be read (as :attr:`GameText.problem`; the moves of
    an NDJSON game are played from the standard start or ``initial_fen``, its FEN, to find
    an illegal one), or ``""`` when they can. Never raises."""
    text = read_game_text(raw, source)
    if text.problem or source == "pgn":
        return text.problem
    try:
        board = chess.Board(initial_fen) if initial_fen else chess.Board()
    except ValueError:
        return "its set-up position cannot be read"
    try:
        legal_moves(board, text.sans)
    except ValueError as exc:  # bad_move's words
        return str(exc)
    return ""


def legal_moves(board: chess.Board, sans: Sequence[str]) -> list[chess.Move]:
    """``sans`` as moves from ``board`` (played on it). Raises ValueError for an illegal one,
    saying which (:func:`bad_move`: ``move 14.Qh6 is illegal there``)."""
    moves: list[chess.Move] = []
    for san in sans:
        try:
            moves.append(board.push_san(san))
        except ValueError as exc:
            raise ValueError(bad_move(board, san, exc)) from None
    return moves


class QuietBuilder(chess.pgn.GameBuilder[chess.pgn.Game]):
    """python-chess's game builder (``chess.pgn.read_game(…, Visitor=…)``), its errors kept
    (``game.errors``) but not logged; the first one said in our words in :attr:`problem`.
    One in a side variation counts too: python-chess then goes on with the main line from
    the variation's position."""

    problem: str = ""  # also when no game was found (begin_game never called)
    _san: tuple[chess.Board, str] | None = None

    def begin_game(self) -> None:
        super().begin_game()
        self.problem = ""
        self._san = None

    def begin_parse_san(self, board: chess.Board, san: str) -> None:
        self._san = (board, san)

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)
        if self.problem:
            return
        if self._san is None:  # before the moves: the variant or set-up position tags
            self.problem = f"its tags cannot be read ({error})"
        else:
            side = " (in a side variation)" if len(self.variation_stack) > 1 else ""
            self.problem = bad_move(*self._san, error) + side


def read_pgn_game(text: str, builder: type[QuietBuilder] = QuietBuilder
                  ) -> tuple[chess.pgn.Game | None, str]:
    """The first game of the PGN ``text`` (``None``: none) read by ``builder`` without a log
    line, and the first problem met (:attr:`QuietBuilder.problem`, ``""`` for none). Raises
    what ``chess.pgn.read_game`` raises (ValueError, RecursionError for a deep nesting)."""
    made: list[QuietBuilder] = []

    def visitor() -> QuietBuilder:
        made.append(builder())
        return made[-1]

    game = chess.pgn.read_game(io.StringIO(text), Visitor=visitor)
    return game, made[0].problem if made else ""


def _pgn_text(raw: str) -> GameText:
    try:
        game, problem = read_pgn_game(raw)
    except (ValueError, RecursionError) as exc:  # python-chess collects most errors itself
        return GameText((), None, None, f"the PGN cannot be read: {exc}")
    if game is None:
        return GameText((), None, None, "no game in the stored PGN")
    sans: list[str] = []
    try:
        board = game.board()
    except ValueError as exc:  # a FEN tag that is no position: no moves were read
        return GameText((), None, None, f"its set-up position cannot be read ({exc})")
    for move in game.mainline_moves():
        sans.append(board.san(move))
        board.push(move)
    head, _, movetext = raw.partition("\n\n")
    analysis = pgn_analysis(movetext if movetext else head)
    return GameText(tuple(sans), None, analysis, problem)
