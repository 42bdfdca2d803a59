"""The exact weighted LAD line against a brute force over every line through two points."""

from __future__ import annotations

import itertools
import random

import pytest

from tracker.report.lad import FitError, Line, cost, lad_line, weighted_median


def _brute(points: list[tuple[float, float, float]]) -> float:
    best = float("inf")
    for (x1, y1, _), (x2, y2, _) in itertools.combinations(points, 2):
        if x1 != x2:
            b = (y2 - y1) / (x2 - x1)
            best = min(best, cost(points, y1 - b * x1, b))
    return best


@pytest.mark.parametrize("seed", range(25))
def test_lad_equals_the_brute_force_minimum(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 30)
    pts = [(float(rng.randint(1000, 2500)), rng.uniform(900, 2300),
            rng.choice([1.0, 0.5, 1 / 3, 2.0])) for _ in range(n)]
    if len({x for x, _, _ in pts}) < 2:
        pts.append((pts[0][0] + 1, 0.0, 1.0))
    line = lad_line(pts)
    assert line.cost == pytest.approx(_brute(pts), rel=1e-9, abs=1e-9)
    assert line.cost == pytest.approx(cost(pts, line.intercept, line.slope))


def test_an_exact_line_is_recovered_and_an_outlier_does_not_bend_it() -> None:
    pts = [(float(x), 300 + 0.75 * x, 1.0) for x in range(1200, 2300, 100)]
    line = lad_line(pts)
    assert (line.intercept, line.slope, line.cost) == pytest.approx((300, 0.75, 0))
    pts.append((1700.0, 3000.0, 1.0))  # one wild point: LAD keeps the line (OLS would not)
    assert (lad_line(pts).intercept, lad_line(pts).slope) == pytest.approx((300, 0.75))


def test_weights_count() -> None:
    # three points on y = x, two heavy ones on y = x + 100 at other x: the heavy ones win
    pts = [(0.0, 0.0, 1.0), (10.0, 10.0, 1.0), (20.0, 20.0, 1.0),
           (5.0, 105.0, 5.0), (15.0, 115.0, 5.0)]
    line = lad_line(pts)
    assert (line.intercept, line.slope) == pytest.approx((100, 1))
    assert Line(1, 2, 0)(3) == 7


def test_weighted_median_and_errors() -> None:
    assert weighted_median([(3, 1), (1, 1), (2, 1)]) == 2
    assert weighted_median([(1, 1), (2, 3)]) == 2
    assert weighted_median([(1, 1), (2, 1)]) == 1  # the lower median
    with pytest.raises(FitError):
        weighted_median([])
    with pytest.raises(FitError, match="two points at different x"):
        lad_line([(1.0, 2.0, 1.0), (1.0, 3.0, 1.0)])
