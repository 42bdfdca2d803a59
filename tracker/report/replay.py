"""A player's replay: stored games → selection → the pure FIDE engine → one report.

This is where the layers meet: the store gives the player's games of a perf, the selection
says which count (and why the others do not), the engine replays the counted ones as monthly
rating periods, and the real Lichess line is put beside it. The CLI (``tracker replay``) and
the dashboard both show a :class:`ReplayReport`; neither computes anything of its own, and
no rating rule is computed here either: K for the next period and each game's PD and ΔR come
from the engine (:mod:`tracker.fide`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from tracker.core.errors import TrackerError
from tracker.core.exact import points, shown
from tracker.core.perfs import perf_key
from tracker.fide import PeriodResult, game_expected, rated_in_chapter
from tracker.fide.rules import round_half_away
from tracker.fide.scale import Conversion, ScaleModel, convert, models_for
from tracker.fide.scale import model as scale_model
from tracker.report.calibration import club_scale_model, is_club_scale
from tracker.report.lichess_line import LichessPoint
from tracker.report.replay_pass import LazyList, LazySelected
from tracker.report.scale_runs import report_replays
from tracker.report.selection import FUTURE, Selected, select_games
from tracker.report.settings import (
    ALL_MODELS,
    LICHESS_SCALE,
    ResolvedSettings,
    default_scale,
    get_settings,
    validate_settings,
)
from tracker.store import queries
from tracker.store.db import Store
from tracker.store.players import SettingsRow

#: The reason a counted game is left out on a FIDE scale: the model gives its opponent no
#: FIDE rating (below the model's range, or below FIDE's old floor of 1000).
BELOW_MODEL: Final = "opponent below the model's range"
#: The reason a game is left out by the rapid & blitz chapter (docs/rules.md §10).
NOT_RATED_600: Final = "not rated: 600-point rule"


class NoGamesError(TrackerError, LookupError):
    """The player has no games in that perf (one-line message naming the perfs they have)."""


class ScaleError(TrackerError, ValueError):
    """A scale that cannot replay this perf (one line naming the models that can; exit 2).
    ``scale``: the scale refused."""

    exit_code = 2

    def __init__(self, message: str, scale: str = "") -> None:
        super().__init__(message)
        self.scale = scale


#: A real FIDE rating list: ``(month "YYYY-MM", rating points)`` entries, oldest first, each
#: in force from its month until the next entry (a month without an entry keeps the last).
RealLine = Sequence[tuple[str, int]]


@dataclass(frozen=True, slots=True)
class Band:
    """``rating_after`` of one period under every model of a ``--scale all`` replay with two
    models or more (one covering model is the answer itself: no band).

    ``models``: model key → rating after the period (``None`` = unrated under that model);
    ``min``/``median``/``max`` over the rated ones (``None`` when none is rated). The median
    of an even count is the mean of the middle two, so it may end in .5 (exact Fraction).
    ``results``: model key → that model's whole period (K, rating before, note…).
    """

    models: dict[str, int | None]
    min: int | None
    median: Fraction | None
    max: int | None
    results: Mapping[str, PeriodResult] = field(default_factory=dict)


def median(values: Iterable[int | Fraction | Decimal | None]) -> Fraction | None:
    """The median of the values that are not ``None`` (the mean of the middle two for an even
    count, exact), ``None`` when there are none."""
    known = sorted(Fraction(v) for v in values if v is not None)
    if not known:
        return None
    mid = len(known) // 2
    return known[mid] if len(known) % 2 else (known[mid - 1] + known[mid]) / 2


def band_of(models: dict[str, int | None],
            results: Mapping[str, PeriodResult] | None = None) -> Band:
    """The band of one period's ratings by model (see :class:`Band`)."""
    rated = sorted(r for r in models.values() if r is not None)
    if not rated:
        return Band(models, None, None, None, dict(results or {}))
    return Band(models, rated[0], median(rated), rated[-1], dict(results or {}))


def whole(x: Fraction | None) -> int | Fraction | None:
    """An exact rating as an ``int`` when it is whole (``1499``), else the Fraction (``3299/2``
    is 1649.5); ``None`` stays ``None``."""
    if x is None:
        return None
    return x.numerator if x.denominator == 1 else x


