"""A player's replay: stored games → selection → the pure FIDE engine → one report.

This is where the layers meet: the store gives the player's games of a perf, the selection
says which count (and why the others do not), the engine replays the counted ones as monthly
rating periods, and the real Lichess line is put beside it. The CLI (``tracker replay``) and
the dashboard both show a :class:`ReplayReport`; neither computes anything of its own.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any, Final

from tracker.errors import TrackerError
from tracker.fide import (
    CountedGame,
    PeriodResult,
    ReplaySettings,
    development_coefficient,
    expected_score,
    replay,
)
from tracker.fide.rules import EXPECTED_METHODS, K10_THRESHOLD, RULES
from tracker.lichess_line import LichessPoint, lichess_line, monthly_last
from tracker.records import SPEEDS, VARIANTS
from tracker.replay_pass import LazySelected, MonthOf, RowView
from tracker.selection import Selected, exclusion_reason, score_halves, select_games
from tracker.store import queries
from tracker.store.db import Store
from tracker.store.models import Player

#: The keys of one period in ``tracker replay --json``, in order (a contract: scripts use it).
PERIOD_KEYS: Final = (
    "period",
    "games",
    "excluded",
    "score",
    "expected_score",
    "k",
    "rating_before",
    "change",
    "rating_after",
    "performance",
    "lichess_rating",
)

#: The lowest FIDE rating a user may give as a start rating (§7.1.4: none is published below).
MIN_START_RATING: Final = 1400
MAX_START_RATING: Final = 3500


class SettingsError(TrackerError, ValueError):
    """A replay setting out of range (one-line message)."""


class NoGamesError(TrackerError, LookupError):
    """The player has no games in that perf (one-line message naming the perfs they have)."""


class PerfError(TrackerError, ValueError):
    """A perf that cannot be replayed: unknown, or a variant (FIDE rates standard chess only)."""


#: Perf keys by their lowercase spelling, so ``--perf Blitz`` and ``ultrabullet`` work.
_PERF_KEYS: Final = {k.lower(): k for k in (*SPEEDS, *VARIANTS)}


def perf_key(perf: str) -> str:
    """The Lichess perf key for ``perf`` in any case (``"Blitz"`` → ``"blitz"``).

    Raises PerfError for an unknown perf and for a variant: FIDE rates standard chess only
    (spec §5), so a variant's games are stored but never replayed.
    """
    key = _PERF_KEYS.get(perf.strip().lower())
    if key is None:
        raise PerfError(f"unknown perf {perf!r}: use one of {', '.join(SPEEDS)}")
    if key not in SPEEDS:
        raise PerfError(
            f"{key} is a variant: FIDE rates standard chess only, so its games are stored but "
            f"never replayed; use one of {', '.join(SPEEDS)}"
        )
    return key


@dataclass(frozen=True, slots=True)
class PlayerSettings:
    """A player's replay settings; ``None`` fields mean "the product default".

    ``start_rating``: the player's real FIDE rating to start from (rating points), ``None`` =
    start unrated (default). ``birth_year`` enables the junior K 40. ``rules``:
    ``fide-2025-10`` (default) or ``fide-2024-03``. ``expected``: ``table`` (default) or
    ``formula``. ``count_provisional``: count games against provisional opponents (default no).
    """

    start_rating: int | None = None
    birth_year: int | None = None
    rules: str | None = None
    expected: str | None = None
    count_provisional: bool | None = None

    def resolved(self) -> ResolvedSettings:
        return ResolvedSettings(
            start_rating=self.start_rating,
            birth_year=self.birth_year,
            rules=self.rules or "fide-2025-10",
            expected=self.expected or "table",
            count_provisional=bool(self.count_provisional),
        )

    def override(self, **flags: Any) -> PlayerSettings:
        """These settings with every flag that is not ``None`` put over them."""
        values = {k: getattr(self, k) for k in self.__slots__}  # type: ignore[attr-defined]
        values.update({k: v for k, v in flags.items() if v is not None})
        return PlayerSettings(**values)


@dataclass(frozen=True, slots=True)
class ResolvedSettings:
    """Settings with every default filled in (what a replay actually used)."""

    start_rating: int | None
    birth_year: int | None
    rules: str
    expected: str
    count_provisional: bool

    def engine(self) -> ReplaySettings:
        return ReplaySettings(
            start_rating=self.start_rating,
            birth_year=self.birth_year,
            rules=self.rules,  # type: ignore[arg-type]
            expected=self.expected,  # type: ignore[arg-type]
        )


def validate_settings(s: PlayerSettings) -> PlayerSettings:
    """Check ranges; raises SettingsError with a one-line message."""
    if s.start_rating is not None and not MIN_START_RATING <= s.start_rating <= MAX_START_RATING:
        raise SettingsError(
            f"start rating {s.start_rating} is out of range: a FIDE rating is "
            f"{MIN_START_RATING}–{MAX_START_RATING} (leave it out to start unrated)"
        )
    this_year = date.today().year
    if s.birth_year is not None and not 1900 <= s.birth_year <= this_year:
        raise SettingsError(f"birth year {s.birth_year} is out of range (1900–{this_year})")
    if s.rules is not None and s.rules not in RULES:
        raise SettingsError(f"unknown rules version {s.rules!r}: use {' or '.join(RULES)}")
    if s.expected is not None and s.expected not in EXPECTED_METHODS:
        raise SettingsError(
            f"unknown expected-score method {s.expected!r}: use {' or '.join(EXPECTED_METHODS)}"
        )
    return s


def get_settings(store: Store, username: str) -> PlayerSettings:
    """The saved settings of a player (all ``None`` if the player has none saved)."""
    with store.session() as s:
        p = s.get(Player, username.lower())
        if p is None:
            return PlayerSettings()
        return PlayerSettings(p.start_rating, p.birth_year, p.rules, p.expected,
                              p.count_provisional)


_UNSET: Final = object()


def save_settings(store: Store, username: str, **changes: Any) -> PlayerSettings:
    """Save settings for a player (keys of :class:`PlayerSettings`; ``None`` resets one to the
    default). Returns the saved settings. Raises SettingsError, UnknownPlayerError."""
    uid = queries.resolve_player(store, username)
    unknown = set(changes) - set(PlayerSettings.__slots__)  # type: ignore[attr-defined]
    if unknown:
        raise SettingsError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    merged = {k: getattr(get_settings(store, uid), k) for k in PlayerSettings.__slots__}  # type: ignore[attr-defined]
    merged.update(changes)
    settings = validate_settings(PlayerSettings(**merged))
    store.ensure_player(uid)
    with store.session() as s:
        p = s.get(Player, uid)
        assert p is not None
        for k in PlayerSettings.__slots__:  # type: ignore[attr-defined]
            setattr(p, k, getattr(settings, k))
    return settings


@dataclass(frozen=True, slots=True)
class PeriodRow:
    """One rating period of a report: the engine's result plus what the selection and the
    real Lichess line add (games left out by reason, the Lichess rating at the month's end)."""

    result: PeriodResult
    excluded: dict[str, int]
    lichess_rating: int | None

    @property
    def period(self) -> str:
        return self.result.period


@dataclass(frozen=True, slots=True)
class GameDetail:
    """One game of a period as the Games page shows it.

    ``expected`` (PD) and ``delta`` (ΔR = score − PD) are set only for counted games of a
    rated period. ``score`` in points, ``None`` for an unfinished game.
    """

    selected: Selected
    score: Fraction | None
    expected: Fraction | Decimal | None
    delta: Fraction | Decimal | None


@dataclass
class ReplayReport:
    """Everything about one player's replay in one perf.

    ``periods``: one row per month with games of the perf (counted or not), oldest first.
    ``games``: every game of the perf with its period and reason. ``lichess``: the real Lichess
    rating after each rated game.
    """

    player: str
    user_id: str
    perf: str
    settings: ResolvedSettings
    periods: list[PeriodRow]
    games: list[Selected]
    lichess: list[LichessPoint]
    rating_history: list[tuple[date, int]] = field(default_factory=list)

    @property
    def counted(self) -> int:
        return sum(r.result.games for r in self.periods)

    @property
    def current_rating(self) -> int | None:
        """The FIDE-style rating in force now (after the last period), ``None`` = unrated."""
        return self.periods[-1].result.rating_after if self.periods else None

    @property
    def current_lichess(self) -> int | None:
        return self.lichess[-1].rating if self.lichess else None

    def unrated_reason(self) -> str | None:
        """Why the player is unrated now, or ``None`` if rated."""
        if self.current_rating is not None:
            return None
        if not self.periods or self.counted == 0:
            return "no counted games yet"
        return self.periods[-1].result.note

    def next_k(self) -> int | None:
        """K for the next period before the 700 rule (§8.3.3), ``None`` while unrated."""
        if self.current_rating is None:
            return None
        last = self.periods[-1].result
        published = [r.result.rating_after for r in self.periods if r.result.rating_after]
        if self.settings.start_rating is not None:
            published.append(self.settings.start_rating)
        y, m = (int(x) for x in last.period.split("-"))
        return development_coefficient(
            ever_published_2400=any(r >= K10_THRESHOLD for r in published),
            ever_published_2300=any(r >= 2300 for r in published),
            games_before=last.games_total,
            period_year=y + (m == 12),
            birth_year=self.settings.birth_year,
        )

    def period_games(self, period: str) -> list[GameDetail]:
        """The games of one period with PD and ΔR for the counted ones."""
        row = next((r for r in self.periods if r.period == period), None)
        rating = row.result.rating_before if row else None
        out = []
        for sel in self.games:
            if sel.period != period:
                continue
            score = Fraction(sel.score_halves, 2) if sel.score_halves is not None else None
            pd = delta = None
            if sel.counts and rating is not None and sel.opponent_rating is not None:
                pd = expected_score(rating, sel.opponent_rating,
                                    rules=self.settings.rules,  # type: ignore[arg-type]
                                    method=self.settings.expected)  # type: ignore[arg-type]
                delta = score - pd if isinstance(pd, Fraction) else Decimal(
                    score.numerator) / Decimal(score.denominator) - pd  # type: ignore[union-attr]
            out.append(GameDetail(sel, score, pd, delta))
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``tracker replay --json`` object (numbers exact: see :func:`dumps`)."""
        return {
            "player": self.player,
            "perf": self.perf,
            "rules": self.settings.rules,
            "expected": self.settings.expected,
            "periods": [period_json(r) for r in self.periods],
        }


def points(x: Fraction) -> int | Decimal:
    """Points (a multiple of ½) as JSON shows them: ``1``, ``0``, ``7.5``."""
    return int(x) if x.denominator == 1 else Decimal(x.numerator) / Decimal(x.denominator)


def shown(x: Fraction | Decimal | None, places: str = "0.01") -> Decimal | None:
    """An exact amount as a Decimal with ``places`` decimals, rounded half up for display only
    (table amounts are exact hundredths and come out unchanged)."""
    if x is None:
        return None
    d = Decimal(x.numerator) / Decimal(x.denominator) if isinstance(x, Fraction) else x
    return d.quantize(Decimal(places), rounding=ROUND_HALF_UP)


def period_json(row: PeriodRow) -> dict[str, Any]:
    """One period with exactly :data:`PERIOD_KEYS` (Decimals for exact numbers)."""
    r = row.result
    return {
        "period": r.period,
        "games": r.games,
        "excluded": dict(sorted(row.excluded.items())),
        "score": points(r.score),
        "expected_score": shown(r.expected_score),
        "k": r.k,
        "rating_before": r.rating_before,
        "change": shown(r.change),
        "rating_after": r.rating_after,
        "performance": r.performance,
        "lichess_rating": row.lichess_rating,
    }


def excluded_text(excluded: dict[str, int]) -> str:
    """Games left out by reason as one line, ``"casual: 1; provisional opponent: 6"`` (``""``
    when none), reasons in alphabetical order as in :func:`period_json`."""
    return "; ".join(f"{reason}: {n}" for reason, n in sorted(excluded.items()))


def periods_csv(report: ReplayReport) -> str:
    """The periods of ``tracker replay --json`` as CSV: a header of :data:`PERIOD_KEYS`, then one
    row per period. Numbers exact as in the JSON, an empty cell for null, ``excluded`` written
    with :func:`excluded_text`."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(PERIOD_KEYS)
    for row in report.periods:
        j = period_json(row)
        j["excluded"] = excluded_text(j["excluded"])
        writer.writerow("" if j[k] is None else j[k] for k in PERIOD_KEYS)
    return buf.getvalue()


#: The keys of one game of a period (:func:`game_row`), in order: what the dashboard's Games
#: page shows. ``date`` is the game's end (UTC); ``expected`` (PD) and ``delta`` (ΔR) are set
#: for counted games of a rated period only; ``url`` is ``None`` for a game without a Lichess id.
GAME_KEYS: Final = (
    "date",
    "colour",
    "opponent",
    "opponent_rating",
    "result",
    "counted",
    "reason",
    "expected",
    "delta",
    "url",
)

LICHESS_GAME_URL: Final = "https://lichess.org/"


def game_url(game_id: str, color: str | None = None) -> str | None:
    """The game on lichess.org, seen from ``color``'s side; ``None`` for a PGN game that has no
    Lichess id (its id is a content digest, ``pgn-…``)."""
    if game_id.startswith("pgn-"):
        return None
    return LICHESS_GAME_URL + game_id + ("/black" if color == "black" else "")


def game_row(detail: GameDetail) -> dict[str, Any]:
    """One game of a period with exactly :data:`GAME_KEYS` (Decimals for PD and ΔR, result in
    points, ``None`` for an unfinished game)."""
    sel = detail.selected
    game = sel.game
    opp = game.side("black" if sel.color == "white" else "white")
    if opp.is_computer:
        opponent = f"Lichess AI level {opp.ai_level}"
    else:
        opponent = opp.name or opp.user_id or "anonymous"
    places = "0.01" if isinstance(detail.expected, Fraction) else "0.0001"
    return {
        "date": game.ended_at,
        "colour": sel.color,
        "opponent": opponent,
        "opponent_rating": opp.rating,
        "result": points(detail.score) if detail.score is not None else None,
        "counted": sel.counts,
        "reason": sel.reason,
        "expected": shown(detail.expected, places),
        "delta": shown(detail.delta, places),
        "url": game_url(game.id, sel.color),
    }


_DECIMAL_TOKEN = re.compile(r'"\\u0000dec:(-?[0-9.]+)"')


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    """JSON with :class:`~decimal.Decimal` written as exact numbers (``15.20``, never
    ``15.199999``): the output boundary is the only place a number becomes text."""

    def default(o: Any) -> Any:
        if isinstance(o, Decimal):
            return f"\u0000dec:{o}"
        if isinstance(o, Fraction):
            return f"\u0000dec:{points(o)}"
        if isinstance(o, date):
            return o.isoformat()
        raise TypeError(f"not JSON serialisable: {type(o).__name__}")

    def walk(o: Any) -> Any:
        if isinstance(o, dict):
            return {k: walk(v) for k, v in o.items()}
        if isinstance(o, list | tuple):
            return [walk(v) for v in o]
        if isinstance(o, Decimal | Fraction | date):
            return default(o)
        return o

    return _DECIMAL_TOKEN.sub(r"\1", json.dumps(walk(obj), indent=indent, ensure_ascii=False))


def build_report(
    store: Store,
    username: str,
    perf: str,
    *,
    start_rating: int | None = None,
    birth_year: int | None = None,
    rules: str | None = None,
    expected: str | None = None,
    count_provisional: bool | None = None,
) -> ReplayReport:
    """Replay ``username``'s games of ``perf`` with their saved settings, flags over them.

    Raises UnknownPlayerError (no games of that player), NoGamesError (none in that perf),
    PerfError (an unknown perf or a variant), SettingsError (a flag out of range).
    """
    perf = perf_key(perf)
    uid = queries.resolve_player(store, username)
    settings = validate_settings(
        get_settings(store, uid).override(
            start_rating=start_rating, birth_year=birth_year, rules=rules, expected=expected,
            count_provisional=count_provisional,
        )
    ).resolved()
    rows = queries.replay_rows(store, uid, perf)
    if not rows:
        have = ", ".join(f"{p.perf} ({p.games})" for p in queries.player_perfs(store, uid))
        raise NoGamesError(f"{username} has no {perf} games; perfs with games: {have}")
    # One pass over plain rows (see tracker.replay_pass): the selection's reasons, the counted
    # games and the Lichess line, without building a record per game. Rows come in end order,
    # so the periods come in order too (as the stable sort by period gave).
    count_provisional = settings.count_provisional
    excluded: dict[str, Counter[str]] = {}
    counted: list[CountedGame] = []
    periods: list[str] = []
    found: list[int] = [0]
    names: list[str] = []

    def walk() -> Iterator[RowView]:
        view, month = RowView(), MonthOf()
        for row in rows:
            view.load(row)
            color = view.color_of(uid)
            if color is None:
                continue
            found[0] += 1
            period = month(view._ended_ms)
            if not periods or periods[-1] != period:
                periods.append(period)
            me = view.side(color)
            if not names and me.name:
                names.append(me.name)
            reason = exclusion_reason(view, color,  # type: ignore[arg-type]
                                      count_provisional=count_provisional)
            if reason is None:
                opponent = view.black if color == "white" else view.white
                counted.append(CountedGame(period, opponent.rating,  # type: ignore[arg-type]
                                           score_halves(view.result, color)))  # type: ignore[arg-type]
            else:
                excluded.setdefault(period, Counter())[reason] += 1
            yield view

    line = lichess_line(walk(), uid)  # type: ignore[arg-type]
    months = sorted(set(periods))
    results = replay(counted, settings.engine(), periods=months)
    by_month = monthly_last(line)
    period_rows: list[PeriodRow] = []
    last_lichess: int | None = None
    for r in results:
        last_lichess = by_month.get(r.period, last_lichess)
        period_rows.append(PeriodRow(r, dict(excluded.get(r.period, {})), last_lichess))
    name = names[0] if names else uid

    def load_games() -> list[Selected]:
        games = list(queries.player_games(store, uid, perf))
        selected = select_games(games, uid, perf, count_provisional=count_provisional)
        selected.sort(key=lambda s: s.period)  # stable: end order within a month
        return selected

    selected = LazySelected(found[0], load_games)
    return ReplayReport(
        player=name,
        user_id=uid,
        perf=perf,
        settings=settings,
        periods=period_rows,
        games=selected,  # type: ignore[arg-type]
        lichess=line,
        rating_history=queries.rating_history(store, uid, perf),
    )
