"""A stored game's text read again: its moves (SAN) and the evals it carries.

Pure: the game's raw text (the NDJSON line or the PGN game, as the store keeps it) in, the
main line's moves and Lichess's evals out. Used by a local analysis (which moves to search,
and whether Lichess already analysed the game) and by the strength report (the moves and
clocks beside the evals).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import chess.pgn

from tracker.core.records import Analysis
from tracker.sources.ndjson import analysis_from_json
from tracker.sources.pgn_evals import pgn_analysis


@dataclass(frozen=True, slots=True)
class GameText:
    """``sans``: the main line's moves; ``clocks``: Lichess's exported clocks (centiseconds,
    one per ply, both players) or ``None``; ``analysis``: the Lichess evals in the text, or
    ``None``; ``problem``: why the moves could not be read, else ``""``."""

    sans: tuple[str, ...]
    clocks: tuple[int, ...] | None
    analysis: Analysis | None
    problem: str = ""


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


def _pgn_text(raw: str) -> GameText:
    try:
        game = chess.pgn.read_game(io.StringIO(raw))
    except (ValueError, RecursionError) as exc:  # python-chess collects most errors itself
        return GameText((), None, None, f"the PGN cannot be read: {exc}")
    if game is None:
        return GameText((), None, None, "no game in the stored PGN")
    sans: list[str] = []
    board = game.board()
    for move in game.mainline_moves():
        sans.append(board.san(move))
        board.push(move)
    head, _, movetext = raw.partition("\n\n")
    analysis = pgn_analysis(movetext if movetext else head)
    problem = f"the PGN has an error: {game.errors[0]}" if game.errors else ""
    return GameText(tuple(sans), None, analysis, problem)
