"""The FIDE rating rules as small pure functions: expected score, the 400-point rule, K, rounding.

Everything here is exact: integers, :class:`fractions.Fraction` (the table) or
:class:`decimal.Decimal` (the logistic formula, in :data:`DECIMAL_CONTEXT`). No binary floats,
and never Python's :func:`round`, which rounds half to even. Section numbers (§) are those of
the FIDE Rating Regulations; see ``docs/rules.md``.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal, localcontext
from fractions import Fraction
from typing import Final, Literal, TypeGuard, get_args

from tracker.fide.tables import expected_score_hundredths

#: Rules version. ``fide-2025-10`` (default): the 400-point rule exempts players rated 2650 or
#: more (amendment of 1 October 2025). ``fide-2024-03``: the cap applies to everyone.
#: [choice] One version applies to a whole replay; it is not inferred from game dates.
Rules = Literal["fide-2025-10", "fide-2024-03"]
#: The FIDE chapter a replay follows (``docs/rules.md`` §10): ``standard`` (the Rating
#: Regulations for standard chess) or ``rapid-blitz`` (the Rapid and Blitz Rating Regulations:
#: no 2650 exemption from the 400-point rule; from 1 December 2024, the 600-point rule).
Chapter = Literal["standard", "rapid-blitz"]
#: ``table``: FIDE's table 8.1.2 (default). ``formula``: ``1 / (1 + 10^(-D/400))``, what most
#: online calculators use.
ExpectedMethod = Literal["table", "formula"]

RULES: Final[tuple[str, ...]] = get_args(Rules)
EXPECTED_METHODS: Final[tuple[str, ...]] = get_args(ExpectedMethod)
CHAPTERS: Final[tuple[str, ...]] = get_args(Chapter)
DEFAULT_CHAPTER: Final[Chapter] = "standard"
#: The rules version used when none is chosen: the one place this default is written.
DEFAULT_RULES: Final[Rules] = "fide-2025-10"
#: The expected-score method used when none is chosen.
DEFAULT_EXPECTED: Final[ExpectedMethod] = "table"

#: §8.3.1: a difference of more than 400 rating points counts as 400.
DIFFERENCE_CAP: Final = 400
#: §8.3.1 as amended 1 October 2025: a player rated this or more uses the real difference.
CAP_EXEMPT_FROM: Final = 2650

#: §10, rapid & blitz chapter, in force from 1 December 2024 (this period on, by game date):
#: a game between players whose ratings differ by at least this is not rated ...
RULE_600_DIFFERENCE: Final = 600
#: ... if at least one of them is rated above this.
RULE_600_ABOVE: Final = 2600
RULE_600_FROM: Final = "2024-12"
#: §10: the Lichess perfs FIDE's rapid & blitz chapter takes by default (FIDE has no bullet
#: list; bullet and ultraBullet go with blitz). Every other perf: the standard chapter.
RAPID_BLITZ_PERFS: Final = frozenset({"ultraBullet", "bullet", "blitz", "rapid"})

#: §8.3.3 development coefficients.
K_AFTER_2400: Final = 10
K_NEWCOMER: Final = 40
K_JUNIOR: Final = 40
K_STANDARD: Final = 20
#: Published at this or more once: K 10 for good.
K10_THRESHOLD: Final = 2400
#: A junior keeps K 40 until published at this or more.
JUNIOR_K40_LIMIT: Final = 2300
#: Junior: calendar year of the period minus birth year at most this.
JUNIOR_MAX_AGE: Final = 18
#: K 40 until this many games have been rated (initial-rating games included).
NEWCOMER_GAMES: Final = 30
#: §8.3.3 "700 rule": K × games in the period may not exceed this.
MAX_K_TIMES_GAMES: Final = 700

#: Fixed context for the formula path, so results do not depend on the caller's global context.
#: 28 significant digits leaves ~20 after the point for any realistic sum of a month's games.
DECIMAL_CONTEXT: Final = Context(prec=28, rounding=ROUND_HALF_EVEN)

_ONE: Final = Decimal(1)
_TEN: Final = Decimal(10)
_FOUR_HUNDRED: Final = Decimal(400)


def is_rules(value: object) -> TypeGuard[Rules]:
    """Whether ``value`` names a known rules version (narrows a ``str`` to :data:`Rules`)."""
    return value in RULES


def is_chapter(value: object) -> TypeGuard[Chapter]:
    """Whether ``value`` is ``"standard"`` or ``"rapid-blitz"`` (narrows to :data:`Chapter`)."""
    return value in CHAPTERS


def chapter_for_perf(perf: str) -> Chapter:
    """The chapter a Lichess perf replays under by default (``docs/rules.md`` §10): classical
    and correspondence → ``standard``; rapid, blitz, bullet (and ultraBullet) →
    ``rapid-blitz``.

    >>> chapter_for_perf("blitz"), chapter_for_perf("classical")
    ('rapid-blitz', 'standard')
    """
    return "rapid-blitz" if perf in RAPID_BLITZ_PERFS else "standard"


def rated_in_chapter(
    own: int, opponent: int, *, chapter: Chapter = DEFAULT_CHAPTER, period: str | None = None
) -> bool:
    """Whether the chapter rates a game between ``own`` and ``opponent`` (rating points).

    Only the rapid & blitz chapter leaves games out: from 1 December 2024 (``period``
    ``"YYYY-MM"`` of the game, ``None`` = today), a game whose ratings differ by 600 or more is
    not rated if either player is rated above 2600 (neither side's rating changes).

    >>> rated_in_chapter(1800, 2601, chapter="rapid-blitz"), rated_in_chapter(2600, 1900,
    ...                                                                     chapter="rapid-blitz")
    (False, True)
    """
    if chapter != "rapid-blitz" or (period is not None and period < RULE_600_FROM):
        return True
    return not (
        abs(own - opponent) >= RULE_600_DIFFERENCE and max(own, opponent) > RULE_600_ABOVE
    )


def is_method(value: object) -> TypeGuard[ExpectedMethod]:
    """Whether ``value`` is ``"table"`` or ``"formula"`` (narrows to :data:`ExpectedMethod`)."""
    return value in EXPECTED_METHODS


def check_rules(rules: str) -> None:
    """Raise ValueError unless ``rules`` names a known rules version."""
    if not is_rules(rules):
        raise ValueError(f"unknown rules {rules!r}: use one of {', '.join(RULES)}")


def check_method(method: str) -> None:
    """Raise ValueError unless ``method`` is ``"table"`` or ``"formula"``."""
    if not is_method(method):
        raise ValueError(
            f"unknown expected-score method {method!r}: use one of {', '.join(EXPECTED_METHODS)}"
        )


def cap_applies(
    own: int,
    *,
    rules: Rules = DEFAULT_RULES,
    cap_400: bool = True,
    chapter: Chapter = DEFAULT_CHAPTER,
) -> bool:
    """Whether the 400-point rule (§8.3.1) binds a player rated ``own`` (rating points).

    Under ``fide-2025-10`` a player rated 2650 or more is exempt; under ``fide-2024-03`` nobody
    is, and the rapid & blitz chapter has no exemption either (§10). ``cap_400=False``
    switches the rule off (a calculator setting, not FIDE's).
    """
    check_rules(rules)
    return cap_400 and (
        chapter == "rapid-blitz" or rules == "fide-2024-03" or own < CAP_EXEMPT_FROM
    )


def capped_difference(
    own: int,
    opponent: int,
    *,
    rules: Rules = DEFAULT_RULES,
    cap_400: bool = True,
    chapter: Chapter = DEFAULT_CHAPTER,
) -> int:
    """``D = own - opponent`` in rating points, after the 400-point rule (§8.3.1).

    The 2650 exemption is checked on ``own``, the player whose change is computed, so the two
    sides of one game may use different ``D``.

    >>> capped_difference(1500, 1000), capped_difference(2700, 2200)
    (400, 500)
    >>> capped_difference(2700, 2200, rules="fide-2024-03")
    400
    """
    d = own - opponent
    capped = cap_applies(own, rules=rules, cap_400=cap_400, chapter=chapter)
    return limit_difference(d) if capped else d


def limit_difference(d: int) -> int:
    """The 400-point rule itself (§8.3.1): ``d`` clamped to −400…+400 rating points.

    Whether the rule binds a player is :func:`cap_applies`; :func:`capped_difference` puts the
    two together and is what callers normally want.

    >>> limit_difference(-735), limit_difference(120)
    (-400, 120)
    """
    return max(-DIFFERENCE_CAP, min(DIFFERENCE_CAP, d))


def formula_expected(d: int) -> Decimal:
    """The logistic expected score ``1 / (1 + 10^(-d/400))`` as a Decimal (28 digits).

    ``d`` is the rating difference in rating points, already capped where the rule applies.
    Not FIDE's method (which is the table); offered because online calculators use it.
    """
    with localcontext(DECIMAL_CONTEXT):
        return _ONE / (_ONE + _TEN ** (Decimal(-d) / _FOUR_HUNDRED))


def expected_score(
    own: int,
    opponent: int,
    *,
    rules: Rules = DEFAULT_RULES,
    method: ExpectedMethod = DEFAULT_EXPECTED,
    cap_400: bool = True,
    chapter: Chapter = DEFAULT_CHAPTER,
) -> Fraction | Decimal:
    """Expected score ``PD`` of the player rated ``own`` against ``opponent`` (§8.1.2).

    ``table`` (FIDE) returns an exact Fraction in hundredths; ``formula`` returns a Decimal.
    ``D`` goes through the 400-point rule first (see :func:`capped_difference`).

    >>> expected_score(1500, 1700)
    Fraction(6, 25)
    >>> str(expected_score(1500, 1000, method="formula"))[:6]
    '0.9090'
    """
    check_method(method)
    d = capped_difference(own, opponent, rules=rules, cap_400=cap_400, chapter=chapter)
    if method == "table":
        return Fraction(expected_score_hundredths(d), 100)
    return formula_expected(d)


def k_with_reason(
    *,
    ever_published_2400: bool,
    games_before: int,
    period_year: int,
    birth_year: int | None,
    ever_published_2300: bool,
) -> tuple[int, str]:
    """:func:`development_coefficient` and the reason for it, a few words for humans.

    >>> k_with_reason(ever_published_2400=False, games_before=3, period_year=2025,
    ...               birth_year=None, ever_published_2300=False)
    (40, 'fewer than 30 games')
    """
    if ever_published_2400:
        return K_AFTER_2400, f"published at {K10_THRESHOLD} or more"
    if (
        birth_year is not None
        and period_year - birth_year <= JUNIOR_MAX_AGE
        and not ever_published_2300
    ):
        return K_JUNIOR, "junior"
    if games_before < NEWCOMER_GAMES:
        return K_NEWCOMER, f"fewer than {NEWCOMER_GAMES} games"
    return K_STANDARD, ""


def development_coefficient(
    *,
    ever_published_2400: bool,
    games_before: int,
    period_year: int,
    birth_year: int | None,
    ever_published_2300: bool,
) -> int:
    """K for a period (§8.3.3), before the 700 rule, from the state at the period's start.

    First match wins (rules.md §3): published at 2400 or more once → 10, for good; a junior
    (``period_year - birth_year <= 18``, only with a birth year) never published at 2300 or
    more → 40; fewer than 30 games rated before this period (initial-rating games included)
    → 40; otherwise 20.

    >>> development_coefficient(ever_published_2400=False, games_before=30, period_year=2025,
    ...                         birth_year=None, ever_published_2300=False)
    20
    """
    k, _ = k_with_reason(
        ever_published_2400=ever_published_2400,
        games_before=games_before,
        period_year=period_year,
        birth_year=birth_year,
        ever_published_2300=ever_published_2300,
    )
    return k


def apply_700_rule(k: int, n: int) -> int:
    """The 700 rule (§8.3.3): the largest K' <= ``k`` with ``K' × n <= 700``, for ``n`` games.

    ``n <= 0`` leaves ``k`` unchanged. Note that more than 700 games give K 0.

    >>> [apply_700_rule(k, n) for k, n in [(40, 20), (20, 40), (40, 17), (10, 71)]]
    [35, 17, 40, 9]
    """
    if n <= 0:
        return k
    return min(k, MAX_K_TIMES_GAMES // n)


def _as_fraction(x: Fraction | Decimal | int) -> Fraction:
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int | Decimal):
        return Fraction(x)  # exact for both
    raise TypeError(f"expected Fraction, Decimal or int, got {type(x).__name__}")


def round_half_away(x: Fraction | Decimal | int) -> int:
    """Round to the nearest whole number, .5 away from zero (rules.md §4): +2.5 → 3, −2.5 → −3.

    Used once per period on the rating change ``K × ΣΔR``. Python's ``round()`` rounds half to
    even (``round(2.5) == 2``), which FIDE does not.

    >>> [round_half_away(x) for x in (Fraction(5, 2), Fraction(-5, 2), Decimal("-1.49"))]
    [3, -3, -1]
    """
    if isinstance(x, Decimal):
        return int(x.to_integral_value(rounding=ROUND_HALF_UP))  # Decimal HALF_UP: away from 0
    f = _as_fraction(x)
    q, r = divmod(abs(f.numerator), f.denominator)
    if 2 * r >= f.denominator:
        q += 1
    return q if f.numerator >= 0 else -q


def round_half_up(x: Fraction | Decimal | int) -> int:
    """Round to the nearest whole number, .5 upwards (toward +∞): 2.5 → 3, −2.5 → −2.

    The rounding FIDE states for the initial rating ``Ru`` (§8.2) and the performance rating
    (rules.md §6, §7). Equal to :func:`round_half_away` for the positive values they take.
    """
    f = _as_fraction(x)
    return (2 * f.numerator + f.denominator) // (2 * f.denominator)
