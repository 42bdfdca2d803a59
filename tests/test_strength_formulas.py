"""Lichess's per-game numbers reproduced (tracker.analysis.formulas, STRENGTH.md §2).

The accuracy cases are lila's own AccuracyPercentTest (same tolerances); the ACPL and judgment
cases are worked by hand from lila's AccuracyCP.scala and Advice.scala.
"""

from __future__ import annotations

import pytest

from tracker.analysis.formulas import (
    JudgmentCounts,
    PlayerSummary,
    acpl,
    ceiled_cp,
    exported_judgments,
    game_accuracy,
    game_summary,
    judge,
    move_accuracy,
    recomputed_judgments,
    round_half_up,
    win_percent,
)
from tracker.core.evals import PlyEval, from_lichess_entry


def cps(*values: int) -> list[PlyEval]:
    return [PlyEval(v, None) for v in values]


def test_win_percent_examples() -> None:
    assert win_percent(PlyEval(0, None)) == 50
    assert win_percent(PlyEval(100, None)) == pytest.approx(59.10, abs=0.005)
    assert win_percent(PlyEval(300, None)) == pytest.approx(75.11, abs=0.005)
    assert win_percent(PlyEval(1000, None)) == pytest.approx(97.545, abs=0.0005)
    assert win_percent(PlyEval(5000, None)) == win_percent(PlyEval(1000, None))
    assert win_percent(PlyEval(None, -7)) == pytest.approx(2.455, abs=0.0005)
    assert win_percent(PlyEval(None, None)) is None


def test_ceiled_cp_mates() -> None:
    assert ceiled_cp(PlyEval(None, 3)) == 1000
    assert ceiled_cp(PlyEval(None, -1)) == -1000
    assert ceiled_cp(PlyEval(-1234, None)) == -1000
    assert ceiled_cp(PlyEval(None, 0), white_to_move=True) == -1000
    assert ceiled_cp(PlyEval(None, 0), white_to_move=False) == 1000
    with pytest.raises(ValueError, match="side to move"):
        ceiled_cp(PlyEval(None, 0))


def test_move_accuracy_examples() -> None:
    assert move_accuracy(50, 60) == 100
    assert move_accuracy(60, 50) == pytest.approx(64.58, abs=0.005)
    assert move_accuracy(70, 50) == pytest.approx(41.02, abs=0.005)
    assert move_accuracy(100, 0) == 0


# (white first?, cps, white ± tolerance, black ± tolerance): lila AccuracyPercentTest
VECTORS = [
    (True, [15, 15], (100, 1), (100, 1)),
    (True, [-900, -900], (10, 5), (100, 1)),
    (True, [15, 900], (100, 1), (10, 5)),
    (True, [-900, 0], (10, 5), (10, 5)),
    (True, [15] * 20, (100, 1), (100, 1)),
    (True, [15] * 20 + [-900], (50, 5), (100, 1)),
    (True, [15] * 21 + [900], (100, 1), (50, 5)),
    (True, [-50, 15] * 5, (76, 8), (76, 8)),
    (True, [-50, 15] * 50, (76, 8), (76, 8)),
    (True, [-135, 15] * 50, (54, 8), (54, 8)),
    (True, [-435, 15] * 50, (20, 8), (20, 8)),
    (False, [15, 15], (100, 1), (100, 1)),
    (False, [900, 900], (100, 1), (10, 5)),
    (False, [15, -900], (10, 5), (100, 1)),
    (False, [900, 0], (10, 5), (10, 5)),
]


@pytest.mark.parametrize(("white_first", "values", "white", "black"), VECTORS)
def test_lichess_accuracy_vectors(white_first: bool, values: list[int],
                                  white: tuple[int, int], black: tuple[int, int]) -> None:
    w, b = game_accuracy(cps(*values), white_first=white_first)
    assert w == pytest.approx(white[0], abs=white[1])
    assert b == pytest.approx(black[0], abs=black[1])


