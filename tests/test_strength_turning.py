"""Where a game turned (tracker.analysis.turning, STRENGTH.md §4), on real analysed games and
on small hand-made eval lists."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import zstandard

from tracker.analysis.formulas import win_percent
from tracker.analysis.turning import TurningPoint, notation, turning_points, win_curve
from tracker.core.evals import PlyEval, from_lichess_entry

SAMPLE = (Path(__file__).parent / "fixtures" / "analysed"
          / "lichess-rapid-analysed-first2000.ndjson.zst")


def real_game(game_id: str) -> dict[str, Any]:
    with SAMPLE.open("rb") as raw:
        for line in io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw)):
            game: dict[str, Any] = json.loads(line)
            if game["id"] == game_id:
                return game
    raise LookupError(game_id)


def wp(cp: int) -> float:
    value = win_percent(PlyEval(cp, None))
    assert value is not None
    return value


def test_real_game_resigned() -> None:
    # 0068O1lq, Italian Game, Black won by resignation after 25…Qxd1+
    game = real_game("0068O1lq")
    evals = [from_lichess_entry(e) for e in game["analysis"]]
    tp = turning_points(evals, game["moves"].split(), winner=game["winner"])
    # White's worst: 16.Bg5?? from +3.96 to −6.84 (Lichess: "Blunder. Qe2 was best.")
    assert tp.white == TurningPoint(31, "white", "Bg5", "16.Bg5??", wp(396), wp(-684), "f3e2")
    assert tp.white.win_before == pytest.approx(81.12, abs=0.01)
    assert tp.white.win_after == pytest.approx(7.46, abs=0.01)
    # Black's worst: 6…Nxd5?? from −0.17 to +2.76, Black's view
    assert tp.black == TurningPoint(12, "black", "Nxd5", "6…Nxd5??", 100 - wp(-17),
                                    100 - wp(276), "c8g4")
    # the game: Black was never at 70 % for good until 24.Rg1?? (−0.14 → −8.81)
    assert tp.game.point == TurningPoint(47, "white", "Rg1", "24.Rg1??", wp(-14), wp(-881),
                                         "d1d3")
    assert tp.game.label == "black winning for good after 24.Rg1??"


def test_real_game_mated_without_final_eval() -> None:
    # 00KZKExr ends in mate: Lichess gives 115 evals for 116 moves
    game = real_game("00KZKExr")
    evals = [from_lichess_entry(e) for e in game["analysis"]]
    assert (len(evals), len(game["moves"].split())) == (115, 116)
    tp = turning_points(evals, game["moves"].split(), winner="black")
    assert tp.white is not None and tp.white.notation == "7.Qe3??"
    assert tp.black is not None and tp.black.notation == "6…Nd4??"
    assert tp.game.point is not None and tp.game.point.notation == "34.Rbc5??"


def test_notation() -> None:
    assert notation(1, "e4") == "1.e4"
    assert notation(48, "Qxb2", judgment="Blunder") == "24…Qxb2??"
    assert notation(13, "Nf3", judgment="Inaccuracy") == "7.Nf3?!"
    assert notation(1, "Kd7", white_first=False, first_move_number=30) == "30…Kd7"
    assert notation(2, "Ke2", white_first=False, first_move_number=30) == "31.Ke2"


def cps(*values: int) -> list[PlyEval]:
    return [PlyEval(v, None) for v in values]


def test_draw_balanced_to_the_end() -> None:
    tp = turning_points(cps(20, 40, 10, -40), ["e4", "e5", "Nf3", "Nc6"], winner=None)
    assert tp.game == (None, "balanced to the end")
    # White: 15 → 20 gains, 40 → 10 loses; Black: 20 → 40 loses, 10 → −40 gains
    assert tp.white == TurningPoint(3, "white", "Nf3", "2.Nf3", wp(40), wp(10), None)
    assert tp.black == TurningPoint(2, "black", "e5", "1…e5", 100 - wp(20), 100 - wp(40), None)


def test_draw_after_an_equalising_move() -> None:
    tp = turning_points(cps(20, 400, 0, 10), ["a", "b", "c", "d"], winner=None)
    assert tp.game.point is not None and tp.game.point.ply == 3
    assert tp.game.label == "the draw became likely after 2.c"
    tp = turning_points(cps(20, 400), ["a", "b"], winner=None)
    assert tp.game == (None, "drawn against the evals")


def test_won_against_the_evals() -> None:
    tp = turning_points(cps(20, -600, -700), ["a", "b", "c"], winner="white")
    assert tp.game == (None, "white won against the evals")
    tp = turning_points(cps(20, 100, 90), ["a", "b", "c"], winner="black")
    assert tp.game == (None, "balanced to the end")


def test_winning_for_good() -> None:
    # White finds a mate at once; Black's move keeps it (mate 2 → mate 1: no loss for Black)
    tp = turning_points([PlyEval(None, 2), PlyEval(None, 1)], ["Qh5", "g6"], winner="white")
    assert tp.game.point is not None and tp.game.point.ply == 1
    assert tp.game.label == "white winning for good after 1.Qh5"
    assert tp.black is None and tp.white is None
    # the first evals missing: the stretch starts at the first eval
    tp = turning_points([PlyEval(None, None), *cps(900, 900)], ["a", "b", "c"], winner="white")
    assert tp.game == (None, "white winning for good from the first eval")


def test_no_losing_move_gives_no_turning_point() -> None:
    tp = turning_points(cps(30, 10), ["e4", "e5"], winner=None)
    assert tp.white is None  # 15 → 30 gains
    assert tp.black is None  # 30 → 10 gains for Black


def test_curve_and_errors() -> None:
    # mate 0 after White's second move: Black, to move, is mated
    assert win_curve([PlyEval(0, None), PlyEval(None, None), PlyEval(None, 0)]) == [
        50.0, None, pytest.approx(97.545, abs=0.001)]
    with pytest.raises(ValueError, match="2 evals for 1 moves"):
        turning_points(cps(1, 2), ["e4"], winner=None)
