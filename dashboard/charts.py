"""Figure builders for the dashboard: report in, plotly figure out.

Pure: no Streamlit, no database, nothing computed that the report does not already hold. The
helpers that shape the report for a chart (:func:`fide_steps`, :func:`unrated_stretches`,
:func:`lichess_segments`, :func:`unpublished_marks`, :func:`rating_range`,
:func:`performance_marks`) are exposed so tests can pin them without drawing anything.

What the chart promises (each is a test): the y-axis fits the rating lines, so a performance
rating of a month with few games (a 1-game month can give ±800) is drawn at the edge as a
clipped marker with its value on hover instead of squashing the lines; the Lichess line breaks
over a month or more without games; a single Lichess point is a marker; a rating computed but
not published (a fall below 1400, a pool below 1400) is a labelled marker at its value.

Times on the chart are naive datetimes that mean UTC: plotly.js has no time zones, and a rating
period is a UTC calendar month (spec §4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tracker import api
from tracker.api import LichessPoint, PeriodRow, ReplayReport

LICHESS_COLOR: Final = "#4a7fc1"
FIDE_COLOR: Final = "#d9480f"
COUNTED_COLOR: Final = "#8a9bb0"
LEFT_OUT_COLOR: Final = "#d8dee6"
UNRATED_FILL: Final = "#9aa5b1"
REAL_FIDE_COLORS: Final = {"standard": "#2b8a3e", "rapid": "#5c940d", "blitz": "#66a80f"}
#: Each model's own line (hidden until clicked in the legend).
MODEL_COLORS: Final = ("#862e9c", "#e8590c", "#1098ad", "#5f3dc4")
#: The plot's own height (pixels) and the legend under it: entries per row, a row's height.
PLOT_HEIGHT: Final = 560
LEGEND_PER_ROW: Final = 2
LEGEND_ROW_HEIGHT: Final = 24

#: Trace names; tests and the browser check look for them.
LICHESS_NAME: Final = "Lichess rating after each game"
FIDE_NAME: Final = "FIDE-style rating in force (Lichess scale)"
BAND_NAME: Final = "Band of the models (lowest–highest)"
LICHESS_SCALE: Final = "Lichess scale"
PERFORMANCE_NAME: Final = "Performance rating of the month"
UNRATED_NAME: Final = "Unrated (no FIDE-style rating)"
COUNTED_NAME: Final = "Games counted"
LEFT_OUT_NAME: Final = "Games left out"


def fide_name(scale_label: str = LICHESS_SCALE) -> str:
    """The FIDE-style line's legend name, with the scale its figures are on:
    ``"FIDE-style rating in force (FIDE scale (lebowitz))"``."""
    return f"FIDE-style rating in force ({scale_label})"


#: The legend name of the answer's line with several models: their median, bold (the page
#: says the scale in full).
MEDIAN_NAME: Final = "FIDE-style rating in force: the models' median"


def model_name(key: str) -> str:
    """The legend name of one model's own line (hidden until its legend entry is clicked)."""
    return f"{key} alone"


def scale_label(report: ReplayReport) -> str:
    """The scale the report's FIDE-style figures are on (``"Lichess scale"`` when the report
    has no scale)."""
    return str(getattr(report, "scale_label", LICHESS_SCALE))


def line_name(report: ReplayReport) -> str:
    """The legend name of the bold FIDE-style line: the answer, with several models their
    median (:data:`MEDIAN_NAME`), else :func:`fide_name` on the report's scale, short (the
    page says it in full): ``"Lichess scale"``, ``"FIDE scale (lebowitz)"``."""
    if getattr(report, "banded", False):
        return MEDIAN_NAME
    models = list(getattr(report, "models", ()))
    if getattr(report, "scale", None) == "all" and len(models) == 1:
        return fide_name(f"FIDE scale ({models[0].key})")
    return fide_name(scale_label(report))


