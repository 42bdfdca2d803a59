"""A player's replay: stored games → selection → the pure FIDE engine → one report.

This is where the layers meet: the store gives the player's games of a perf, the selection
says which count (and why the others do not), the engine replays the counted ones as monthly
rating periods, and the real Lichess line is put beside it. The CLI (``tracker replay``) and
the dashboard both show a :class:`ReplayReport`; neither computes anything of its own, and
no rating rule is computed here either: K for the next period and each game's PD and ΔR come
from the engine (:mod:`tracker.fide`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Any

from tracker.errors import TrackerError
from tracker.fide import CountedGame, PeriodResult, game_expected, replay
from tracker.lichess_line import LichessLine, LichessPoint, monthly_last
from tracker.perfs import perf_key
from tracker.presentation import report_json
from tracker.replay_pass import LazySelected, MonthOf, RowView
from tracker.selection import Selected, exclusion_reason, other, score_halves, select_games
from tracker.settings import ResolvedSettings, get_settings, validate_settings
from tracker.store import queries
from tracker.store.db import Store


class NoGamesError(TrackerError, LookupError):
    """The player has no games in that perf (one-line message naming the perfs they have)."""


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
    ``games``: every game of the perf with its period and reason (read from the store on
    first use). ``lichess``: the real Lichess rating after each rated game.
    """

    player: str
    user_id: str
    perf: str
    settings: ResolvedSettings
    periods: list[PeriodRow]
    games: Sequence[Selected]
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
        """K for the next period before the 700 rule (§8.3.3), ``None`` while unrated: the
        engine's :attr:`~tracker.fide.PeriodResult.next_k` of the last period."""
        return self.periods[-1].result.next_k if self.periods else None

    def period_games(self, period: str) -> list[GameDetail]:
        """The games of one period with PD and ΔR (from the engine) for the counted ones."""
        row = next((r for r in self.periods if r.period == period), None)
        rating = row.result.rating_before if row else None
        engine = self.settings.engine()
        out = []
        for sel in self.games:
            if sel.period != period:
                continue
            score = Fraction(sel.score_halves, 2) if sel.score_halves is not None else None
            pd = delta = None
            opponent = sel.opponent_rating
            if (sel.counts and rating is not None and opponent is not None
                    and sel.score_halves is not None):
                pd, delta = game_expected(rating, opponent, sel.score_halves, engine)
            out.append(GameDetail(sel, score, pd, delta))
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``tracker replay --json`` object (see :func:`tracker.presentation.dumps`)."""
        return report_json(self)


@dataclass
class _Pass:
    """What one pass over a player's stored rows of a perf collects."""

    counted: list[CountedGame] = field(default_factory=list)
    excluded: dict[str, Counter[str]] = field(default_factory=dict)
    periods: list[str] = field(default_factory=list)
    line: LichessLine = field(default_factory=LichessLine)
    games: int = 0
    name: str | None = None


def _walk(rows: Sequence[Sequence[Any]], uid: str, *, count_provisional: bool) -> _Pass:
    """One pass over plain rows (see :mod:`tracker.replay_pass`): the selection's reasons, the
    counted games and the Lichess line, without building a record per game. Rows come in end
    order, so the periods come in order too."""
    seen = _Pass()
    view, month = RowView(), MonthOf()
    for row in rows:
        view.load(row)
        color = view.color_of(uid)
        if color is None:
            continue
        seen.games += 1
        period = month(view.ended_ms)
        if not seen.periods or seen.periods[-1] != period:
            seen.periods.append(period)
        me = view.side(color)
        if seen.name is None and me.name:
            seen.name = me.name
        reason = exclusion_reason(view, color, count_provisional=count_provisional)
        if reason is None:
            # exclusion_reason() let it through: a finished game against a rated opponent.
            rating = view.side(other(color)).rating
            halves = score_halves(view.result, color)
            assert rating is not None and halves is not None
            seen.counted.append(CountedGame(period, rating, halves))
        else:
            seen.excluded.setdefault(period, Counter())[reason] += 1
        seen.line.add(view, color)
    return seen


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
    seen = _walk(rows, uid, count_provisional=settings.count_provisional)
    results = replay(seen.counted, settings.engine(), periods=sorted(set(seen.periods)))
    by_month = monthly_last(seen.line.points)
    period_rows: list[PeriodRow] = []
    last_lichess: int | None = None
    for r in results:
        last_lichess = by_month.get(r.period, last_lichess)
        period_rows.append(PeriodRow(r, dict(seen.excluded.get(r.period, {})), last_lichess))

    def load_games() -> list[Selected]:
        games = list(queries.player_games(store, uid, perf))
        selected = select_games(games, uid, perf, count_provisional=settings.count_provisional)
        selected.sort(key=lambda s: s.period)  # stable: end order within a month
        return selected

    return ReplayReport(
        player=seen.name or uid,
        user_id=uid,
        perf=perf,
        settings=settings,
        periods=period_rows,
        games=LazySelected(seen.games, load_games),
        lichess=seen.line.points,
        rating_history=queries.rating_history(store, uid, perf),
    )