@pytest.mark.parametrize("white_first", [True, False])
def test_accuracy_none_without_a_move_of_each_colour(white_first: bool) -> None:
    assert game_accuracy([], white_first=white_first) == (None, None)
    assert game_accuracy(cps(15), white_first=white_first) == (None, None)


def test_accuracy_exact_value_of_one_blunder() -> None:
    # one move each: White 51.38 % → 3.51 %, d = 47.87, 103.17·e^(−0.04354·47.87) − 2.167
    assert game_accuracy(cps(-900, -900)) == pytest.approx((10.664, 100.0), abs=0.001)


def test_acpl_example_from_the_spec() -> None:
    evals = [*cps(30, 50, -100, -80), PlyEval(None, -3)]
    assert acpl(evals) == (357, 20)


def test_acpl_details() -> None:
    assert acpl([]) == (None, None)
    assert acpl(cps(30)) == (0, None)  # the first move counts; Black has no complete pair
    # a missing eval skips both pairs it is in; halves round up
    assert acpl([*cps(14, 14), PlyEval(None, None), *cps(14)]) == (1, 0)
    # Black moves first: Black's first move is measured from 15 cp
    assert acpl(cps(40, 0), white_first=False) == (40, 25)
    assert round_half_up(2.5) == 3 and round_half_up(3.5) == 4 and round_half_up(0.49) == 0


def test_judge_cp() -> None:
    assert judge(PlyEval(15, None), PlyEval(-900, None), white_moved=True) == "Blunder"
    assert judge(PlyEval(0, None), PlyEval(-120, None), white_moved=True) == "Mistake"
    assert judge(PlyEval(0, None), PlyEval(-60, None), white_moved=True) == "Inaccuracy"
    assert judge(PlyEval(0, None), PlyEval(-50, None), white_moved=True) is None
    assert judge(PlyEval(0, None), PlyEval(-60, None), white_moved=False) is None
    assert judge(PlyEval(0, None), PlyEval(60, None), white_moved=False) == "Inaccuracy"
    # cp is not ceiled for judgments: 2000 → 700 drops the chances 0.140 (ceiled, 1000 → 700,
    # it would be 0.092: nothing)
    assert judge(PlyEval(2000, None), PlyEval(700, None), white_moved=True) == "Inaccuracy"
    assert judge(PlyEval(1000, None), PlyEval(700, None), white_moved=True) is None


def test_judge_mates() -> None:
    # mate created against the mover
    assert judge(PlyEval(-1200, None), PlyEval(None, -5), white_moved=True) == "Inaccuracy"
    assert judge(PlyEval(-800, None), PlyEval(None, -5), white_moved=True) == "Mistake"
    assert judge(PlyEval(200, None), PlyEval(None, -5), white_moved=True) == "Blunder"
    assert judge(PlyEval(-200, None), PlyEval(None, 5), white_moved=False) == "Blunder"
    # mate lost by the mover
    assert judge(PlyEval(None, 3), PlyEval(1200, None), white_moved=True) == "Inaccuracy"
    assert judge(PlyEval(None, 3), PlyEval(800, None), white_moved=True) == "Mistake"
    assert judge(PlyEval(None, 3), PlyEval(300, None), white_moved=True) == "Blunder"
    assert judge(PlyEval(None, -3), PlyEval(-1200, None), white_moved=False) == "Inaccuracy"
    assert judge(PlyEval(None, 3), PlyEval(None, -2), white_moved=True) == "Blunder"
    # a slower mate, a mate still against the mover: no judgment
    assert judge(PlyEval(None, 2), PlyEval(None, 6), white_moved=True) is None
    assert judge(PlyEval(None, -2), PlyEval(None, -1), white_moved=True) is None


