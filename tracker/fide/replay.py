"""Replay counted games month by month as FIDE rating periods.

:func:`replay` takes the games that count (the caller has already chosen them, rules.md §5), in
period order, and returns one :class:`PeriodResult` per month: the rating in force at the start,
K, the expected and real score, the change and the rating published for the next month. It
implements rules.md §3 (K), §4 (the period), §6 (initial rating, the 1400 floor) and §7 (the
performance rating); ``rules.md`` is ``docs/rules.md``.

Speed: a player may have a million games. The table path works in integer hundredths: the
expected score of every game of a month is one list lookup, and Fractions are built once per
month for the result row, never per game.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal, localcontext
from fractions import Fraction
from itertools import groupby
from operator import attrgetter
from typing import Final, NamedTuple

from tracker.fide.rules import (
    DECIMAL_CONTEXT,
    DEFAULT_CHAPTER,
    DEFAULT_EXPECTED,
    DEFAULT_RULES,
    DIFFERENCE_CAP,
    JUNIOR_K40_LIMIT,
    K10_THRESHOLD,
    RULE_600_ABOVE,
    RULE_600_FROM,
    Chapter,
    ExpectedMethod,
    Rules,
    apply_700_rule,
    cap_applies,
    capped_difference,
    check_method,
    check_rules,
    expected_score,
    formula_expected,
    is_chapter,
    k_with_reason,
    limit_difference,
    rated_in_chapter,
    round_half_away,
)
from tracker.fide.tables import TABLE_MAX_DIFFERENCE, dp_from_p, expected_score_hundredths

#: §7.2.1: the lowest rating FIDE publishes; a rating below it is not published.
RATING_FLOOR: Final = 1400
#: §8.2: an initial rating is never published above this.
INITIAL_RATING_CAP: Final = 2200
#: §7.1.4: games against rated opponents needed before an initial rating is computed.
POOL_MIN_GAMES: Final = 5
#: §7.1.4: the pool keeps games of at most this many consecutive months.
POOL_MONTHS: Final = 26
#: §8.2: two imaginary opponents rated 1800, each drawn, are added to the pool.
IMAGINARY_OPPONENTS: Final = 2
IMAGINARY_OPPONENT_RATING: Final = 1800

#: Half-width (rating points of D) of the replay's lookup tables; a month whose D falls outside
#: takes the slower clamped path, so this only trades memory for speed.
_TABLE_SPAN: Final = 5000


class CountedGame(NamedTuple):
    """One game that counts for the replay (the caller has already applied rules.md §5).

    An immutable named tuple (a replay of 100k games builds 100k of them: a tuple is built
    in a third of a frozen dataclass's time).

    - ``period``: ``"YYYY-MM"``, the UTC month of the game's end (rules.md §4).
    - ``opponent_rating``: the opponent's rating at the game's start, rating points.
    - ``score_halves``: the player's score in half points: 2 win, 1 draw, 0 loss (integers,
      so that a month's score is a sum of ints).
    """

    period: str
    opponent_rating: int
    score_halves: int


@dataclass(frozen=True, slots=True)
class ReplaySettings:
    """How to replay.

    - ``start_rating``: ``None`` (default) starts unrated, as a newcomer (rules.md §6); else the
      player's real FIDE rating (rating points, at least 1400), in force from the first period.
      It counts as a published rating for K 10 (≥ 2400) and the junior line (≥ 2300); the games
      counted for the K 40 line start at 0.
    - ``birth_year``: enables the junior K 40 line (§8.3.3); ``None`` = not a junior.
    - ``rules``: ``"fide-2025-10"`` (2650 exemption from the 400-point rule) or
      ``"fide-2024-03"`` (cap for all). [choice] One version for the whole replay.
    - ``expected``: ``"table"`` (FIDE table 8.1.2) or ``"formula"`` (logistic, Decimal).
    - ``chapter``: ``"standard"`` (default) or ``"rapid-blitz"`` (rules.md §10: no 2650
      exemption, whatever ``rules`` says; from period 2024-12 the 600-point rule).
    """

    start_rating: int | None = None
    birth_year: int | None = None
    rules: Rules = DEFAULT_RULES
    expected: ExpectedMethod = DEFAULT_EXPECTED
    chapter: Chapter = DEFAULT_CHAPTER

    def __post_init__(self) -> None:
        check_rules(self.rules)
        check_method(self.expected)
        if not is_chapter(self.chapter):
            raise ValueError(f"unknown chapter {self.chapter!r}: use standard or rapid-blitz")
        if self.start_rating is not None and (
            isinstance(self.start_rating, bool)
            or not isinstance(self.start_rating, int)
            or self.start_rating < RATING_FLOOR
        ):
            raise ValueError(
                f"start_rating must be a whole number of rating points, at least {RATING_FLOOR}"
                f" (FIDE publishes no rating below it), got {self.start_rating!r};"
                " use None to start unrated"
            )


DEFAULT_SETTINGS: Final = ReplaySettings()


@dataclass(frozen=True, slots=True)
class PeriodResult:
    """One rating period (calendar month) of a replay.

    Ratings are whole rating points; ``None`` means unrated. Scores are in points.

    - ``period``: ``"YYYY-MM"``; ``games``: counted games in the month.
    - ``score``: points scored (Fraction). ``expected_score``: sum of the games' ``PD``
      (Fraction with the table, Decimal with the formula), ``None`` while unrated.
    - ``k``: K after the 700 rule, fixed at the period's start, ``None`` while unrated.
    - ``rating_before``: the rating in force during the month. ``change``: ``K × ΣΔR``,
      unrounded, ``None`` while unrated. ``rating_after``: the rating in force from the next
      month, i.e. ``rating_before + round_half_away(change)``, or the initial rating just
      published, or ``None`` (unrated, including a fall below 1400).
    - ``performance``: the performance rating ``Rp`` (rules.md §7), ``None`` without games.
    - ``games_total``: games counted so far for the K 40 line, this month included: rated
      games plus the games now in the pool (games that dropped out of the 26-month pool or
      belong to an ignored zero-score first period do not count).
    - ``next_k``: K for the next period before the 700 rule (§8.3.3), from the state after
      this one; ``None`` when the player is unrated after this period.
    - ``not_rated``: games of the month the chapter does not rate (the rapid & blitz
      600-point rule, rules.md §10); they are not in ``games``.
    - ``note``: one human sentence on what happened, e.g. ``"unrated: 3 games in pool
      (5 needed)"``, ``"initial rating 1922 published"``, ``"fell to 1391, below 1400: unrated
      from next period"``, ``"first period scored zero: ignored"``, ``"K 40 (fewer than 30
      games); 700 rule: K 35 for 20 games"``.
    - ``unpublished``: the rating the period computed but did not publish because it is below
      1400 (a fall: ``rating_before + round(change)``; an unrated pool's rating), else
      ``None``. Charts draw it; it is never in force.
    """

    period: str
    games: int
    score: Fraction
    expected_score: Fraction | Decimal | None
    k: int | None
    rating_before: int | None
    change: Fraction | Decimal | None
    rating_after: int | None
    performance: int | None
    games_total: int
    note: str
    next_k: int | None = None
    not_rated: int = 0
    unpublished: int | None = None


def _games(n: int) -> str:
    """``"1 game"``, ``"3 games"``: the notes are read by people."""
    return f"{n} game" if n == 1 else f"{n} games"


def _p_hundredths(numerator: int, denominator: int) -> int:
    # p = numerator / denominator rounded to the hundredth, half up: floor(100 p + 1/2).
    return (200 * numerator + denominator) // (2 * denominator)


def _rounded_half_up(numerator: int, denominator: int) -> int:
    return (2 * numerator + denominator) // (2 * denominator)


def performance_rating(opponent_ratings_sum: int, n: int, score_halves_sum: int) -> int:
    """Performance rating ``Rp = Ra + dp(p)`` of ``n`` games (rules.md §7), rating points.

    ``Ra`` is the plain average of the opponents' ratings (``opponent_ratings_sum / n``), ``p``
    the score fraction (``score_halves_sum / 2n``) rounded to the hundredth half up, ``dp``
    from table 8.1.1; ``Rp`` is rounded half up. Exact integer arithmetic.

    >>> performance_rating(3000, 2, 2)  # one win, one loss against 1500s
    1500
    """
    if n <= 0:
        raise ValueError(f"performance rating needs at least one game, got n={n}")
    if not 0 <= score_halves_sum <= 2 * n:
        raise ValueError(f"score {score_halves_sum} half points is impossible in {n} games")
    dp = dp_from_p(_p_hundredths(score_halves_sum, 2 * n))
    return _rounded_half_up(opponent_ratings_sum + dp * n, n)


def _uncapped_initial_rating(opponent_ratings_sum: int, n: int, score_halves_sum: int) -> int:
    m = n + IMAGINARY_OPPONENTS
    total = opponent_ratings_sum + IMAGINARY_OPPONENTS * IMAGINARY_OPPONENT_RATING
    # p = (W + 1) / (n + 2) with W = halves / 2, i.e. (halves + 2) / 2m: each imaginary
    # opponent is a draw, half a point.
    dp = dp_from_p(_p_hundredths(score_halves_sum + IMAGINARY_OPPONENTS, 2 * m))
    return _rounded_half_up(total + dp * m, m)


def initial_rating(opponent_ratings_sum: int, n: int, score_halves_sum: int) -> int:
    """Initial rating ``Ru`` of an unrated player's pool (§8.2, rules.md §6), rating points.

    ``Ra = (S + 3600) / (n + 2)`` and ``p = (W + 1) / (n + 2)`` (two imaginary 1800 opponents,
    both drawn), ``p`` rounded to the hundredth half up, ``Ru = Ra + dp(p)`` rounded half up,
    then capped at 2200. Whether it is published (≥ 1400, ≥ 5 games) is :func:`replay`'s job.

    >>> initial_rating(9507, 5, 6)  # 5 games, 3 points: Ra 1872.43, p .57, dp +50
    1922
    """
    if n <= 0:
        raise ValueError(f"initial rating needs at least one game, got n={n}")
    if not 0 <= score_halves_sum <= 2 * n:
        raise ValueError(f"score {score_halves_sum} half points is impossible in {n} games")
    return min(
        _uncapped_initial_rating(opponent_ratings_sum, n, score_halves_sum), INITIAL_RATING_CAP
    )


def _month_index(period: str) -> int:
    # Months since year 0; also the validation of the "YYYY-MM" shape.
    if (
        not isinstance(period, str)
        or len(period) != 7
        or period[4] != "-"
        or not period.isascii()
        or not (period[:4].isdigit() and period[5:].isdigit())
        or not 1 <= int(period[5:]) <= 12
    ):
        raise ValueError(f"period must be 'YYYY-MM', got {period!r}")
    return int(period[:4]) * 12 + int(period[5:]) - 1


def _hundredths_by_difference(capped: bool) -> list[int]:
    # Index D + _TABLE_SPAN → expected score in hundredths, the 400-point rule baked in. Beyond
    # ±reach the value no longer changes (clamped at ±400, or past the table's last row), so
    # only the middle is looked up and the ends are repeated: built in ~1 ms, not ~15, at start-up.
    reach = DIFFERENCE_CAP if capped else TABLE_MAX_DIFFERENCE + 1
    middle = [
        expected_score_hundredths(limit_difference(d) if capped else d)
        for d in range(-reach, reach + 1)
    ]
    pad = _TABLE_SPAN - reach
    return [middle[0]] * pad + middle + [middle[-1]] * pad


_CAPPED_TABLE: Final = _hundredths_by_difference(capped=True)
_UNCAPPED_TABLE: Final = _hundredths_by_difference(capped=False)


def _tally(chunk: Sequence[CountedGame]) -> tuple[list[int], int, int]:
    """A month's opponents' ratings, their sum, and the score in half points; validated."""
    opponents = [g.opponent_rating for g in chunk]
    scores = [g.score_halves for g in chunk]
    wins, draws = scores.count(2), scores.count(1)
    if wins + draws + scores.count(0) != len(scores):
        bad = next(s for s in scores if s not in (0, 1, 2))
        raise ValueError(f"score_halves must be 0, 1 or 2, got {bad!r} in {chunk[0].period}")
    try:
        total: int | None = sum(opponents)
    except TypeError:  # a None or a string among them
        total = None
    if not isinstance(total, int) or min(opponents) <= 0:
        bad = next(o for o in opponents if not isinstance(o, int) or o <= 0)
        raise ValueError(
            f"opponent_rating must be a positive whole number, got {bad!r} in {chunk[0].period}"
        )
    return opponents, total, 2 * wins + draws  # total is an int here: checked above


@dataclass(slots=True)
class _PoolMonth:
    month: int
    period: str
    games: int
    opponents_sum: int
    score_halves: int


def _unrated_row(
    period: str,
    *,
    games: int,
    halves: int,
    games_total: int,
    note: str,
    performance: int | None = None,
    rating_after: int | None = None,
    unpublished: int | None = None,
) -> PeriodResult:
    # While unrated there is no K, no expected score and no change; only a pool.
    return PeriodResult(
        period=period,
        games=games,
        score=Fraction(halves, 2),
        expected_score=None,
        k=None,
        rating_before=None,
        change=None,
        rating_after=rating_after,
        performance=performance,
        games_total=games_total,
        note=note,
        unpublished=unpublished,
    )


class _Replayer:
    """The player's state between periods; :meth:`close` turns one month into a row."""

    def __init__(self, settings: ReplaySettings) -> None:
        self.settings = settings
        self.table = settings.expected == "table"
        self.rating: int | None = settings.start_rating
        # A user-given start rating is a published rating (rules.md §3, §6).
        self.ever_2400 = self.rating is not None and self.rating >= K10_THRESHOLD
        self.ever_2300 = self.rating is not None and self.rating >= JUNIOR_K40_LIMIT
        # Games counted for the K 40 line, not counting the current pool.
        self.games_rated = 0
        self.pool: list[_PoolMonth] = []
        # [choice] The zero-score rule applies to the first period of every pool, including
        # the fresh pool after a fall below 1400.
        self.pool_started = False
        self.formula_cache: dict[int, Decimal] = {}

    # -- shared -----------------------------------------------------------------------------

    def close(self, period: str, month: int, chunk: Sequence[CountedGame]) -> PeriodResult:
        if self.rating is None:
            row = self._close_unrated(period, month, chunk)
        else:
            row = self._close_rated(period, chunk)
        if self.rating is None:
            return row
        return replace(row, next_k=self._k_start(year=(month + 1) // 12)[0])

    def _k_start(self, *, year: int) -> tuple[int, str]:
        # K at the start of a period of ``year``, before the 700 rule, from the current state.
        return k_with_reason(
            ever_published_2400=self.ever_2400,
            games_before=self.games_rated,
            period_year=year,
            birth_year=self.settings.birth_year,
            ever_published_2300=self.ever_2300,
        )

    def _pool_games(self) -> int:
        return sum(m.games for m in self.pool)

    # -- rated (rules.md §3, §4) ------------------------------------------------------------------

    def _close_rated(self, period: str, chunk: Sequence[CountedGame]) -> PeriodResult:
        own = self.rating
        assert own is not None
        n = len(chunk)
        k_start, reason = self._k_start(year=int(period[:4]))
        k = apply_700_rule(k_start, n)
        k_note = f"K {k_start} ({reason})" if reason else f"K {k_start}"
        if k != k_start:
            k_note += f"; 700 rule: K {k} for {_games(n)}"
        if n == 0:
            zero: Fraction | Decimal = Fraction(0) if self.table else Decimal(0)
            return PeriodResult(
                period=period,
                games=0,
                score=Fraction(0),
                expected_score=zero,
                k=k,
                rating_before=own,
                change=zero,
                rating_after=own,
                performance=None,
                games_total=self.games_rated,
                note="no counted games: rating unchanged",
            )

        not_rated = 0
        if self.settings.chapter == "rapid-blitz" and period >= RULE_600_FROM and (
            own > RULE_600_ABOVE or max(g.opponent_rating for g in chunk) > RULE_600_ABOVE
        ):
            rated = [g for g in chunk
                     if rated_in_chapter(own, g.opponent_rating, chapter="rapid-blitz")]
            not_rated = n - len(rated)
            if not_rated:
                result = self._close_rated(period, rated)
                note = f"{result.note}; {_games(not_rated)} not rated (600-point rule)"
                return replace(result, not_rated=not_rated, note=note)

        opponents, opponents_sum, halves = _tally(chunk)
        capped = cap_applies(own, rules=self.settings.rules, chapter=self.settings.chapter)
        expected: Fraction | Decimal
        change: Fraction | Decimal
        if self.table:
            hundredths = self._sum_hundredths(own, opponents, capped)
            expected = Fraction(hundredths, 100)
            # K × ΣΔR in hundredths of a rating point: ΔR = score − PD, score = halves × 50.
            change = Fraction(k * (50 * halves - hundredths), 100)
        else:
            expected = self._sum_formula(own, opponents, capped)
            with localcontext(DECIMAL_CONTEXT):
                change = k * (Decimal(halves) / 2 - expected)
        new = own + round_half_away(change)  # once per period, never per game (rules.md §4)
        self.games_rated += n
        after: int | None = new
        if new < RATING_FLOOR:
            # §7.2.1: not raised to the floor: unpublished, a fresh pool from the next month.
            after = None
            self.rating = None
            self.pool = []
            self.pool_started = False
            note = f"fell to {new}, below {RATING_FLOOR}: unrated from next period"
        else:
            self.rating = new
            self.ever_2400 = self.ever_2400 or new >= K10_THRESHOLD
            self.ever_2300 = self.ever_2300 or new >= JUNIOR_K40_LIMIT
            note = k_note
        return PeriodResult(
            period=period,
            games=n,
            score=Fraction(halves, 2),
            expected_score=expected,
            k=k,
            rating_before=own,
            change=change,
            rating_after=after,
            performance=performance_rating(opponents_sum, n, halves),
            games_total=self.games_rated,
            note=note,
            unpublished=new if after is None else None,
        )

    def _sum_hundredths(self, own: int, opponents: list[int], capped: bool) -> int:
        table = _CAPPED_TABLE if capped else _UNCAPPED_TABLE
        base = own + _TABLE_SPAN
        if base - max(opponents) >= 0 and base - min(opponents) < len(table):
            return sum([table[base - o] for o in opponents])  # the hot path
        # A difference beyond the lookup table: rare, done the plain way.
        rules, chapter = self.settings.rules, self.settings.chapter
        return sum(
            expected_score_hundredths(
                capped_difference(own, o, rules=rules, cap_400=capped, chapter=chapter)
            )
            for o in opponents
        )

    def _sum_formula(self, own: int, opponents: list[int], capped: bool) -> Decimal:
        cache = self.formula_cache
        total = Decimal(0)
        with localcontext(DECIMAL_CONTEXT):
            # Games against the same opponent rating share one Decimal: count, then multiply.
            for opponent, count in Counter(opponents).items():
                d = capped_difference(own, opponent, rules=self.settings.rules, cap_400=capped,
                                      chapter=self.settings.chapter)
                e = cache.get(d)
                if e is None:
                    e = cache[d] = formula_expected(d)
                total += count * e
        return total

    # -- unrated (rules.md §6) -------------------------------------------------------------------

    def _drop_old_months(self, month: int) -> int:
        keep = [m for m in self.pool if month - m.month < POOL_MONTHS]
        dropped = sum(m.games for m in self.pool) - sum(m.games for m in keep)
        self.pool = keep
        return dropped

    def _close_unrated(self, period: str, month: int, chunk: Sequence[CountedGame]) -> PeriodResult:
        n = len(chunk)
        dropped = self._drop_old_months(month)
        dropped_note = (
            f"; {_games(dropped)} older than {POOL_MONTHS} months dropped" if dropped else ""
        )
        if n == 0:
            pool_games = self._pool_games()
            return _unrated_row(
                period,
                games=0,
                halves=0,
                games_total=self.games_rated + pool_games,
                note=f"unrated: no counted games; {_games(pool_games)} in pool{dropped_note}",
            )

        _, opponents_sum, halves = _tally(chunk)
        performance = performance_rating(opponents_sum, n, halves)
        if not self.pool_started:
            self.pool_started = True
            if halves == 0:
                # §7.1.4: a zero score in the first period is disregarded.
                return _unrated_row(
                    period,
                    games=n,
                    halves=0,
                    games_total=self.games_rated + self._pool_games(),
                    note="first period scored zero: ignored",
                    performance=performance,
                )
        self.pool.append(_PoolMonth(month, period, n, opponents_sum, halves))
        pool_games = self._pool_games()
        games_total = self.games_rated + pool_games
        after: int | None = None
        unpublished: int | None = None
        if pool_games < POOL_MIN_GAMES:
            note = f"unrated: {_games(pool_games)} in pool ({POOL_MIN_GAMES} needed)"
        else:
            raw = _uncapped_initial_rating(
                sum(m.opponents_sum for m in self.pool),
                pool_games,
                sum(m.score_halves for m in self.pool),
            )
            ru = min(raw, INITIAL_RATING_CAP)
            if ru < RATING_FLOOR:
                unpublished = ru
                note = (
                    f"unrated: pool of {_games(pool_games)} gives {ru},"
                    f" below {RATING_FLOOR}: not published"
                )
            else:
                after = ru
                self.rating = ru
                self.ever_2400 = self.ever_2400 or ru >= K10_THRESHOLD
                self.ever_2300 = self.ever_2300 or ru >= JUNIOR_K40_LIMIT
                self.games_rated += pool_games
                self.pool = []
                note = f"initial rating {ru} published"
                if raw != ru:
                    note += f" (pool gives {raw}, capped at {INITIAL_RATING_CAP})"
        return _unrated_row(
            period,
            games=n,
            halves=halves,
            games_total=games_total,
            note=note + dropped_note,
            performance=performance,
            rating_after=after,
            unpublished=unpublished,
        )


def _sorted_periods(periods: Iterable[str] | None) -> list[str]:
    if periods is None:
        return []
    out = sorted(set(periods))
    for p in out:
        _month_index(p)
    return out


_period_of = attrgetter("period")


def replay(
    games: Iterable[CountedGame],
    settings: ReplaySettings = DEFAULT_SETTINGS,
    *,
    periods: Iterable[str] | None = None,
) -> list[PeriodResult]:
    """Replay ``games`` as monthly FIDE rating periods; one :class:`PeriodResult` per month.

    ``games`` must come in non-decreasing ``period`` order (ValueError otherwise); within a
    month the order does not matter, as every game uses the rating in force at the month's
    start (rules.md §4). The result has a row for every month with games plus one for every month
    in ``periods`` (a month without games: rating unchanged), sorted by period. Months in
    neither get no row and change nothing.

    Rules, per month (rules.md §3, §4, §6):

    - rated: K from the state after the previous month (§8.3.3 precedence), the 700 rule,
      change ``K × Σ(score − PD)`` rounded once, half away from zero; a result below 1400 is
      not published and the player is unrated from the next month, with a fresh pool;
    - unrated: the month's games join the pool (at most 26 consecutive months); with at least
      5 games, ``Ru`` (capped at 2200) is published if it is at least 1400.

    [choice] A zero score in the first month of each pool (the first pool and every fresh pool
    after a fall below 1400) is ignored; later zero-score months count. [choice] A pool is only
    rated at the end of a month in which it received games. [choice] More than 700 games in a
    month give K 0 by the 700 rule: the month changes nothing.

    >>> rows = replay([CountedGame("2025-01", 1700, 2)], ReplaySettings(start_rating=1500))
    >>> rows[0].k, rows[0].change, rows[0].rating_after
    (40, Fraction(152, 5), 1530)
    """
    engine = _Replayer(settings)
    extra = _sorted_periods(periods)
    next_extra = 0
    rows: list[PeriodResult] = []
    previous: str | None = None
    for period, group in groupby(games, key=_period_of):
        month = _month_index(period)
        if previous is not None and period <= previous:
            raise ValueError(
                f"games must be in non-decreasing period order: {period} after {previous}"
            )
        while next_extra < len(extra) and extra[next_extra] <= period:
            if extra[next_extra] != period:
                rows.append(engine.close(extra[next_extra], _month_index(extra[next_extra]), ()))
            next_extra += 1
        rows.append(engine.close(period, month, list(group)))
        previous = period
    for p in extra[next_extra:]:
        rows.append(engine.close(p, _month_index(p), ()))
    return rows


def game_expected(
    rating: int,
    opponent_rating: int,
    score_halves: int,
    settings: ReplaySettings = DEFAULT_SETTINGS,
    *,
    period: str | None = None,
) -> tuple[Fraction | Decimal, Fraction | Decimal] | None:
    """One counted game of a rated period as :func:`replay` scores it: ``(PD, ΔR)``.

    ``rating`` is the player's rating in force for the period, ``opponent_rating`` the
    opponent's (rating points); ``score_halves`` 2 win, 1 draw, 0 loss. ``PD`` is the expected
    score (table 8.1.2 after the 400-point rule, or the formula) and ``ΔR = score − PD``: exact
    Fractions with the table, Decimals with the formula. A period's change is ``K × ΣΔR``.
    ``None`` for a game the chapter does not rate in ``period`` (``"YYYY-MM"``; ``None`` =
    today), see rules.md §10.

    >>> game_expected(1500, 1700, 2)
    (Fraction(6, 25), Fraction(19, 25))
    """
    if score_halves not in (0, 1, 2):
        raise ValueError(f"score_halves must be 0, 1 or 2, got {score_halves!r}")
    if not rated_in_chapter(rating, opponent_rating, chapter=settings.chapter, period=period):
        return None
    pd = expected_score(rating, opponent_rating, rules=settings.rules, method=settings.expected,
                        chapter=settings.chapter)
    if isinstance(pd, Fraction):
        return pd, Fraction(score_halves, 2) - pd
    with localcontext(DECIMAL_CONTEXT):
        return pd, Decimal(score_halves) / 2 - pd
