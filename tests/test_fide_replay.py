"""Replaying counted games as monthly FIDE rating periods (spec §3, §4, §6, §7)."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.fide.calc import calculate
from tracker.fide.replay import (
    CountedGame,
    ReplaySettings,
    initial_rating,
    performance_rating,
    replay,
)
from tracker.fide.rules import ExpectedMethod, Rules, round_half_away

WIN, DRAW, LOSS = 2, 1, 0


def month(period: str, games: list[tuple[int, int]]) -> list[CountedGame]:
    """CountedGames of one month from (opponent rating, score in half points) pairs."""
    return [CountedGame(period, opponent, score) for opponent, score in games]


def draws(period: str, n: int, opponent: int) -> list[CountedGame]:
    return month(period, [(opponent, DRAW)] * n)


#: Spec §6: 5 games, 3 points, opponents summing to 9507.
EXAMPLE_POOL = [(1900, WIN), (1900, WIN), (1900, WIN), (1900, LOSS), (1907, LOSS)]


# -- initial rating (§8.2, spec §6) ----------------------------------------------------------


def test_initial_rating_example_publishes_1922() -> None:
    [row] = replay(month("2024-01", EXAMPLE_POOL))
    assert row.rating_after == 1922
    assert row.note == "initial rating 1922 published"
    assert (row.rating_before, row.k, row.change, row.expected_score) == (None, None, None, None)
    assert row.score == 3
    assert row.games_total == 5
    assert row.performance == 1973  # Ra 1901.4, p .60 → dp 72


def test_initial_rating_function_matches_the_spec_example() -> None:
    assert initial_rating(9507, 5, 6) == 1922


def test_pool_needs_5_games_and_may_span_months() -> None:
    rows = replay(month("2024-01", EXAMPLE_POOL[2:]) + month("2024-02", EXAMPLE_POOL[:2]))
    assert rows[0].note == "unrated: 3 games in pool (5 needed)"
    assert rows[0].rating_after is None
    assert rows[0].games_total == 3
    assert rows[1].rating_after == 1922


def test_initial_rating_is_in_force_from_the_next_period_with_k40() -> None:
    rows = replay(month("2024-01", EXAMPLE_POOL) + month("2024-02", [(1922, WIN)]))
    assert rows[1].rating_before == 1922
    assert rows[1].k == 40  # 5 pool games + 0 < 30
    assert rows[1].change == 20
    assert rows[1].rating_after == 1942
    assert rows[1].games_total == 6


def test_initial_rating_is_capped_at_2200() -> None:
    [row] = replay(month("2024-01", [(2300, WIN)] * 5))
    assert row.rating_after == 2200
    assert row.note == "initial rating 2200 published (pool gives 2466, capped at 2200)"
    assert initial_rating(11500, 5, 10) == 2200


def test_pool_below_1400_stays_unrated_and_keeps_collecting() -> None:
    first = month("2024-01", [(1400, DRAW)] + [(1400, LOSS)] * 4)
    second = month("2024-02", [(1400, WIN)] * 5)
    rows = replay(first + second)
    # Ra (7000 + 3600) / 7 = 1514.29, p 1.5 / 7 → .21 → dp −230.
    assert rows[0].note == "unrated: pool of 5 games gives 1284, below 1400: not published"
    assert rows[0].rating_after is None
    # 10 games, 5.5 points: Ra 17600 / 12 = 1466.67, p 6.5 / 12 → .54 → dp +29.
    assert rows[1].rating_after == 1496
    assert rows[1].games_total == 10


def test_zero_score_first_period_is_ignored() -> None:
    rows = replay(month("2024-01", [(1500, LOSS)] * 5) + month("2024-02", EXAMPLE_POOL))
    assert rows[0].note == "first period scored zero: ignored"
    assert rows[0].games_total == 0
    assert rows[0].performance == 700  # shown for every period with games: 1500 − 800
    assert rows[1].rating_after == 1922  # the five losses are not in the pool
    assert rows[1].games_total == 5


def test_zero_score_in_a_later_period_counts() -> None:
    rows = replay(
        month("2024-01", [(1900, WIN), (1900, LOSS)]) + month("2024-02", [(1900, LOSS)] * 3)
    )
    # 5 games, 1 point: Ra 13100 / 7 = 1871.43, p 2 / 7 → .29 → dp −158.
    assert rows[1].rating_after == 1713


def test_pool_keeps_games_of_26_consecutive_months() -> None:
    rows = replay(month("2023-01", [(1800, WIN)] * 2) + month("2025-02", [(1800, DRAW)] * 3))
    # 25 months apart: both months in the pool. Ra 1800, p 4.5 / 7 → .64 → dp +102.
    assert rows[1].rating_after == 1902


def test_pool_drops_games_older_than_26_months() -> None:
    rows = replay(month("2023-01", [(1800, WIN)] * 2) + month("2025-03", [(1800, DRAW)] * 3))
    assert rows[1].rating_after is None
    assert rows[1].note == (
        "unrated: 3 games in pool (5 needed); 2 games older than 26 months dropped"
    )
    assert rows[1].games_total == 3


# -- the 1400 floor (§7.2.1) -----------------------------------------------------------------


def test_rated_player_falling_below_1400_is_unrated_from_next_period() -> None:
    rows = replay(
        month("2024-01", [(1410, LOSS)] * 10) + month("2024-02", [(1500, WIN), (1500, LOSS)]),
        ReplaySettings(start_rating=1410),
    )
    fall, after = rows
    assert (fall.k, fall.change) == (40, -200)
    assert fall.rating_after is None
    assert fall.note == "fell to 1210, below 1400: unrated from next period"
    assert after.rating_before is None
    assert after.note == "unrated: 2 games in pool (5 needed)"  # a fresh pool
    assert after.games_total == 12


def test_fresh_pool_after_a_fall_ignores_its_zero_score_first_period() -> None:
    rows = replay(
        month("2024-01", [(1410, LOSS)] * 10) + month("2024-02", [(1500, LOSS)] * 5),
        ReplaySettings(start_rating=1410),
    )
    assert rows[1].note == "first period scored zero: ignored"


def test_rated_player_reaching_exactly_1400_stays_rated() -> None:
    [row] = replay(month("2024-01", [(1420, LOSS)]), ReplaySettings(start_rating=1420))
    assert row.change == -20
    assert row.rating_after == 1400


# -- rounding (spec §4) ----------------------------------------------------------------------


def test_period_change_of_plus_2_5_rounds_to_plus_3() -> None:
    [row] = replay(month("2024-01", [(2310, WIN)]), ReplaySettings(start_rating=2500))
    assert row.k == 10  # published at 2400 or more
    assert row.change == Fraction(5, 2)
    assert row.rating_after == 2503


def test_period_change_of_minus_2_5_rounds_to_minus_3() -> None:
    [row] = replay(month("2024-01", [(2690, LOSS)]), ReplaySettings(start_rating=2500))
    assert row.change == Fraction(-5, 2)
    assert row.rating_after == 2497


def test_period_is_rounded_once_not_per_game() -> None:
    # 2700 is exempt from the cap: D 600 → PD .98, each win K 10 × .02 = +0.20. Rounded per
    # game that would be 0 + 0 + 0; rounded once, +0.60 → +1.
    [row] = replay(month("2024-01", [(2100, WIN)] * 3), ReplaySettings(start_rating=2700))
    assert row.change == Fraction(3, 5)
    assert row.rating_after == 2701


def test_2650_exemption_can_be_switched_to_the_2024_rules() -> None:
    settings = ReplaySettings(start_rating=2700, rules="fide-2024-03")
    [row] = replay(month("2024-01", [(2100, WIN)] * 3), settings)
    assert row.expected_score == Fraction(276, 100)  # D capped to 400: .92 each
    assert row.change == Fraction(12, 5)
    assert row.rating_after == 2702


# -- K (§8.3.3) ------------------------------------------------------------------------------


def test_700_rule_reduces_k_for_20_games() -> None:
    [row] = replay(draws("2024-01", 20, 1800), ReplaySettings(start_rating=1800))
    assert row.k == 35
    assert row.note == "K 40 (fewer than 30 games); 700 rule: K 35 for 20 games"


def test_700_rule_reduces_k20_to_17_for_40_games() -> None:
    rows = replay(
        draws("2024-01", 17, 1800) + draws("2024-02", 17, 1800) + draws("2024-03", 40, 1800),
        ReplaySettings(start_rating=1800),
    )
    assert rows[2].k == 17


def test_30_game_threshold_takes_effect_from_the_next_period() -> None:
    rows = replay(
        draws("2024-01", 17, 1800) + draws("2024-02", 17, 1800) + draws("2024-03", 1, 1800),
        ReplaySettings(start_rating=1800),
    )
    assert [r.k for r in rows] == [40, 40, 20]  # the 30th game falls inside February
    assert [r.games_total for r in rows] == [17, 34, 35]


def test_games_of_the_initial_pool_count_toward_30() -> None:
    rows = replay(
        month("2024-01", EXAMPLE_POOL) + draws("2024-02", 25, 1922) + draws("2024-03", 1, 1922)
    )
    assert rows[1].k == 28  # K 40 (5 games before), 700 rule for 25 games
    assert rows[2].k == 20  # 5 pool games + 25 = 30 before March
    assert rows[2].games_total == 31


def test_junior_keeps_k40_through_the_calendar_year_of_their_18th_birthday() -> None:
    games = (
        draws("2024-10", 20, 1800)
        + draws("2024-11", 20, 1800)
        + draws("2024-12", 10, 1800)
        + draws("2025-01", 10, 1800)
    )
    junior = replay(games, ReplaySettings(start_rating=1800, birth_year=2006))
    assert [r.k for r in junior] == [35, 35, 40, 20]  # 2024 − 2006 = 18; 2025: 19
    assert junior[2].note == "K 40 (junior)"
    adult = replay(games, ReplaySettings(start_rating=1800))
    assert [r.k for r in adult] == [35, 35, 20, 20]


def test_junior_published_at_2300_no_longer_gets_junior_k40() -> None:
    games = draws("2024-01", 30, 2300) + draws("2024-02", 10, 2300)
    published_2300 = replay(games, ReplaySettings(start_rating=2300, birth_year=2010))
    assert published_2300[1].k == 20
    below_2300 = replay(games, ReplaySettings(start_rating=2299, birth_year=2010))
    assert below_2300[1].k == 40


def test_k10_once_published_at_2400_for_good() -> None:
    rows = replay(
        month("2024-01", [(2400, LOSS)] * 10) + draws("2024-02", 1, 2350),
        ReplaySettings(start_rating=2400),
    )
    assert rows[0].k == 10  # a user-given start rating counts as published
    assert rows[0].rating_after == 2350
    assert rows[1].k == 10
    assert rows[1].note == "K 10 (published at 2400 or more)"


def test_reaching_2400_gives_k10_from_the_next_period() -> None:
    rows = replay(
        month("2024-01", [(2390, WIN)]) + draws("2024-02", 1, 2410),
        ReplaySettings(start_rating=2390),
    )
    assert rows[0].k == 40
    assert rows[0].rating_after == 2410
    assert rows[1].k == 10


def test_ten_wins_400_points_below_at_k20_gain_16_with_the_table_and_18_with_the_formula() -> None:
    games = draws("2024-01", 30, 1500) + month("2024-02", [(1100, WIN)] * 10)
    table = replay(games, ReplaySettings(start_rating=1500))
    assert table[0].change == 0
    assert table[1].k == 20
    assert table[1].change == 16
    assert table[1].rating_after == 1516
    formula = replay(games, ReplaySettings(start_rating=1500, expected="formula"))
    assert isinstance(formula[1].change, Decimal)
    assert isinstance(formula[1].expected_score, Decimal)
    assert formula[1].change.quantize(Decimal("0.01")) == Decimal("18.18")
    assert formula[1].rating_after == 1518


def test_more_than_700_games_in_a_month_give_k0() -> None:
    [row] = replay(month("2024-01", [(1000, DRAW)] * 701), ReplaySettings(start_rating=1500))
    assert row.k == 0
    assert row.change == 0
    assert row.rating_after == 1500


# -- the rows ---------------------------------------------------------------------------------


def test_months_listed_in_periods_get_rows_with_the_rating_unchanged() -> None:
    rows = replay(
        month("2024-01", [(1500, WIN)]) + month("2024-03", [(1520, LOSS)]),
        ReplaySettings(start_rating=1500),
        periods=["2024-04", "2024-02", "2023-12", "2024-01"],
    )
    assert [r.period for r in rows] == ["2023-12", "2024-01", "2024-02", "2024-03", "2024-04"]
    assert [r.rating_after for r in rows] == [1500, 1520, 1520, 1500, 1500]
    empty = rows[2]
    assert (empty.games, empty.score, empty.change, empty.performance) == (0, 0, 0, None)
    assert empty.rating_before == 1520
    assert empty.note == "no counted games: rating unchanged"


def test_empty_months_while_unrated_say_what_the_pool_holds() -> None:
    rows = replay(month("2024-01", EXAMPLE_POOL[:3]), periods=["2024-02"])
    assert rows[1].note == "unrated: no counted games; 3 games in pool"
    assert rows[1].rating_after is None


def test_no_games_and_no_periods_give_no_rows() -> None:
    assert replay([]) == []


def test_replay_accepts_a_one_pass_iterator() -> None:
    rows = replay(iter(month("2024-01", EXAMPLE_POOL)))
    assert rows[0].rating_after == 1922


def test_score_and_expected_score_are_exact() -> None:
    [row] = replay(
        month("2024-01", [(1400, WIN), (1600, DRAW), (1550, LOSS)]),
        ReplaySettings(start_rating=1500),
    )
    assert row.score == Fraction(3, 2)
    assert row.expected_score == Fraction(64 + 36 + 43, 100)
    assert row.change == 40 * (Fraction(3, 2) - Fraction(143, 100))


def test_differences_beyond_the_lookup_table_take_the_slow_path_correctly() -> None:
    games = month("2024-01", [(100, WIN), (9000, LOSS), (1500, DRAW)])
    for start in (1500, 2700):
        [row] = replay(games, ReplaySettings(start_rating=start))
        assert row.k is not None
        pairs = [(g.opponent_rating, Fraction(g.score_halves, 2)) for g in games]
        assert row.change == calculate(start, row.k, pairs).change


# -- performance rating (spec §7) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("opponents_sum", "n", "halves", "expected"),
    [(9507, 5, 6, 1973), (3000, 2, 2, 1500), (7500, 5, 10, 2300), (7500, 5, 0, 700)],
)
def test_performance_rating_is_average_plus_dp(
    opponents_sum: int, n: int, halves: int, expected: int
) -> None:
    assert performance_rating(opponents_sum, n, halves) == expected


def test_performance_rating_rounds_p_half_up() -> None:
    # 1 point from 8 games: p = .125 → .13 (half up) → dp −322, not .12 → −336.
    assert performance_rating(8 * 1600, 8, 2) == 1600 - 322


def test_performance_rating_needs_games() -> None:
    with pytest.raises(ValueError, match="at least one game"):
        performance_rating(0, 0, 0)


# -- validation -------------------------------------------------------------------------------


def test_games_out_of_period_order_are_rejected() -> None:
    games = month("2024-02", [(1500, WIN)]) + month("2024-01", [(1500, WIN)])
    with pytest.raises(ValueError, match="non-decreasing period order"):
        replay(games)


def test_a_month_that_comes_back_after_another_is_rejected() -> None:
    games = month("2024-01", [(1500, WIN)]) + month("2024-02", [(1500, WIN)])
    with pytest.raises(ValueError, match="non-decreasing period order"):
        replay([*games, CountedGame("2024-01", 1500, WIN)])


@pytest.mark.parametrize("period", ["2024-1", "2024-13", "24-01-01", "2024/01", "２０２４-01"])
def test_malformed_periods_are_rejected(period: str) -> None:
    with pytest.raises(ValueError, match="YYYY-MM"):
        replay([CountedGame(period, 1500, WIN)])
    with pytest.raises(ValueError, match="YYYY-MM"):
        replay([], periods=[period])


@pytest.mark.parametrize("score", [3, -1])
def test_score_halves_outside_0_to_2_are_rejected(score: int) -> None:
    with pytest.raises(ValueError, match="score_halves must be 0, 1 or 2"):
        replay([CountedGame("2024-01", 1500, score)])


@pytest.mark.parametrize("opponent", [0, -5, None, 1500.0])
def test_opponent_rating_must_be_a_positive_whole_number(opponent: object) -> None:
    with pytest.raises(ValueError, match="opponent_rating"):
        replay([CountedGame("2024-01", 1500, WIN), CountedGame("2024-01", opponent, WIN)])  # type: ignore[arg-type]


def test_start_rating_below_1400_is_rejected() -> None:
    with pytest.raises(ValueError, match="at least 1400"):
        ReplaySettings(start_rating=1399)


def test_unknown_rules_or_expected_method_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown rules"):
        ReplaySettings(rules="fide-1970")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="expected-score method"):
        ReplaySettings(expected="glicko")  # type: ignore[arg-type]


# -- properties -------------------------------------------------------------------------------

month_games = st.lists(
    st.tuples(st.integers(min_value=1000, max_value=2900), st.sampled_from([LOSS, DRAW, WIN])),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(
    start=st.one_of(st.none(), st.integers(min_value=1400, max_value=2800)),
    months=st.lists(month_games, min_size=1, max_size=14),
    rules=st.sampled_from(get_args(Rules)),
    method=st.sampled_from(get_args(ExpectedMethod)),
    birth_year=st.one_of(st.none(), st.integers(min_value=1990, max_value=2015)),
)
def test_every_rated_period_adds_its_change_rounded_once(
    start: int | None,
    months: list[list[tuple[int, int]]],
    rules: Rules,
    method: ExpectedMethod,
    birth_year: int | None,
) -> None:
    labels = [f"{2024 + i // 12}-{i % 12 + 1:02d}" for i in range(len(months))]
    by_label = {label: month(label, m) for label, m in zip(labels, months, strict=True)}
    games = [g for label in labels for g in by_label[label]]
    rows = replay(games, ReplaySettings(start, birth_year, rules, method), periods=labels)
    assert [r.period for r in rows] == labels
    in_force = start
    for row in rows:
        assert row.rating_before == in_force
        if row.rating_before is not None:
            assert row.k is not None
            assert row.change is not None
            assert row.k * row.games <= 700
            moved = row.rating_before + round_half_away(row.change)
            if row.rating_after is not None:
                assert row.rating_after == moved
            else:
                assert moved < 1400
            if row.games:
                pairs = [
                    (g.opponent_rating, Fraction(g.score_halves, 2)) for g in by_label[row.period]
                ]
                reference = calculate(row.rating_before, row.k, pairs, rules=rules, method=method)
                assert abs(reference.change - row.change) < Decimal("1E-20")
        elif row.rating_after is not None:
            assert 1400 <= row.rating_after <= 2200  # an initial rating
        in_force = row.rating_after


def test_replay_of_100_000_games_gives_one_period_a_month() -> None:
    """100,000 games, 200 a month over 500 months: one period each, in order, every game
    counted (its speed is measured by benchmarks/bench_replay.py, not here)."""
    games = [
        CountedGame(f"{2000 + i // 2400}-{i // 200 % 12 + 1:02d}", 1300 + i % 400, i % 3)
        for i in range(100_000)
    ]
    rows = replay(games, ReplaySettings(start_rating=1500))
    assert len(rows) == 500
    assert [r.period for r in rows[:13]] == [f"2000-{m:02d}" for m in range(1, 13)] + ["2001-01"]
    assert rows[-1].period == "2041-08" and all(r.games == 200 for r in rows)