def band_steps(periods: Sequence[PeriodRow], end: datetime
               ) -> tuple[list[datetime], list[float | None], list[float | None],
                          list[float | None]] | None:
    """x and the models' lowest, median and highest rating in force (``--scale all``), as step
    lines: each period's band is in force from the next month to the one after; ``None``
    while no model rates the player. ``None`` when the report has no band."""
    bands = [(row.period, getattr(row, "band", None)) for row in periods]
    if not any(b is not None for _, b in bands):
        return None
    xs: list[datetime] = []
    lows: list[float | None] = []
    mids: list[float | None] = []
    highs: list[float | None] = []
    for i, (period, band) in enumerate(bands):
        start = month_start(next_period(period))
        stop = month_start(next_period(bands[i + 1][0])) if i + 1 < len(bands) else end
        low = None if band is None or band.min is None else float(band.min)
        mid = None if band is None else _plain(band.median)  # whole, as FIDE prints it
        high = None if band is None or band.max is None else float(band.max)
        xs += [start, stop]
        lows += [low, low]
        mids += [mid, mid]
        highs += [high, high]
    return xs, lows, mids, highs


def real_fide_name(kind: str) -> str:
    """The legend name of a real FIDE line: ``"Real FIDE rating (standard list)"``."""
    return f"Real FIDE rating ({kind} list)"

#: Bars are drawn across most of their month, centred on its middle.
_BAR_WIDTH_MS: Final = 24 * 86_400_000
_MID_MONTH: Final = timedelta(days=15, hours=12)

STARTED_UNRATED: Final = "started unrated: no FIDE rating yet"

#: The Lichess line breaks where two games are further apart than this (no games for a month).
LINE_GAP: Final = timedelta(days=31)
#: A performance rating over fewer games than this does not stretch the y-axis (FIDE needs 5
#: games for an initial rating; one game gives a performance of opponent ± 800).
MIN_PERFORMANCE_GAMES: Final = 5
#: Room above and below the rating lines, as a share of their span (at least ``_MIN_PAD``
#: points): every plotted point stays inside the axes with room for its marker.
RANGE_PAD: Final = 0.08
_MIN_PAD: Final = 25
#: Room above the plot (pixels) for plotly's toolbar, so that it never covers the data.
TOOLBAR_ROOM: Final = 40


def month_start(period: str) -> datetime:
    """``"YYYY-MM"`` → the first instant of that month (naive, meaning UTC)."""
    year, month = (int(x) for x in period.split("-"))
    return datetime(year, month, 1)


def next_period(period: str) -> str:
    """The month after ``"YYYY-MM"``."""
    year, month = (int(x) for x in period.split("-"))
    return f"{year + month // 12:04d}-{month % 12 + 1:02d}"


@dataclass(frozen=True, slots=True)
class RatingChange:
    """From ``at`` on, the FIDE-style rating in force is ``rating`` (``None`` = unrated);
    ``note`` is the engine's sentence for the period that ended at ``at`` (``""`` for the
    start of the first period). A float only for a median ending in .5."""

    at: datetime
    rating: int | float | None
    note: str


#: One period as a step line reads it: (period, rating before, rating after, note).
Step = tuple[str, "int | float | None", "int | float | None", str]


def _plain(x: object) -> int | float | None:
    """A rating for plotly, whole as FIDE publishes it (a median ending in .5 rounded half
    up, :func:`tracker.api.whole_rating`), ``None`` for none."""
    if x is None:
        return None
    if isinstance(x, int):
        return x
    return api.whole_rating(x)  # type: ignore[arg-type]  # a Fraction or Decimal rating


def answer_steps(periods: Sequence[PeriodRow]) -> list[Step]:
    """The answer's periods as steps: with several models their median's figures."""
    return [(row.period, _plain(row.rating_before), _plain(row.rating_after), row.note)
            for row in periods]