def test_exported_and_recomputed_counts() -> None:
    evals = [PlyEval(20, None), PlyEval(300, None, "e7e5", "Mistake"),
             PlyEval(-400, None, "g1f3", "Blunder"), PlyEval(-420, None)]
    assert exported_judgments(evals) == (JudgmentCounts(0, 0, 1), JudgmentCounts(0, 1, 0))
    # recomputed, Black's 20 → 300 cp is a drop of 0.465 in winning chances: a Blunder, not the
    # Mistake exported (the export is kept as it is)
    assert recomputed_judgments(evals) == (JudgmentCounts(0, 0, 1), JudgmentCounts(0, 0, 1))
    assert exported_judgments(evals, white_first=False) == (
        JudgmentCounts(0, 1, 0), JudgmentCounts(0, 0, 1))


def test_game_summary_of_a_real_game() -> None:
    # game 0068O1lq of the shared analysed set (first 12 plies kept): Lichess's own entries
    entries: list[dict[str, object]] = [
        {"eval": 0}, {"eval": 12}, {"eval": 19}, {"eval": 32}, {"eval": 21}, {"eval": 20},
        {"eval": 21}, {"eval": 21},
        {"eval": -76, "best": "f1e1", "judgment": {"name": "Inaccuracy", "comment": "…"}},
        {"eval": 0, "best": "e8h8", "judgment": {"name": "Inaccuracy", "comment": "…"}},
        {"eval": -17},
        {"eval": 276, "best": "c8g4", "judgment": {"name": "Blunder", "comment": "…"}}]
    evals = [from_lichess_entry(e) for e in entries]
    summary = game_summary(evals)
    # White: losses 15, 0, 11, 0, 97, 17 → 140 / 6 = 23.3; Black: 12, 13, 0, 0, 76, 293 → 65.7
    assert summary.white == PlayerSummary(summary.white.accuracy, 23, 1, 0, 0)
    assert summary.black == PlayerSummary(summary.black.accuracy, 66, 1, 0, 1)
    assert summary.white.accuracy is not None and summary.black.accuracy is not None
    assert summary.white.accuracy > summary.black.accuracy


def test_from_lichess_entry() -> None:
    assert from_lichess_entry({"mate": -3}) == PlyEval(None, -3)
    assert from_lichess_entry({}) == PlyEval(None, None)
    with pytest.raises(ValueError, match="judgment"):
        from_lichess_entry({"eval": 1, "judgment": {"name": "Dubious"}})
    with pytest.raises(ValueError, match="integer"):
        from_lichess_entry({"eval": "12"})


def test_counts_from_a_pgn_without_glyphs_are_computed_not_a_false_zero() -> None:
    """Issue 33 item 6: ``[%eval]`` but no ``?!``/``?``/``??`` (the same game from the API has
    judgments): the counts come from the evals by Lichess's thresholds, marked computed."""
    from tracker.sources.pgn_evals import pgn_analysis

    bare = pgn_analysis("1. e4 { [%eval 0.2] } 1... f6 { [%eval 3.0] } 2. d4 { [%eval 2.5] } "
                        "2... g5 { [%eval #1] } 3. Qh5# 1-0")
    assert bare is not None
    summary = game_summary(bare.evals)
    # Black: 0.20 → 3.00 drops his winning chances by 0.46 (Blunder), then a mate for White
    # from +2.5 ("Checkmate is now unavoidable": Blunder); White loses 0.07 at most: nothing
    assert summary.black[2:] == (0, 0, 2, True) and summary.white[2:] == (0, 0, 0, True)
    glyphs = pgn_analysis("1. e4 { [%eval 0.2] } 1... f6?? { [%eval 3.0] } 2. d4 { [%eval 2.5] } "
                          "2... g5 { [%eval #1] } 3. Qh5# 1-0")
    assert glyphs is not None
    # the export's own judgments: kept as they are, not computed
    assert game_summary(glyphs.evals).black[2:] == (0, 0, 1, False)
    assert game_summary([]).white[2:] == (0, 0, 0, False)
