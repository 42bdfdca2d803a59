"""What the board shows at each move (tracker.analysis.board), the level model 5's board and
opening columns: flags worked out by hand on a short game, the stop at an illegal move, and his
own first two moves."""

from __future__ import annotations

import chess

from tracker.analysis.board import (
    CAPTURE_AVAILABLE,
    CAPTURED,
    CHANCE,
    IN_CHECK,
    LEAVES_HANGING,
    OWN_HANGING,
    TOOK_HANGING,
    board_flags,
    own_opening,
)

GAME = ["e4", "d5", "exd5", "Qxd5", "Nc3", "Qa5"]


def test_the_flags_of_a_scandinavian() -> None:
    # 3.exd5: e4 attacked by d5 and undefended; d5 is defended by the queen, so the pawn
    # taken was not free; after it the pawn on d5 hangs to the queen.
    # 3…Qxd5 takes that free pawn; 4.Nc3 attacks the queen, which hangs before 4…Qa5.
    assert board_flags(GAME) == [
        0, 0,
        CAPTURE_AVAILABLE | OWN_HANGING | CAPTURED | LEAVES_HANGING,
        CAPTURE_AVAILABLE | CHANCE | CAPTURED | TOOK_HANGING,
        0,
        CAPTURE_AVAILABLE | OWN_HANGING,
    ]


def test_the_flags_stop_at_a_move_that_cannot_be_played() -> None:
    assert board_flags(["e4", "e5", "Ke3", "Nc6"]) == [0, 0]
    assert board_flags(["e4", "e4"]) == [0]
    assert board_flags(GAME, "not a fen") == []


def test_a_check_and_a_position_from_a_fen() -> None:
    # White's queen gives check from h5 after 1.e4 f6 2.Qh5+: Black is in check at ply 4
    fen = "rnbqkbnr/ppppp1pp/5p2/7Q/4P3/8/PPPP1PPP/RNB1KBNR b KQkq - 1 2"
    (flags,) = board_flags(["g6"], fen)
    assert flags & IN_CHECK
    assert board_flags(["Qh5+"], chess.STARTING_FEN) == []  # not legal at the start


def test_his_own_first_two_moves() -> None:
    assert own_opening(GAME, "white") == ("w", "e2e4", "e4d5")
    assert own_opening(GAME, "black") == ("b", "d7d5", "d8d5")
    assert own_opening(["e4"], "black") == ("b",)
    assert own_opening(GAME, "white", chess.STARTING_FEN) == ("w", "e2e4", "e4d5")
    assert own_opening(GAME, "white", "8/8/8/8/8/8/8/K1k5 w - - 0 1") == ()