def model_steps(periods: Sequence[PeriodRow], key: str) -> list[Step]:
    """One model's own periods as steps (read from each period's band)."""
    out: list[Step] = []
    for row in periods:
        r = row.band.results.get(key) if row.band is not None else None
        if r is not None:
            out.append((r.period, r.rating_before, r.rating_after, r.note))
    return out


@dataclass(frozen=True, slots=True)
class UnratedStretch:
    """A stretch of time without a FIDE-style rating.

    ``start``/``end``: month starts (naive UTC); ``end`` is ``None`` while still unrated.
    ``reason``: why it began (the fall below 1400, or the start of the history).
    ``outcome``: how it ended (``"initial rating 1639 published"``) or, when still open, the
    latest status (``"unrated: 3 games in pool (5 needed)"``).
    """

    start: datetime
    end: datetime | None
    reason: str
    outcome: str

    def label(self) -> str:
        """One line for people: ``"2025-11 → now: fell to 1361, below 1400 …"``."""
        start = f"{self.start:%Y-%m}"
        if self.end is None:
            span = f"{start} → now"
        else:
            last = self.end - timedelta(days=1)
            span = start if f"{last:%Y-%m}" == start else f"{start} → {last:%Y-%m}"
        text = f"{span}: {self.reason}"
        if self.outcome and not self.outcome.startswith(self.reason):
            text += f" ({self.outcome})"
        return text


def rating_changes(periods: Sequence[PeriodRow] | Sequence[Step]) -> list[RatingChange]:
    """The moments the FIDE-style rating in force changes, oldest first.

    A period's ``rating_before`` is in force from its first day; its ``rating_after`` from the
    first day of the next month until the next period's start. Repeats are dropped. Periods
    are report rows (their answer, see :func:`answer_steps`) or steps.
    """
    out: list[RatingChange] = []
    steps = [p if isinstance(p, tuple) else answer_steps([p])[0] for p in periods]
    for period, before, after, after_note in steps:
        for at, rating, note in (
            (month_start(period), before, ""),
            (month_start(next_period(period)), after, after_note),
        ):
            if out and out[-1].rating == rating:
                continue
            if out and out[-1].at == at:
                out[-1] = RatingChange(at, rating, note or out[-1].note)
            else:
                out.append(RatingChange(at, rating, note))
    return out


def chart_end(periods: Sequence[PeriodRow] | Sequence[Step]) -> datetime:
    """The right edge of the time axis: the end of the month after the last period, so the
    rating (or the unrated state) that period leads to is visible."""
    last = periods[-1]
    period = last[0] if isinstance(last, tuple) else last.period
    return month_start(next_period(next_period(period)))


def fide_steps(periods: Sequence[PeriodRow] | Sequence[Step]
               ) -> tuple[list[datetime], list[int | float | None]]:
    """x and y of the FIDE-style step line: horizontal while a rating is in force, a vertical
    jump at each change, ``None`` (a gap) while unrated. Ends at :func:`chart_end`."""
    xs: list[datetime] = []
    ys: list[int | float | None] = []
    previous: int | float | None = None
    for change in rating_changes(periods):
        if previous is not None:
            xs.append(change.at)
            ys.append(previous)
        xs.append(change.at)
        ys.append(change.rating)
        previous = change.rating
    if previous is not None and periods:
        xs.append(chart_end(periods))
        ys.append(previous)
    return xs, ys


def unrated_stretches(periods: Sequence[PeriodRow], current_note: str | None = None
                      ) -> list[UnratedStretch]:
    """The stretches without a FIDE-style rating, each with why it began and how it ended.

    ``current_note`` is the latest status for a stretch still open (the report's
    :meth:`~tracker.replaying.ReplayReport.unrated_reason`).
    """
    out: list[UnratedStretch] = []
    changes = rating_changes(periods)
    for i, change in enumerate(changes):
        if change.rating is not None:
            continue
        reason = STARTED_UNRATED if i == 0 else change.note.removesuffix(
            ": unrated from next period")
        if i + 1 < len(changes):
            end: datetime | None = changes[i + 1].at
            outcome = changes[i + 1].note
        else:
            end, outcome = None, current_note or ""
        out.append(UnratedStretch(change.at, end, reason, outcome))
    return out


