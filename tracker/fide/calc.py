"""The Elo calculator: one player's rating change for a list of games, FIDE's way.

The same arithmetic as one rated period of :func:`tracker.fide.replay.replay`, but with K given
by the user instead of derived from a history, and the 400-point rule switchable. See
``docs/rules.md`` §2-§4.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Final

from tracker.fide.rules import (
    DECIMAL_CONTEXT,
    DEFAULT_CHAPTER,
    DEFAULT_RULES,
    Chapter,
    ExpectedMethod,
    Rules,
    apply_700_rule,
    cap_applies,
    check_method,
    expected_score,
    rated_in_chapter,
    round_half_away,
)

#: The scores a game can have, in points.
SCORES: Final = (Fraction(0), Fraction(1, 2), Fraction(1))

_HALF: Final = Fraction(1, 2)
#: Spellings :func:`parse_score` accepts for a draw.
_DRAW_SPELLINGS: Final = frozenset({"0.5", ".5", "0,5", "1/2", "=", "½"})


@dataclass(frozen=True, slots=True)
class CalcGame:
    """One game of a calculation: opponent's rating (rating points), score (points), expected
    score ``PD`` and the change ``K × (score − PD)`` in rating points, unrounded.

    ``rated`` is False for a game the chapter does not rate (the rapid & blitz 600-point rule,
    ``docs/rules.md`` §10): its ``expected`` is ``None`` and its change 0.
    """

    opponent: int
    score: Fraction
    expected: Fraction | Decimal | None
    change: Fraction | Decimal
    rated: bool = True


@dataclass(frozen=True, slots=True)
class CalcResult:
    """The outcome of :func:`calculate`.

    - ``k``: K used, after the 700 rule; ``k_requested``: K as given; ``rule_700_applied``:
      whether the 700 rule lowered it.
    - ``rule_400_applied``: whether the 400-point rule was in force for this player (False at
      2650 or more under ``fide-2025-10``, or with ``cap_400=False``), whether or not a game
      actually exceeded 400 points.
    - ``games``: per game detail; ``change``: the total, unrounded (Fraction with the table,
      Decimal with the formula); ``new_rating``: rating + change rounded once, half away from
      zero.
    - ``chapter``: ``standard`` or ``rapid-blitz`` (``docs/rules.md`` §10).
    """

    k: int
    k_requested: int
    rule_700_applied: bool
    rule_400_applied: bool
    games: tuple[CalcGame, ...]
    change: Fraction | Decimal
    new_rating: int
    chapter: Chapter = DEFAULT_CHAPTER


def _score(value: object) -> Fraction:
    if not isinstance(value, int | float | Fraction | Decimal | str):  # 1, 0.5, "1/2", …
        raise ValueError(f"score must be 0, 1/2 or 1, got {value!r}")
    try:
        score = Fraction(value)
    except (TypeError, ValueError, ZeroDivisionError):
        raise ValueError(f"score must be 0, 1/2 or 1, got {value!r}") from None
    if score not in SCORES:
        raise ValueError(f"score must be 0, 1/2 or 1, got {value!r}")
    return score


def calculate(
    rating: int,
    k: int,
    games: Sequence[tuple[int, Fraction]],
    *,
    cap_400: bool = True,
    rules: Rules = DEFAULT_RULES,
    method: ExpectedMethod = "table",
    chapter: Chapter = DEFAULT_CHAPTER,
) -> CalcResult:
    """Rating change of a player rated ``rating`` with development coefficient ``k``.

    ``games`` holds ``(opponent_rating, score)`` pairs: rating points and points (0, 1/2, 1).
    Per game ``PD`` comes from table 8.1.2 (or the formula), ``D`` capped by the 400-point rule
    unless exempt or switched off; K goes through the 700 rule for ``len(games)`` games; the
    total change is rounded once, half away from zero (rules.md §4). Under the ``rapid-blitz``
    chapter (rules.md §10) the 400-point rule binds everyone and a game the 600-point rule
    leaves out changes nothing and does not count for the 700 rule.

    >>> r = calculate(1500, 20, [(1700, Fraction(1))])
    >>> r.change, r.new_rating
    (Fraction(76, 5), 1515)

    Raises ValueError for ``k <= 0``, no games, or a score other than 0, 1/2 and 1.
    """
    check_method(method)
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise ValueError(f"K must be a positive whole number, got {k!r}")
    if isinstance(rating, bool) or not isinstance(rating, int):
        raise ValueError(f"rating must be a whole number of rating points, got {rating!r}")
    if not games:
        raise ValueError("no games: give at least one (opponent rating, score) pair")
    for opponent, _ in games:
        if isinstance(opponent, bool) or not isinstance(opponent, int):
            raise ValueError(f"opponent rating must be a whole number, got {opponent!r}")
    rated = [rated_in_chapter(rating, o, chapter=chapter) for o, _ in games]
    k_used = apply_700_rule(k, sum(rated))
    details: list[CalcGame] = []
    table_total = Fraction(0)
    formula_total = Decimal(0)
    for (opponent, raw_score), is_rated in zip(games, rated, strict=True):
        score = _score(raw_score)
        if not is_rated:
            details.append(CalcGame(opponent, score, None, Fraction(0), rated=False))
            continue
        pd = expected_score(rating, opponent, rules=rules, method=method, cap_400=cap_400,
                            chapter=chapter)
        change: Fraction | Decimal
        if isinstance(pd, Decimal):
            with localcontext(DECIMAL_CONTEXT):
                # score is 0, 1/2 or 1: exact as numerator / denominator.
                change = k_used * (Decimal(score.numerator) / score.denominator - pd)
                formula_total += change
        else:
            change = k_used * (score - pd)
            table_total += change
        details.append(CalcGame(opponent, score, pd, change))
    total: Fraction | Decimal = table_total if method == "table" else formula_total
    return CalcResult(
        k=k_used,
        k_requested=k,
        rule_700_applied=k_used != k,
        rule_400_applied=cap_applies(rating, rules=rules, cap_400=cap_400, chapter=chapter),
        games=tuple(details),
        change=total,
        new_rating=rating + round_half_away(total),
        chapter=chapter,
    )


def parse_score(text: str) -> Fraction:
    """A score typed by a user → points: ``"1"``, ``"0"``, ``"0.5"``, ``"1/2"``, ``"="``, ``"½"``.

    Surrounding spaces are ignored; any decimal spelling (``"1.0"``, ``"0.50"``, ``".5"``,
    ``"0,5"``) is accepted too. Raises ValueError for anything else.

    >>> parse_score("½"), parse_score(" 1 ")
    (Fraction(1, 2), Fraction(1, 1))
    """
    t = text.strip()
    if t in _DRAW_SPELLINGS:
        return _HALF
    try:  # any decimal spelling of 1, 0 or ½: "1.00", "0.50", "0,5"
        value = Fraction(t.replace(",", "."))
    except (ValueError, ZeroDivisionError):
        value = None
    if value is not None and value in (0, _HALF, 1):
        return value
    raise ValueError(f"score must be 1, 0 or a draw (0.5, 1/2, =, ½), got {text!r}")
