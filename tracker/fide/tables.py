"""The two tables of the FIDE Rating Regulations, as integers in hundredths.

- Table 8.1.2 turns a rating difference ``D`` (rating points, after the 400-point rule) into
  the expected score of each side. :data:`EXPECTED_SCORE_UPPER_BOUNDS` lists the rows' upper
  bounds; row *i* gives the higher-rated side ``H = 0.50 + 0.01·i``; above 735 it is 1.00.
- Table 8.1.1 turns a fractional score ``p`` into a rating difference ``dp`` (rating points),
  used for the initial rating (§8.2) and the performance rating.

Both work in whole hundredths (``92`` stands for 0.92) so that the replay's inner loop adds
integers; :mod:`tracker.fide.rules` turns them into :class:`fractions.Fraction` at the edge.
See ``docs/rules.md`` §1 and §7.
"""

from __future__ import annotations

from typing import Final

#: Table 8.1.2: upper bound of ``|D|`` (rating points) of each row, row *i* scoring
#: ``50 + i`` hundredths for the higher-rated side.
EXPECTED_SCORE_UPPER_BOUNDS: Final[tuple[int, ...]] = (
    3, 10, 17, 25, 32, 39, 46, 53, 61, 68,
    76, 83, 91, 98, 106, 113, 121, 129, 137, 145,
    153, 162, 170, 179, 188, 197, 206, 215, 225, 235,
    245, 256, 267, 278, 290, 302, 315, 328, 344, 357,
    374, 391, 411, 432, 456, 484, 517, 559, 619, 735,
)  # fmt: skip

#: The largest ``|D|`` the table distinguishes; beyond it the higher-rated side scores 1.00.
TABLE_MAX_DIFFERENCE: Final = EXPECTED_SCORE_UPPER_BOUNDS[-1]


def _higher_side_by_difference() -> tuple[int, ...]:
    # One entry per |D| in 0..735: the replay indexes this instead of searching the rows.
    out: list[int] = []
    for row, upper in enumerate(EXPECTED_SCORE_UPPER_BOUNDS):
        out.extend([50 + row] * (upper + 1 - len(out)))
    return tuple(out)


#: ``HIGHER_SIDE_HUNDREDTHS[d]``: ``H`` in hundredths for ``|D| = d``, ``d`` in 0..735.
HIGHER_SIDE_HUNDREDTHS: Final[tuple[int, ...]] = _higher_side_by_difference()

#: Table 8.1.1: ``dp`` (rating points) for ``p`` = 0.50, 0.51, …, 1.00 (index = hundredths − 50).
DP_BY_P_FROM_HALF: Final[tuple[int, ...]] = (
    0, 7, 14, 21, 29, 36, 43, 50, 57, 65,
    72, 80, 87, 95, 102, 110, 117, 125, 133, 141,
    149, 158, 166, 175, 184, 193, 202, 211, 220, 230,
    240, 251, 262, 273, 284, 296, 309, 322, 336, 351,
    366, 383, 401, 422, 444, 470, 501, 538, 589, 677,
    800,
)  # fmt: skip


def expected_score_hundredths(d: int) -> int:
    """Table 8.1.2: expected score, in hundredths (0..100), of the side whose ``D`` is ``d``.

    ``d`` is own rating minus the opponent's, in rating points, already capped by the 400-point
    rule where it applies. ``d >= 0`` gives ``H``, ``d < 0`` gives ``100 - H(|d|)``.

    >>> [expected_score_hundredths(d) for d in (400, -200, 800)]
    [92, 24, 100]
    """
    if d >= 0:
        return HIGHER_SIDE_HUNDREDTHS[d] if d <= TABLE_MAX_DIFFERENCE else 100
    return 100 - (HIGHER_SIDE_HUNDREDTHS[-d] if -d <= TABLE_MAX_DIFFERENCE else 100)


def dp_from_p(p_hundredths: int) -> int:
    """Table 8.1.1: rating difference ``dp`` (rating points) for a score fraction ``p``.

    ``p_hundredths`` is ``p`` in whole hundredths, 0..100 (round it first: FIDE rounds ``p`` to
    the hundredth, half up). Below 0.50 the table is mirrored: ``dp(1 - p) = -dp(p)``.

    >>> dp_from_p(57), dp_from_p(43), dp_from_p(100)
    (50, -50, 800)
    """
    if not 0 <= p_hundredths <= 100:
        raise ValueError(f"p must be 0..100 hundredths, got {p_hundredths}")
    if p_hundredths >= 50:
        return DP_BY_P_FROM_HALF[p_hundredths - 50]
    return -DP_BY_P_FROM_HALF[50 - p_hundredths]