@dataclass(frozen=True, slots=True)
class UnpublishedMark:
    """A rating the replay computed but did not publish: ``rating`` at ``at`` (the end of
    ``period``), with ``label`` for people (``"fell to 1240, below 1400: not published"``)."""

    at: datetime
    period: str
    rating: int
    label: str

    @property
    def short(self) -> str:
        """The label drawn beside the marker: ``"fell to 1240"``, ``"pool: 1246"``."""
        return self.label.split(",", 1)[0].replace("pool gives", "pool:")


def unpublished_marks(periods: Sequence[PeriodRow]) -> list[UnpublishedMark]:
    """The ratings computed in a period that ended below 1400 and so were not published.

    Read from :attr:`~tracker.fide.PeriodResult.unpublished` (the engine's number, never
    recomputed here).
    """
    out: list[UnpublishedMark] = []
    for row in periods:
        if getattr(row, "banded", False):
            continue  # a model's unpublished rating is not the median's
        r = row.result
        value = getattr(r, "unpublished", None)
        if value is None:
            continue
        fell = r.rating_before is not None
        label = (f"fell to {value}, below 1400: not published" if fell
                 else f"pool gives {value}, below 1400: not published")
        out.append(UnpublishedMark(month_start(next_period(r.period)), r.period, value, label))
    return out


def lichess_segments(points: Sequence[LichessPoint], gap: timedelta = LINE_GAP
                     ) -> tuple[list[datetime | None], list[int | None], list[LichessPoint]]:
    """x and y of the Lichess line with a break (``None``) wherever two games are more than
    ``gap`` apart, and the points left alone between two breaks (or the only point), which a
    line cannot show: they are drawn as markers."""
    xs: list[datetime | None] = []
    ys: list[int | None] = []
    alone: list[LichessPoint] = []
    start = 0
    for i, p in enumerate(points):
        if i and p.at - points[i - 1].at > gap:
            if i - start == 1:
                alone.append(points[start])
            xs.append(None)
            ys.append(None)
            start = i
        xs.append(p.at)
        ys.append(p.rating)
    if points and len(points) - start == 1:
        alone.append(points[start])
    return xs, ys, alone


#: A real FIDE list: ``{kind: [(month "YYYY-MM", rating in force), …]}`` (FIDE rating points).
RealLines = Mapping[str, Sequence[tuple[str, int]]]


def real_steps(months: Sequence[tuple[str, int]], start: str, end: datetime
               ) -> tuple[list[datetime], list[int]]:
    """x and y of a real FIDE step line within the chart: each month's rating from its first
    day to the next month's, from ``start`` (``"YYYY-MM"``) to ``end``."""
    xs: list[datetime] = []
    ys: list[int] = []
    for month, rating in months:
        at = month_start(month)
        if month < start or at >= end:
            continue
        xs += [at, month_start(next_period(month))]
        ys += [rating, rating]
    return xs, ys


def rating_range(report: ReplayReport, real: RealLines | None = None
                 ) -> tuple[float, float] | None:
    """The y-axis range: the rating lines (Lichess, FIDE-style in force, unpublished marks) and
    the performance ratings of months with at least :data:`MIN_PERFORMANCE_GAMES` games, with
    :data:`RANGE_PAD` of room. ``None`` when there is nothing to draw."""
    values: list[float] = [p.rating for p in report.lichess]
    for row in report.periods:
        r = row.result
        values += [v for x in (row.rating_before, row.rating_after)
                   if (v := _plain(x)) is not None]
        performance = _plain(row.performance)
        if performance is not None and r.games >= MIN_PERFORMANCE_GAMES:
            values.append(performance)
    values += [m.rating for m in unpublished_marks(report.periods)]
    if report.periods:
        band = band_steps(report.periods, chart_end(report.periods))
        if band is not None:
            values += [v for v in (*band[1], *band[3]) if v is not None]
    if real and report.periods:
        start, end = report.periods[0].period, chart_end(report.periods)
        for months in real.values():
            values += real_steps(months, start, end)[1]
    return padded_range(values)


