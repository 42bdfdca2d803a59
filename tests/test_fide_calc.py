"""The Elo calculator against the worked examples of spec §8."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracker.fide.calc import calculate, parse_score
from tracker.fide.rules import ExpectedMethod, round_half_away

WIN, DRAW, LOSS = Fraction(1), Fraction(1, 2), Fraction(0)


def hundredths(x: Fraction | Decimal) -> Decimal:
    """A change as the two-decimal figure the spec prints (exact for the table)."""
    if isinstance(x, Fraction):
        return (Decimal(x.numerator) / Decimal(x.denominator)).quantize(Decimal("0.01"))
    return x.quantize(Decimal("0.01"))


@pytest.mark.parametrize(
    ("score", "change", "new_rating"),
    [
        (WIN, Fraction("15.20"), 1515),
        (DRAW, Fraction("5.20"), 1505),
        (LOSS, Fraction("-4.80"), 1495),
    ],
)
def test_1500_against_1700_at_k20(score: Fraction, change: Fraction, new_rating: int) -> None:
    result = calculate(1500, 20, [(1700, score)])
    assert result.games[0].expected == Fraction(24, 100)
    assert result.change == change
    assert result.new_rating == new_rating
    assert result.k == 20
    assert not result.rule_700_applied


def test_1500_win_draw_loss_changes_per_game_and_total_rounded_once() -> None:
    result = calculate(1500, 20, [(1400, WIN), (1600, DRAW), (1550, LOSS)])
    assert [g.change for g in result.games] == [
        Fraction("7.20"),
        Fraction("2.80"),
        Fraction("-8.60"),
    ]
    assert result.change == Fraction("1.40")
    assert result.new_rating == 1501


def test_1500_beats_1000_gains_1_60_with_the_table_and_1_82_with_the_formula() -> None:
    table = calculate(1500, 20, [(1000, WIN)])
    assert table.games[0].expected == Fraction(92, 100)
    assert table.change == Fraction("1.60")
    assert table.rule_400_applied
    formula = calculate(1500, 20, [(1000, WIN)], method="formula")
    assert isinstance(formula.change, Decimal)
    assert hundredths(formula.change) == Decimal("1.82")


def test_1500_loses_to_1000_drops_18_40() -> None:
    result = calculate(1500, 20, [(1000, LOSS)])
    assert result.change == Fraction("-18.40")
    assert result.new_rating == 1482


def test_1500_beats_1600_at_k32_with_the_formula_publishes_1520() -> None:
    result = calculate(1500, 32, [(1600, WIN)], method="formula")
    assert result.games[0].expected.quantize(Decimal("0.0001")) == Decimal("0.3599")
    assert hundredths(result.change) == Decimal("20.48")
    assert result.new_rating == 1520


def test_2400_beats_2400_at_k10_gains_5() -> None:
    result = calculate(2400, 10, [(2400, WIN)])
    assert result.change == 5
    assert result.new_rating == 2405


def test_700_rule_reduces_k_for_20_games() -> None:
    result = calculate(1500, 40, [(1500, DRAW)] * 20)
    assert result.k == 35
    assert result.k_requested == 40
    assert result.rule_700_applied


def test_700_rule_reduces_k20_to_17_for_40_games() -> None:
    result = calculate(1500, 20, [(1500, DRAW)] * 40)
    assert result.k == 17
    assert result.rule_700_applied


def test_700_rule_leaves_k40_for_17_games() -> None:
    result = calculate(1500, 40, [(1500, DRAW)] * 17)
    assert result.k == 40
    assert not result.rule_700_applied


def test_2700_beats_2200_uses_the_real_difference_under_fide_2025_10() -> None:
    result = calculate(2700, 10, [(2200, WIN)])
    assert result.games[0].expected == Fraction(96, 100)
    assert result.change == Fraction("0.40")
    assert not result.rule_400_applied


def test_2700_beats_2200_is_capped_under_fide_2024_03() -> None:
    result = calculate(2700, 10, [(2200, WIN)], rules="fide-2024-03")
    assert result.games[0].expected == Fraction(92, 100)
    assert result.change == Fraction("0.80")
    assert result.rule_400_applied


def test_2700_loses_to_1900_beyond_735_points_drops_10() -> None:
    result = calculate(2700, 10, [(1900, LOSS)])
    assert result.games[0].expected == 1
    assert result.change == -10
    assert result.new_rating == 2690


def test_ten_wins_400_points_below_at_k20_give_16_with_the_table_and_18_with_the_formula() -> None:
    games = [(1100, WIN)] * 10
    table = calculate(1500, 20, games)
    assert table.change == 16
    assert table.new_rating == 1516
    formula = calculate(1500, 20, games, method="formula")
    assert hundredths(formula.change) == Decimal("18.18")
    assert formula.new_rating == 1518


def test_change_of_plus_2_5_rounds_up_to_3() -> None:
    result = calculate(1500, 10, [(1310, WIN)])  # D 190 → PD .75 → 10 × .25
    assert result.change == Fraction(5, 2)
    assert result.new_rating == 1503


def test_change_of_minus_2_5_rounds_down_to_minus_3() -> None:
    result = calculate(1500, 10, [(1690, LOSS)])  # D −190 → PD .25 → 10 × −.25
    assert result.change == Fraction(-5, 2)
    assert result.new_rating == 1497


def test_cap_400_false_uses_the_real_difference_for_everyone() -> None:
    result = calculate(1500, 20, [(1000, WIN)], cap_400=False)
    assert result.games[0].expected == Fraction(96, 100)
    assert result.change == Fraction("0.80")
    assert not result.rule_400_applied


def test_scores_may_be_given_as_ints_or_decimals() -> None:
    result = calculate(1500, 20, [(1700, 1), (1700, Decimal("0.5"))])  # type: ignore[list-item]
    assert [g.score for g in result.games] == [WIN, DRAW]


@pytest.mark.parametrize("k", [0, -20])
def test_calculate_rejects_k_of_zero_or_less(k: int) -> None:
    with pytest.raises(ValueError, match="K must be a positive"):
        calculate(1500, k, [(1500, WIN)])


def test_calculate_rejects_no_games() -> None:
    with pytest.raises(ValueError, match="no games"):
        calculate(1500, 20, [])


@pytest.mark.parametrize("score", [Fraction(2), Fraction(1, 3), Fraction(-1), "x"])
def test_calculate_rejects_scores_other_than_0_half_and_1(score: object) -> None:
    with pytest.raises(ValueError, match="score must be 0, 1/2 or 1"):
        calculate(1500, 20, [(1500, score)])  # type: ignore[list-item]


@given(
    st.integers(min_value=1000, max_value=2900),
    st.sampled_from([10, 20, 32, 40]),
    st.lists(
        st.tuples(st.integers(min_value=1000, max_value=2900), st.sampled_from([WIN, DRAW, LOSS])),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from(get_args(ExpectedMethod)),
)
def test_total_change_is_the_sum_of_game_changes_rounded_once(
    rating: int, k: int, games: list[tuple[int, Fraction]], method: ExpectedMethod
) -> None:
    result = calculate(rating, k, games, method=method)
    assert result.k * len(games) <= 700
    start: Fraction | Decimal = Fraction(0) if method == "table" else Decimal(0)
    assert result.change == sum((g.change for g in result.games), start)
    assert result.new_rating == rating + round_half_away(result.change)


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("1", WIN),
        ("0", LOSS),
        ("0.5", DRAW),
        ("1/2", DRAW),
        ("=", DRAW),
        ("½", DRAW),
        (" 1 ", WIN),
        ("1.0", WIN),
        (".5", DRAW),
    ],
)
def test_parse_score_reads_the_usual_spellings(text: str, score: Fraction) -> None:
    assert parse_score(text) == score


@pytest.mark.parametrize("text", ["", "2", "0.25", "win", "1-0", "-1", "0.50000001"])
def test_parse_score_rejects_anything_else(text: str) -> None:
    with pytest.raises(ValueError, match="score must be"):
        parse_score(text)
