"""Tables 8.1.1 and 8.1.2 (spec §1, §7), in integer hundredths."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracker.fide.tables import (
    EXPECTED_SCORE_UPPER_BOUNDS,
    dp_from_p,
    expected_score_hundredths,
)


def test_table_8_1_2_has_50_rows_strictly_increasing_up_to_735() -> None:
    bounds = EXPECTED_SCORE_UPPER_BOUNDS
    assert len(bounds) == 50
    assert all(a < b for a, b in pairwise(bounds))
    assert bounds[0] == 3
    assert bounds[-1] == 735


@pytest.mark.parametrize(
    ("d", "hundredths"),
    [
        (0, 50),
        (3, 50),
        (4, 51),
        (10, 51),
        (198, 76),
        (206, 76),
        (207, 77),
        (200, 76),
        (392, 92),
        (400, 92),
        (411, 92),
        (620, 99),
        (735, 99),
        (736, 100),
        (800, 100),
        (100_000, 100),
    ],
)
def test_higher_rated_side_scores_h_from_the_row_holding_d(d: int, hundredths: int) -> None:
    assert expected_score_hundredths(d) == hundredths


def test_every_row_starts_one_hundredth_above_the_previous_row() -> None:
    for row, upper in enumerate(EXPECTED_SCORE_UPPER_BOUNDS):
        assert expected_score_hundredths(upper) == 50 + row
        assert expected_score_hundredths(upper + 1) == 51 + row


@pytest.mark.parametrize(("d", "hundredths"), [(-200, 24), (-400, 8), (-500, 4), (-800, 0)])
def test_lower_rated_side_scores_one_minus_h(d: int, hundredths: int) -> None:
    assert expected_score_hundredths(d) == hundredths


@given(st.integers(min_value=-5000, max_value=5000))
def test_both_sides_of_one_difference_sum_to_one(d: int) -> None:
    assert expected_score_hundredths(d) + expected_score_hundredths(-d) == 100


@given(st.integers(min_value=0, max_value=2000), st.integers(min_value=0, max_value=2000))
def test_lower_side_expectation_never_rises_as_the_gap_grows(a: int, b: int) -> None:
    small, large = sorted((a, b))
    assert expected_score_hundredths(-large) <= expected_score_hundredths(-small)


@pytest.mark.parametrize(
    ("p", "dp"),
    [
        (50, 0),
        (51, 7),
        (57, 50),
        (60, 72),
        (64, 102),
        (72, 166),
        (76, 202),
        (83, 273),
        (86, 309),
        (92, 401),
        (94, 444),
        (99, 677),
        (100, 800),
    ],
)
def test_dp_from_p_reads_table_8_1_1(p: int, dp: int) -> None:
    assert dp_from_p(p) == dp


@pytest.mark.parametrize("p", range(0, 101))
def test_dp_is_antisymmetric_around_one_half(p: int) -> None:
    assert dp_from_p(100 - p) == -dp_from_p(p)


def test_dp_rises_strictly_with_p() -> None:
    values = [dp_from_p(p) for p in range(0, 101)]
    assert all(a < b for a, b in pairwise(values))
    assert values[0] == -800


@pytest.mark.parametrize("p", [-1, 101])
def test_dp_rejects_p_outside_0_to_100_hundredths(p: int) -> None:
    with pytest.raises(ValueError, match=r"0\.\.100"):
        dp_from_p(p)
