"""No database: ``tracker calc`` (the FIDE Elo calculator) and ``tracker convert`` (a
Lichess rating through the scale models)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, NotRequired, TypedDict

from tracker.core.errors import ArgumentError

if TYPE_CHECKING:
    from tracker.fide import CalcResult
    from tracker.fide.scale import Conversion, ScaleModel


def scale_models(perf: str | None = None) -> list[ScaleModel]:
    """The Lichess → FIDE scale models (every one, or those covering ``perf``), each with its
    key, name, source, year, data, perfs covered, fitted range, era and caveat."""
    from tracker.fide.scale import MODELS as SCALE_MODELS
    from tracker.fide.scale import models_for

    return list(SCALE_MODELS.values()) if perf is None else list(models_for(perf))


def convert(lichess: int, perf: str, scale: str = "all") -> dict[str, Conversion]:
    """``tracker convert``: a Lichess rating in ``perf`` through one model (``scale`` a model
    key) or every model covering the perf (``"all"``): model key → :class:`Conversion`
    (``output``: the model's own number, rounded half away from zero; ``rating``: the FIDE
    rating on today's scale, ``None`` = unrated). ``lichess`` must lie in
    :data:`MIN_CALC_RATING`–:data:`MAX_CALC_RATING` (the calculator's range). Raises PerfError,
    ScaleError, ArgumentError (exit 2), one line each."""
    from tracker.core.perfs import perf_key
    from tracker.core.records import SPEEDS
    from tracker.fide.scale import MODELS, models_for
    from tracker.fide.scale import convert as convert_rating
    from tracker.report.replay import ScaleError
    from tracker.report.replay import scale_models as scale_models_for
    from tracker.report.settings import SCALES

    key = perf_key(perf)
    scale = scale.strip().lower()
    if scale == "lichess":
        raise ScaleError("convert needs a model: use a model key or all")
    if scale not in SCALES:
        models = ", ".join(s for s in SCALES if s != "lichess")
        raise ScaleError(f"unknown scale {scale!r}: use {models}")
    if not models_for(key):
        covered = [p for p in SPEEDS if any(m.covers(p) for m in MODELS.values())]
        raise ScaleError(f"no scale model covers {key}: the models cover {', '.join(covered)}")
    _check_rating(lichess, "a Lichess rating")
    return {m.key: convert_rating(m, key, lichess) for m in scale_models_for(scale, key)}


def conversion_note(scale: str, perf: str, lichess: int) -> str | None:
    """Where a conversion is not a plain estimate, in words (``"below the model's range
    (1665)"``, ``"beyond the model's fitted range (FIDE 1000–2900)"``), else ``None``:
    ``scale`` a model key covering ``perf``."""
    from tracker.core.perfs import perf_key
    from tracker.fide.scale import model, range_note

    return range_note(model(scale.strip().lower()), perf_key(perf), lichess)


#: Ratings the calculator accepts (rating points): wide, but no negative or absurd numbers.
MIN_CALC_RATING = 100


MAX_CALC_RATING = 4000


def _check_rating(rating: int, who: str) -> None:
    """Raise ArgumentError (``"{who} {rating} is out of range (100–4000)"``) outside
    :data:`MIN_CALC_RATING`–:data:`MAX_CALC_RATING`."""
    if not MIN_CALC_RATING <= int(rating) <= MAX_CALC_RATING:
        raise ArgumentError(f"{who} {rating} is out of range "
                            f"({MIN_CALC_RATING}–{MAX_CALC_RATING})")


def default_k(rating: int) -> tuple[int, str]:
    """The K FIDE's rules give an established adult (30 games or more, not a junior) rated
    ``rating``: 20, or 10 at 2400 or more (rules.md §3); with the words that say so."""
    from tracker.fide.rules import K10_THRESHOLD, development_coefficient

    k = development_coefficient(ever_published_2400=rating >= K10_THRESHOLD, games_before=30,
                                period_year=date.today().year, birth_year=None,
                                ever_published_2300=rating >= K10_THRESHOLD)
    return k, (f"K {k}: FIDE's K for an established adult rated {rating} (30 games or more, "
               "not a junior); give --k for another")


def calc(
    rating: int,
    k: int | None,
    games: Sequence[tuple[int, Fraction | str | int]],
    *,
    cap_400: bool = True,
    rules: str | None = None,
    expected: str | None = None,
    chapter: str | None = None,
) -> CalcResult:
    """``tracker calc``: the FIDE Elo calculator (no database).

    ``games``: (opponent rating, score) pairs; a score is 1, 0, ½ as a Fraction or text
    (``"1"``, ``"0.5"``, ``"1/2"``, ``"="``). K is reduced by the 700 rule; the change is
    unrounded and ``new_rating`` rounded once, half away from zero. Ratings must be
    100–4000 rating points. ``k``: ``None`` for :func:`default_k`. ``chapter``:
    ``"standard"`` or ``"rapid-blitz"`` (FIDE's rapid & blitz rules: no 2650 exemption, the
    600-point rule in force). ``None`` for ``rules``,
    ``expected`` or ``chapter``: the default. Raises ArgumentError (a ValueError) with a
    one-line message.
    """
    from tracker.fide import (
        CHAPTERS,
        DEFAULT_CHAPTER,
        DEFAULT_EXPECTED,
        DEFAULT_RULES,
        EXPECTED_METHODS,
        RULES,
        calculate,
        parse_score,
    )
    from tracker.fide.rules import is_chapter, is_method, is_rules

    if k is None:
        _check_rating(rating, "your rating")
        k = default_k(rating)[0]
    rules = DEFAULT_RULES if rules is None else rules
    expected = DEFAULT_EXPECTED if expected is None else expected
    chapter = DEFAULT_CHAPTER if chapter is None else chapter
    for r, who in ((rating, "your rating"), *((o, "an opponent's rating") for o, _ in games)):
        _check_rating(r, who)
    if not is_rules(rules):
        raise ArgumentError(f"unknown rules {rules!r}: use one of {', '.join(RULES)}")
    if not is_chapter(chapter):
        raise ArgumentError(f"unknown chapter {chapter!r}: use one of {', '.join(CHAPTERS)}")
    if not is_method(expected):
        raise ArgumentError(f"unknown expected-score method {expected!r}: use one of "
                            f"{', '.join(EXPECTED_METHODS)}")
    try:
        parsed = [(int(o), s if isinstance(s, Fraction) else parse_score(str(s)))
                  for o, s in games]
        return calculate(rating, k, parsed, cap_400=cap_400, rules=rules, method=expected,
                         chapter=chapter)
    except ValueError as exc:
        raise ArgumentError(str(exc)) from None


class CalcGameJson(TypedDict):
    """One game of :class:`CalcJson`: opponent (rating points), score (points), expected score
    PD and the change in rating points, unrounded (Decimals, for exact JSON). ``rated``: only
    under the rapid & blitz chapter (False: left out by the 600-point rule)."""

    opponent: int
    score: int | Decimal
    expected: Decimal | None
    change: Decimal | None
    rated: NotRequired[bool]


class CalcJson(TypedDict):
    """The ``tracker calc --json`` object (``chapter`` only under the rapid & blitz chapter)."""

    k: int
    chapter: NotRequired[str]
    games: list[CalcGameJson]
    change: Decimal | None
    new_rating: int


def calc_json(result: CalcResult) -> CalcJson:
    """The ``tracker calc --json`` object: K after the 700 rule, per game expected and change,
    the unrounded total change and the new rating rounded once. Under the rapid & blitz
    chapter, ``chapter`` is given and each game says whether it is ``rated`` (a game the
    600-point rule leaves out: expected ``null``, change 0)."""
    from tracker.core.exact import points, shown

    rapid_blitz = result.chapter == "rapid-blitz"
    games: list[CalcGameJson] = []
    for g in result.games:
        game: CalcGameJson = {
            "opponent": g.opponent,
            "score": points(g.score),
            "expected": shown(g.expected, "0.01" if isinstance(g.expected, Fraction)
                              else "0.0001"),
            "change": shown(g.change),
        }
        if rapid_blitz:
            game["rated"] = g.rated
        games.append(game)
    out: CalcJson = {"k": result.k, "games": games, "change": shown(result.change),
                     "new_rating": result.new_rating}
    if rapid_blitz:
        out["chapter"] = result.chapter
    return out