@dataclass(frozen=True, slots=True)
class PeriodRow:
    """One rating period of a report: the engine's result plus what the selection and the
    real Lichess line add (games left out by reason, the Lichess rating at the month's end).

    ``band``: with ``--scale all``, every model's ``rating_after`` (else ``None``).
    ``fide_real``: with a real FIDE line, the real rating in force from the next month (the
    list that follows this period, as ``rating_after`` is in force from the next month);
    ``None`` without one or before its first list.
    """

    result: PeriodResult
    excluded: dict[str, int]
    lichess_rating: int | None
    band: Band | None = None
    fide_real: int | None = None

    @property
    def period(self) -> str:
        return self.result.period

    # The answer of the period: with several models their median (after, before, change,
    # performance, expected score; K where they agree), else the one replay's own figures.

    @property
    def banded(self) -> bool:
        """True when the period's figures are the median of several models."""
        return self.band is not None and len(self.band.results) > 1

    def _median_of(self, name: str) -> int | Fraction | None:
        assert self.band is not None
        return whole(median(getattr(r, name) for r in self.band.results.values()))

    @property
    def rating_after(self) -> int | Fraction | None:
        """The rating in force from the next month: the models' median (may end in .5) or
        the replay's own; ``None`` = unrated (under every model)."""
        if self.band is not None and self.banded:
            return whole(self.band.median)
        return self.result.rating_after

    @property
    def rating_before(self) -> int | Fraction | None:
        """The rating in force during the month (the models' median with several)."""
        return self._median_of("rating_before") if self.banded else self.result.rating_before

    @property
    def change(self) -> Fraction | Decimal | None:
        """The month's change: ``K × ΣΔR`` unrounded, or with several models the change of
        their median (``after − before``, exact; ``None`` unless both are rated)."""
        if not self.banded:
            return self.result.change
        before, after = self.rating_before, self.rating_after
        if before is None or after is None:
            return None
        return Fraction(after) - Fraction(before)

    @property
    def k_range(self) -> tuple[int, int] | None:
        """The lowest and highest K of the rated models (one replay: its K twice), ``None``
        while unrated."""
        ks = ([r.k for r in self.band.results.values()] if self.band is not None and self.banded
              else [self.result.k])
        known = [k for k in ks if k is not None]
        return (min(known), max(known)) if known else None

    @property
    def k(self) -> int | None:
        """K of the month where the models agree (or the one replay's), else ``None`` (their
        range: :attr:`k_range`)."""
        ks = self.k_range
        return ks[0] if ks is not None and ks[0] == ks[1] else None

    @property
    def expected_score(self) -> Fraction | Decimal | None:
        """Σ PD (the models' median with several)."""
        if not self.banded:
            return self.result.expected_score
        m = self._median_of("expected_score")
        return None if m is None else Fraction(m)

    @property
    def performance(self) -> int | Fraction | None:
        """The performance rating of the month (the models' median with several)."""
        return self._median_of("performance") if self.banded else self.result.performance

    @property
    def note(self) -> str:
        """What happened: the engine's sentence, or with several models the sentence they
        share, else each model's."""
        if self.band is None or not self.banded:
            return self.result.note
        notes = {key: r.note for key, r in self.band.results.items()}
        if len(set(notes.values())) == 1:
            return next(iter(notes.values()))
        after = self.rating_after
        if self.rating_before is None and after is not None:
            said = round_half_away(after)  # whole, as FIDE publishes it
            each = ", ".join(f"{key} {'unrated' if r is None else r}"
                             for key, r in self.band.models.items())
            return f"initial rating {said} published (the models' median: {each})"
        return "; ".join(f"{key}: {note}" for key, note in notes.items())

    @property
    def gap(self) -> int | Fraction | None:
        """The honest measure: hypothetical − real (``rating_after − fide_real``, the
        answer's: with several models their median's), rating points, may end in .5;
        ``None`` unless both exist."""
        after = self.rating_after
        if after is None or self.fide_real is None:
            return None
        return whole(Fraction(after) - self.fide_real)


