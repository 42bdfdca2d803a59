"""A least-absolute-deviations (LAD, median regression) line, exact, with weights.

The fit the published Lichess → FIDE models used (Lebowitz: "median regression"): the line
``y = a + b·x`` that minimises ``Σ wᵢ·|yᵢ − a − b·xᵢ|``. It is robust to a few players whose
online and over-the-board strengths differ a lot, where least squares would bend to them.

Exact, not iterative: a LAD line can always be chosen through a data point ``p``; through a
fixed ``p`` the best slope is the weighted median of the slopes ``(yᵢ − y_p)/(xᵢ − x_p)``
with weights ``wᵢ·|xᵢ − x_p|`` (the objective becomes ``Σ wᵢ|xᵢ − x_p|·|sᵢ − b|``). So the
minimum over the points of that best line is the minimum over all lines: O(n² log n), a few
milliseconds for a club's few hundred member-months. Pure: no I/O; floats (this is a
statistical fit, not FIDE's arithmetic).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class FitError(ValueError):
    """Too few points, or every point at the same x (no slope can be fitted)."""


@dataclass(frozen=True, slots=True)
class Line:
    """``y = intercept + slope·x``, and the weighted sum of absolute residuals it leaves."""

    intercept: float
    slope: float
    cost: float

    def __call__(self, x: float) -> float:
        return self.intercept + self.slope * x


def cost(points: Sequence[tuple[float, float, float]], intercept: float, slope: float
         ) -> float:
    """``Σ w·|y − intercept − slope·x|`` over ``(x, y, w)`` points."""
    return sum(w * abs(y - intercept - slope * x) for x, y, w in points)


def weighted_median(values: Sequence[tuple[float, float]]) -> float:
    """The lower weighted median of ``(value, weight > 0)`` pairs: the smallest value with at
    least half the total weight at or below it. FitError when empty."""
    if not values:
        raise FitError("no values")
    ordered = sorted(values)
    half = sum(w for _, w in ordered) / 2
    run = 0.0
    for v, w in ordered:
        run += w
        if run >= half:
            return v
    return ordered[-1][0]  # pragma: no cover - rounding: the loop reaches the total


def lad_line(points: Sequence[tuple[float, float, float]]) -> Line:
    """The weighted LAD line through ``(x, y, weight)`` points (weights > 0); see the module
    docstring. Ties are broken towards the first point in the order given. Raises FitError
    for fewer than 2 points or a single x."""
    if len(points) < 2 or len({x for x, _, _ in points}) < 2:
        raise FitError("a line needs at least two points at different x")
    best: Line | None = None
    for xp, yp, _ in points:
        slopes = [((y - yp) / (x - xp), w * abs(x - xp)) for x, y, w in points if x != xp]
        b = weighted_median(slopes)
        a = yp - b * xp
        line = Line(a, b, cost(points, a, b))
        if best is None or line.cost < best.cost - 1e-9 * max(1.0, best.cost):
            best = line
    assert best is not None
    return best