def padded_range(values: Sequence[float]) -> tuple[float, float] | None:
    """A y-axis range holding ``values`` with :data:`RANGE_PAD` of room (at least
    ``_MIN_PAD`` points) above and below; ``None`` for no value."""
    if not values:
        return None
    low, high = min(values), max(values)
    pad = max((high - low) * RANGE_PAD, _MIN_PAD)
    return low - pad, high + pad


@dataclass(frozen=True, slots=True)
class PerformanceMark:
    """One month's performance marker: drawn at ``y`` (the value, or the axis edge when the
    value is off the range), ``clipped`` says which edge (``"above"``/``"below"``/``""``)."""

    at: datetime
    period: str
    value: int | float
    games: int
    y: float
    clipped: str


def performance_marks(periods: Sequence[PeriodRow], y_range: tuple[float, float] | None
                      ) -> list[PerformanceMark]:
    """The performance markers, those off the y-range put at its edge (2 % inside it)."""
    out: list[PerformanceMark] = []
    for row in periods:
        r = row.result
        performance = _plain(row.performance)
        if performance is None:
            continue
        y: float = performance
        clipped = ""
        if y_range is not None:
            low, high = y_range
            inset = (high - low) * 0.02
            if y > high:
                y, clipped = high - inset, "above"
            elif y < low:
                y, clipped = low + inset, "below"
        out.append(PerformanceMark(month_start(r.period) + _MID_MONTH, r.period,
                                   performance, r.games, y, clipped))
    return out


def _naive_utc(points: Sequence[datetime | None]) -> np.ndarray:
    """Times as naive UTC datetime64 (``None``, a line break, as NaT)."""
    return np.array([None if p is None else p.replace(tzinfo=None) for p in points],
                    dtype="datetime64[ms]")


def _unrated_shape(stretch: UnratedStretch, end: datetime) -> dict[str, object]:
    return {"type": "rect", "xref": "x", "yref": "y domain", "x0": stretch.start,
            "x1": stretch.end or end, "y0": 0, "y1": 1, "fillcolor": UNRATED_FILL,
            "opacity": 0.18, "line": {"width": 0}, "layer": "below"}


def _unrated_label(stretch: UnratedStretch, end: datetime) -> dict[str, object]:
    right = stretch.end or end
    return {"xref": "x", "yref": "y domain", "x": stretch.start + (right - stretch.start) / 2,
            "y": 0.01, "text": "unrated", "hovertext": stretch.label(), "textangle": -90,
            "xanchor": "center", "yanchor": "bottom", "showarrow": False,
            "font": {"size": 11, "color": "#52606d"}}