@dataclass(frozen=True, slots=True)
class GameDetail:
    """One game of a period as the Games page shows it.

    ``expected`` (PD) and ``delta`` (ΔR = score − PD) are set only for counted games of a
    rated period. ``score`` in points, ``None`` for an unfinished game. ``opponent_rating``:
    the opponent's rating on the replay's scale (the Lichess rating on the Lichess scale;
    ``None`` when the model cannot place it or it is unknown). ``scale``: the scale model
    whose replay PD, ΔR and the opponent's rating come from (with several models, one of
    them: the first unless asked otherwise), ``"lichess"`` on the Lichess scale.
    """

    selected: Selected
    score: Fraction | None
    expected: Fraction | Decimal | None
    delta: Fraction | Decimal | None
    opponent_rating: int | None = None
    scale: str = "lichess"


@dataclass
class ReplayReport:
    """Everything about one player's replay in one perf.

    ``periods``: one row per month with games of the perf (counted or not), oldest first.
    ``games``: every game of the perf with its period and reason (read from the store on
    first use). ``lichess``: the real Lichess rating after each rated game.
    ``scale``: ``lichess``, a model key or ``all``; ``model``: the model the periods' figures
    are on (``None`` on the Lichess scale; with ``all``, the first model covering the perf,
    the others in each period's ``band``); ``models``: the models replayed.
    ``conversions``: the player's current Lichess rating through each model covering the perf
    (empty on the Lichess scale). ``start_ratings``: per model, the start rating the engine
    used (a Lichess start rating mapped; ``None`` = unrated). ``real``: the real FIDE list
    compared (empty: none) and ``real_list`` which list it is (``standard``, ``rapid``,
    ``blitz``; ``None`` for a list given by the caller).
    """

    player: str
    user_id: str
    perf: str
    settings: ResolvedSettings
    periods: list[PeriodRow]
    games: Sequence[Selected]
    lichess: Sequence[LichessPoint]
    rating_history: list[tuple[date, int]] = field(default_factory=list)
    scale: str = LICHESS_SCALE
    model: ScaleModel | None = None
    models: tuple[ScaleModel, ...] = ()
    conversions: dict[str, Conversion] = field(default_factory=dict)
    start_ratings: dict[str, int | None] = field(default_factory=dict)
    real: RealLine = ()
    real_list: str | None = None
    scale_note: str | None = None

    @property
    def counted(self) -> int:
        return sum(r.result.games for r in self.periods)

    @property
    def current_rating(self) -> int | Fraction | None:
        """The FIDE-style rating in force now (after the last period), ``None`` = unrated:
        the answer, so with several models their median (a Fraction when it ends in .5)."""
        return self.periods[-1].rating_after if self.periods else None

    @property
    def banded(self) -> bool:
        """True when the figures are the median of several models (``--scale all``)."""
        return len(self.models) > 1 and self.scale == ALL_MODELS

    @property
    def answer_note(self) -> str | None:
        """What the figures are when they are the models' median (``None`` otherwise)."""
        if not self.banded:
            return None
        return (f"the median of the models ({', '.join(m.key for m in self.models)}): "
                "rating_before, rating_after, change, expected_score, performance and gap "
                "may end in .5; k is null where the models differ (band.k_min, band.k_max); "
                "each model's own rating in band.models")

    @property
    def current_band(self) -> Band | None:
        """The last period's band under every model (``--scale all``), else ``None``: with all
        models the figure to quote is its median, the band around it."""
        return self.periods[-1].band if self.periods else None

    @property
    def current_lichess(self) -> int | None:
        return self.lichess[-1].rating if self.lichess else None

    @property
    def scale_label(self) -> str:
        """How the figures are labelled: ``"Lichess scale"``, ``"FIDE scale (lebowitz)"``,
        ``"FIDE scale (all models: lebowitz, mathtuition)"``."""
        if self.scale == LICHESS_SCALE:
            return "Lichess scale"
        if self.scale == ALL_MODELS and len(self.models) == 1:
            return f"FIDE scale ({self.models[0].key}, the one model covering {self.perf})"
        if self.scale == ALL_MODELS:
            return f"FIDE scale (all models: {', '.join(m.key for m in self.models)})"
        if is_club_scale(self.scale) and self.model is not None:
            return f"FIDE scale ({self.model.name})"
        return f"FIDE scale ({self.scale})"

    @property
    def mean_abs_gap(self) -> Fraction | None:
        """The mean of ``|hypothetical − real|`` over the periods where both exist (rating
        points, exact), ``None`` without an overlap."""
        gaps = [abs(Fraction(g)) for r in self.periods if (g := r.gap) is not None]
        return sum(gaps, Fraction(0)) / len(gaps) if gaps else None

    @property
    def mean_gap(self) -> Fraction | None:
        """The mean of ``hypothetical − real`` (signed: below 0, the estimate is under the real
        rating) over the periods where both exist, exact; ``None`` without an overlap."""
        gaps = [Fraction(g) for r in self.periods if (g := r.gap) is not None]
        return sum(gaps, Fraction(0)) / len(gaps) if gaps else None

    @property
    def real_now(self) -> int | None:
        """The real FIDE rating of the compared list now: its latest entry (``None``
        without a list)."""
        return max(self.real)[1] if self.real else None

    @property
    def gap_periods(self) -> int:
        """How many periods have both a hypothetical and a real rating (the gap's months)."""
        return sum(1 for r in self.periods if r.gap is not None)

    def unrated_reason(self) -> str | None:
        """Why the player is unrated now, or ``None`` if rated."""
        if self.current_rating is not None:
            return None
        if not self.periods or self.counted == 0:
            return "no counted games yet"
        return self.periods[-1].note

    def next_k(self) -> int | None:
        """K for the next period before the 700 rule (§8.3.3), ``None`` while unrated: the
        engine's :attr:`~tracker.fide.PeriodResult.next_k` of the last period."""
        return self.periods[-1].result.next_k if self.periods else None

    def game_model(self, key: str | None = None) -> ScaleModel | None:
        """The model whose scale the Games page shows: ``key`` (one of :attr:`models`), else
        the first model; ``None`` on the Lichess scale."""
        if key is not None:
            return next((m for m in self.models if m.key == key), self.model)
        return self.model

    def on_scale(self, lichess: int | None, model: str | None = None) -> int | None:
        """A Lichess rating in this perf on the report's scale, or on ``model``'s (``None``:
        unknown, or the model cannot place it)."""
        m = self.game_model(model)
        if lichess is None or m is None:
            return lichess
        return convert(m, self.perf, lichess).rating

    def period_games(self, period: str, model: str | None = None) -> list[GameDetail]:
        """The games of one period with PD and ΔR (from the engine) for the counted ones, on
        the report's scale or ``model``'s (with several models: each game's PD exists under
        one model's replay, the first unless ``model`` names another)."""
        row = next((r for r in self.periods if r.period == period), None)
        m = self.game_model(model)
        rating = row.result.rating_before if row else None
        if row is not None and row.band is not None and m is not None and m.key in row.band.results:
            rating = row.band.results[m.key].rating_before
        engine = self.settings.engine()
        out = []
        for sel in self.games:
            if sel.period != period:
                continue
            score = Fraction(sel.score_halves, 2) if sel.score_halves is not None else None
            pd = delta = None
            opponent = self.on_scale(sel.opponent_rating, model)
            if (sel.counts and rating is not None and opponent is not None
                    and sel.score_halves is not None):
                scored = game_expected(rating, opponent, sel.score_halves, engine, period=period)
                if scored is not None:
                    pd, delta = scored
            out.append(GameDetail(sel, score, pd, delta, opponent,
                                  m.key if m is not None else "lichess"))
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``tracker replay --json`` object (:func:`report_json`; written as text by
        :func:`tracker.report.presentation.dumps`)."""
        return report_json(self)


def scale_models(scale: str, perf: str) -> tuple[ScaleModel, ...]:
    """The models a ``scale`` replays ``perf`` under: none for ``lichess``, one for a model
    key, every model covering the perf for ``all``. Raises ScaleError when that is none (a
    model not covering the perf, or ``all`` for a perf no model covers)."""
    if scale == LICHESS_SCALE:
        return ()
    covering = models_for(perf)
    names = ", ".join(m.key for m in covering)
    if not covering:
        raise ScaleError(f"no scale model covers {perf}: use --scale lichess", scale)
    if scale == ALL_MODELS:
        return covering
    m = scale_model(scale)
    if not m.covers(perf):
        raise ScaleError(f"{m.key} does not cover {perf}; models that do: {names}", scale)
    return (m,)


def _in_force_after(real: RealLine, periods: list[str]) -> dict[str, int]:
    """For each period, the real rating in force in the month after it (see PeriodRow)."""
    entries = sorted(real)
    out: dict[str, int] = {}
    i, current = 0, None
    for p in periods:
        y, m = int(p[:4]), int(p[5:])
        following = f"{y + (m == 12):04d}-{m % 12 + 1:02d}"
        while i < len(entries) and entries[i][0] <= following:
            current = entries[i][1]
            i += 1
        if current is not None:
            out[p] = current
    return out


@dataclass(frozen=True, slots=True)
class ReplayOptions(SettingsRow):
    """What one replay asks for over the player's saved settings: the flags of ``tracker
    replay``, the settings' fields (:class:`~tracker.store.players.SettingsRow`'s, each
    ``None``: the saved setting, else the default; see :func:`build_report`), and a real FIDE
    list to compare with."""

    real: RealLine | None = None
    real_list: str | None = None


def build_report(store: Store, username: str, perf: str,
                 options: ReplayOptions | None = None) -> ReplayReport:
    """Replay ``username``'s games of ``perf`` with their saved settings, ``options`` over
    them.

    ``scale``: ``lichess`` (the raw numbers), a model key (every opponent's rating mapped to
    the FIDE scale before the engine), or ``all`` (every model covering the perf, as a band).
    ``real``: a real FIDE list to compare with (see :data:`RealLine`), ``real_list`` its name
    (``standard``, ``rapid``, ``blitz``; ``None``: a list given by the caller).

    Raises UnknownPlayerError (no games of that player), NoGamesError (none in that perf),
    PerfError (an unknown perf or a variant), SettingsError (a flag out of range), ScaleError
    (a model that does not cover the perf).
    """
    o = options or ReplayOptions()
    perf = perf_key(perf)
    uid = queries.resolve_player(store, username)
    settings = validate_settings(
        get_settings(store, uid).override(
            start_rating=o.start_rating, birth_year=o.birth_year, rules=o.rules,
            expected=o.expected, count_provisional=o.count_provisional, scale=o.scale,
            start_scale=o.start_scale, chapter=o.chapter,
        )
    ).resolved(perf)
    if is_club_scale(settings.scale):  # a club model: data from the store, handed on as is
        models: tuple[ScaleModel, ...] = (club_scale_model(store, settings.scale, perf),)
        scale_note: str | None = None
    else:
        models, settings, scale_note = _models_of(settings, perf, given=o.scale is not None)
    real = tuple(o.real or ())
    # The pass and its replay on each scale: saved ones while no game was written since.
    seen, runs = report_replays(store, uid, perf, settings, models)
    if seen.rows == 0:
        have = ", ".join(f"{p.perf} ({p.games})" for p in queries.player_perfs(store, uid))
        raise NoGamesError(f"{username} has no {perf} games; perfs with games: {have}")
    months = sorted(set(seen.periods))
    main = runs[0]
    by_month = seen.monthly_last()
    real_after = _in_force_after(real, months)
    period_rows: list[PeriodRow] = []
    last_lichess: int | None = None
    for i, r in enumerate(main.results):
        last_lichess = by_month.get(r.period, last_lichess)
        excluded = dict(seen.excluded.get(r.period, {}))
        if main.below.get(r.period):
            excluded[BELOW_MODEL] = main.below[r.period]
        if r.not_rated:
            excluded[NOT_RATED_600] = r.not_rated
        band = None
        if settings.scale == ALL_MODELS and len(models) > 1:
            band = band_of({m.key: run.results[i].rating_after for m, run in zip(
                models, runs, strict=True)}, {m.key: run.results[i] for m, run in zip(
                    models, runs, strict=True)})
        period_rows.append(PeriodRow(r, excluded, last_lichess, band,
                                     real_after.get(r.period)))

    first = models[0] if models else None
    in_force = {r.period: r.result.rating_before for r in period_rows}

    def load_games() -> list[Selected]:
        games = list(queries.player_games(store, uid, perf))
        selected = select_games(games, uid, perf, count_provisional=settings.count_provisional)
        if months:  # a game dated in the future is listed where the pass counted it
            selected = [replace(s, period=months[-1]) if s.reason == FUTURE else s
                        for s in selected]
        selected.sort(key=lambda s: s.period)  # stable: end order within a month
        return [_on_scale_reason(s, first, perf, in_force.get(s.period), settings)
                for s in selected]

    line = seen.line
    current = line.ratings[-1] if len(line) else None
    return ReplayReport(
        player=seen.name or uid,
        user_id=uid,
        perf=perf,
        settings=settings,
        periods=period_rows,
        games=LazySelected(seen.games, load_games),
        lichess=LazyList(len(line), line.points, line.last),
        rating_history=queries.rating_history(store, uid, perf),
        scale=settings.scale,
        model=first,
        models=models,
        conversions={m.key: convert(m, perf, current) for m in (*models_for(perf), *models)}
        if models and current is not None else {},
        start_ratings={m.key: run.start_rating for m, run in zip(models, runs, strict=True)}
        if settings.start_rating is not None and models else {},
        real=real,
        real_list=o.real_list if real else None,
        scale_note=scale_note,
    )


def saved_scale_note(saved: str, perf: str) -> str:
    """What a replay says when the player's saved scale cannot replay ``perf`` and the perf's
    default is shown instead (the CLI and the dashboard alike)."""
    fallback = default_scale(perf)
    shown_instead = "all models" if fallback == ALL_MODELS else "the Lichess scale"
    return (f"your saved scale {saved} (tracker settings) does not cover {perf}: "
            f"{shown_instead} shown instead")


def _models_of(settings: ResolvedSettings, perf: str, *, given: bool
               ) -> tuple[tuple[ScaleModel, ...], ResolvedSettings, str | None]:
    """The models of the settings' scale for ``perf``, the settings and a note for people.

    One rule for the CLI and the dashboard: a scale given for this replay (``--scale``) that
    cannot replay the perf is a ScaleError (exit 2); a *saved* scale that cannot is replaced
    by the perf's default (:func:`~tracker.report.settings.default_scale`) and the note says so. The
    note also says when the default is the Lichess scale because no model covers the perf.
    """
    try:
        models = scale_models(settings.scale, perf)
    except ScaleError:
        if given:
            raise
        note = saved_scale_note(settings.scale, perf)
        settings = replace(settings, scale=default_scale(perf))
        return scale_models(settings.scale, perf), settings, note
    if settings.scale == LICHESS_SCALE and not models_for(perf):
        return models, settings, f"no scale model covers {perf}: its figures stay on the " \
            "Lichess scale, not FIDE's"
    return models, settings, None


def _on_scale_reason(sel: Selected, model: ScaleModel | None, perf: str, rating: int | None,
                     settings: ResolvedSettings) -> Selected:
    """A counted game's reason on the report's scale: left out when the model cannot place the
    opponent or the chapter does not rate it (rating: the player's rating in force)."""
    opponent = sel.opponent_rating
    if sel.reason is not None or opponent is None:
        return sel
    if model is not None:
        mapped = convert(model, perf, opponent).rating
        if mapped is None:
            return replace(sel, reason=BELOW_MODEL)
        opponent = mapped
    if rating is not None and not rated_in_chapter(rating, opponent, chapter=settings.chapter,
                                                   period=sel.period):
        return replace(sel, reason=NOT_RATED_600)
    return sel


# The ``tracker replay --json`` object: exact numbers (Decimal, int), no text yet.

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


def rating_json(x: int | Fraction | None) -> int | Decimal | None:
    """A rating as JSON shows it: whole, or ending in .5 (a median of two models)."""
    return x if x is None or isinstance(x, int) else points(x)


def period_json(row: PeriodRow) -> dict[str, Any]:
    """One period with exactly :data:`PERIOD_KEYS` (Decimals for exact numbers): the answer's
    figures (with several models their median, see :class:`PeriodRow`)."""
    r = row.result
    return {
        "period": r.period,
        "games": r.games,
        "excluded": dict(sorted(row.excluded.items())),
        "score": points(r.score),
        "expected_score": shown(row.expected_score),
        "k": row.k,
        "rating_before": rating_json(row.rating_before),
        "change": shown(row.change),
        "rating_after": rating_json(row.rating_after),
        "performance": rating_json(row.performance),
        "lichess_rating": row.lichess_rating,
    }


def band_json(band: Band) -> dict[str, Any]:
    """One period's band: ``min``, ``median`` (may end in .5), ``max``, ``models`` (each
    model's rating after), ``k_min``/``k_max`` (the models' K, ``null`` while unrated)."""
    ks = [r.k for r in band.results.values() if r.k is not None]
    return {
        "min": band.min,
        "median": None if band.median is None else points(band.median),
        "max": band.max,
        "models": dict(band.models),
        "k_min": min(ks) if ks else None,
        "k_max": max(ks) if ks else None,
    }


def conversion_json(conversions: Mapping[str, Conversion]) -> dict[str, Any]:
    """Conversions by model key as JSON: the Lichess rating, the model's own output and the
    FIDE rating on today's scale (``null`` = unrated), per model."""
    return {k: {"lichess": c.lichess, "model_output": c.output, "fide": c.rating}
            for k, c in conversions.items()}


def report_json(report: ReplayReport) -> dict[str, Any]:
    """The ``tracker replay --json`` object (numbers exact: see :func:`dumps`).

    With several models (``--scale all``, the default) the periods' figures are the models'
    median (``answer``: ``"median"``, ``answer_note`` says which keys may end in .5).
    On the Lichess scale without a real FIDE line it is the original contract: ``player``,
    ``perf``, ``rules``, ``expected``, ``periods`` (each with exactly :data:`PERIOD_KEYS`).
    On a FIDE scale (or with a real FIDE line) it also has ``scale``, ``scale_label``,
    ``chapter``; with a model, ``model`` (whose figures the periods hold), ``models`` and
    ``conversions`` (the current Lichess rating through each model covering the perf); with
    ``--scale all``, each period's ``band``; with a real FIDE line, each period's ``fide_real``
    and ``gap`` and the top-level ``mean_abs_gap``.
    """
    out: dict[str, Any] = {
        "player": report.player,
        "perf": report.perf,
        "rules": report.settings.rules,
        "expected": report.settings.expected,
    }
    if report.scale == "lichess" and not report.real:
        out["periods"] = [period_json(r) for r in report.periods]
        return out
    out["scale"] = report.scale
    out["scale_label"] = report.scale_label
    out["chapter"] = report.settings.chapter
    if report.model is not None:
        out["model"] = report.model.key
        out["models"] = [m.key for m in report.models]
        out["conversions"] = conversion_json(report.conversions)
    if report.answer_note is not None:
        out["answer"] = "median"
        out["answer_note"] = report.answer_note
    if report.scale_note is not None:
        out["scale_note"] = report.scale_note
    if report.start_ratings:
        out["start_ratings"] = dict(report.start_ratings)
    periods = []
    for row in report.periods:
        j = period_json(row)
        if row.band is not None:
            j["band"] = band_json(row.band)
        if report.real:
            j["fide_real"] = row.fide_real
            j["gap"] = rating_json(row.gap)
        periods.append(j)
    out["periods"] = periods
    if report.real:
        out["fide_list"] = report.real_list
        out["fide_real_now"] = report.real_now
        out["mean_abs_gap"] = shown(report.mean_abs_gap)
        out["mean_gap"] = shown(report.mean_gap)
    return out