def overview_figure(report: ReplayReport, real: RealLines | None = None) -> go.Figure:
    """One chart, one time axis: the Lichess rating after each game (broken over gaps, single
    points as markers), the FIDE-style rating as a step line by period with unrated stretches
    shaded and explained and unpublished ratings marked, the performance rating per period as
    markers (clipped at the edge when off the range), and games per month as bars underneath.
    ``real``: the player's real FIDE lists (when a FIDE id is linked), each drawn as its own
    labelled step line over the months of the chart.
    """
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.76, 0.24],
                        vertical_spacing=0.04)
    periods = report.periods
    y_range = rating_range(report, real)
    if report.lichess:
        xs, ys, alone = lichess_segments(report.lichess)
        if len(alone) < len(report.lichess):
            fig.add_trace(go.Scatter(
                x=_naive_utc(xs), y=np.array(ys, dtype=float) if None in ys
                else np.array(ys, dtype=np.int32),
                name=LICHESS_NAME, mode="lines", connectgaps=False, legendgroup="lichess",
                line={"color": LICHESS_COLOR, "width": 1.2},
                hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>Lichess %{y}<extra></extra>",
            ), row=1, col=1)
        if alone:  # a line cannot show a lone point: a marker does
            fig.add_trace(go.Scatter(
                x=_naive_utc([p.at for p in alone]), y=[p.rating for p in alone],
                name=LICHESS_NAME, mode="markers", legendgroup="lichess",
                showlegend=len(alone) == len(report.lichess),
                marker={"color": LICHESS_COLOR, "size": 7, "symbol": "circle"},
                hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>Lichess %{y}<extra></extra>",
            ), row=1, col=1)
    if periods:
        steps_x, ys_f = fide_steps(periods)
        xs_f: list[datetime | None] = list(steps_x)
        hover = [None if y is None else f"FIDE-style {y}" for y in ys_f]
        sizes = [0] * len(xs_f)
        texts = [""] * len(xs_f)
        places = ["bottom center"] * len(xs_f)
        # Ratings computed but not published: a marker at the value, labelled, after a break;
        # labels alternate below and above so that consecutive months do not overlap.
        for i, mark in enumerate(unpublished_marks(periods)):
            xs_f += [None, mark.at]
            ys_f += [None, mark.rating]
            hover += [None, f"{mark.period}: {mark.label}"]
            sizes += [0, 9]
            texts += ["", mark.short]
            places += ["bottom center", "top center" if i % 2 else "bottom center"]
        marked = any(sizes)
        band = band_steps(periods, chart_end(periods)) if getattr(report, "banded", False) \
            else None
        if band is not None:  # several models: their band shaded under the median's line
            bx, lows, _, highs = band
            fig.add_trace(go.Scatter(
                x=bx, y=lows, name=BAND_NAME, mode="lines", connectgaps=False,
                legendgroup="band", showlegend=False, line={"width": 0, "color": FIDE_COLOR},
                hovertemplate="%{x|%Y-%m}<br>lowest model %{y}<extra></extra>",
            ), row=1, col=1)
            fig.add_trace(go.Scatter(
                x=bx, y=highs, name=BAND_NAME, mode="lines", connectgaps=False,
                legendgroup="band", fill="tonexty", fillcolor="rgba(217, 72, 15, 0.15)",
                line={"width": 0, "color": FIDE_COLOR},
                hovertemplate="%{x|%Y-%m}<br>highest model %{y}<extra></extra>",
            ), row=1, col=1)
            for i, m in enumerate(getattr(report, "models", ())):
                mx, my = fide_steps(model_steps(periods, m.key))
                fig.add_trace(go.Scatter(
                    x=mx, y=my, name=model_name(m.key), mode="lines", connectgaps=False,
                    visible="legendonly", legendgroup=f"model-{m.key}",
                    line={"color": MODEL_COLORS[i % len(MODEL_COLORS)], "width": 1.5,
                          "dash": "dot"},
                    hovertemplate=f"%{{x|%Y-%m-%d}}<br>{m.key} %{{y}}<extra></extra>",
                ), row=1, col=1)
        fig.add_trace(go.Scatter(
            x=xs_f, y=ys_f, name=line_name(report),
            mode="lines+markers+text" if marked else "lines",
            connectgaps=False, line={"color": FIDE_COLOR, "width": 3},
            customdata=hover, text=texts if marked else None, textposition=places,
            textfont={"color": FIDE_COLOR, "size": 11},
            marker={"size": sizes, "color": FIDE_COLOR, "symbol": "x-thin-open",
                    "line": {"width": 2.5, "color": FIDE_COLOR}} if marked else None,
            hovertemplate="%{x|%Y-%m-%d}<br>%{customdata}<extra></extra>",
        ), row=1, col=1)
        for kind, months in (real or {}).items():
            rx, ry = real_steps(months, periods[0].period, chart_end(periods))
            if rx:
                fig.add_trace(go.Scatter(
                    x=rx, y=ry, name=real_fide_name(kind), mode="lines",
                    line={"color": REAL_FIDE_COLORS.get(kind, "#2b8a3e"), "width": 2,
                          "dash": "solid" if kind == "standard" else "dot"},
                    hovertemplate=f"%{{x|%Y-%m}}<br>real FIDE {kind} %{{y}}<extra></extra>",
                ), row=1, col=1)
        marks = performance_marks(periods, y_range)
        symbols = {"": "diamond-open", "above": "triangle-up", "below": "triangle-down"}
        fig.add_trace(go.Scatter(
            visible=bool(marks),  # the legend lists only what is drawn
            showlegend=bool(marks),
            x=[m.at for m in marks],
            y=[m.value if not m.clipped else m.y for m in marks],
            customdata=[[m.period, m.games, m.value,
                         f" (off the scale {m.clipped}: drawn at the edge)" if m.clipped else ""]
                        for m in marks],
            name=PERFORMANCE_NAME, mode="markers",
            marker={"symbol": [symbols[m.clipped] for m in marks], "size": 8,
                    "color": FIDE_COLOR, "line": {"width": 1.5}},
            hovertemplate="%{customdata[0]}: performance %{customdata[2]} in %{customdata[1]} "
                          "counted games%{customdata[3]}<extra></extra>",
        ), row=1, col=1)
        stretches = unrated_stretches(periods, report.unrated_reason())
        end = chart_end(periods)
        # Shapes and annotations as plain dicts in one update: add_vrect costs ~70 ms each.
        fig.update_layout(
            shapes=[_unrated_shape(s, end) for s in stretches],
            annotations=[_unrated_label(s, end) for s in stretches],
        )
        if stretches:  # a legend entry for the shading
            fig.add_trace(go.Scatter(
                x=[None], y=[None], name=UNRATED_NAME, mode="markers",
                marker={"symbol": "square", "size": 12, "color": UNRATED_FILL, "opacity": 0.4},
                hoverinfo="skip",
            ), row=1, col=1)
        mids = [month_start(r.period) + _MID_MONTH for r in periods]
        fig.add_trace(go.Bar(
            x=mids, y=[r.result.games for r in periods], width=_BAR_WIDTH_MS,
            name=COUNTED_NAME, marker_color=COUNTED_COLOR,
            customdata=[r.period for r in periods],
            hovertemplate="%{customdata}: %{y} counted<extra></extra>",
        ), row=2, col=1)
        left_out = [sum(r.excluded.values()) for r in periods]
        fig.add_trace(go.Bar(
            x=mids, y=left_out, width=_BAR_WIDTH_MS, showlegend=any(left_out),
            name=LEFT_OUT_NAME, marker_color=LEFT_OUT_COLOR,
            customdata=[r.period for r in periods],
            hovertemplate="%{customdata}: %{y} left out<extra></extra>",
        ), row=2, col=1)
        fig.update_xaxes(range=[month_start(periods[0].period), end])
    # The legend sits under the chart; each row of it adds height, so that many series
    # (several models, two real lists) never squeeze the plot.
    entries = sum(1 for t in fig.data if t.showlegend is not False)
    legend_rows = -(-entries // LEGEND_PER_ROW)
    fig.update_layout(
        barmode="stack", height=PLOT_HEIGHT + LEGEND_ROW_HEIGHT * legend_rows,
        hovermode="closest",
        margin={"l": 10, "r": 10, "t": TOOLBAR_ROOM,
                "b": 20 + LEGEND_ROW_HEIGHT * legend_rows},
        legend={"orientation": "h", "x": 0, "y": -0.05, "xanchor": "left", "yanchor": "top",
                "traceorder": "normal", "entrywidth": 0.5, "entrywidthmode": "fraction"},
    )
    fig.update_yaxes(title_text="rating points", row=1, col=1,
                     **({"range": list(y_range)} if y_range is not None else {}))
    fig.update_yaxes(title_text="games / month", row=2, col=1)
    return fig
