"""Figure builders for the dashboard: report in, plotly figure out.

Pure: no Streamlit, no database, nothing computed that the report does not already hold. The
helpers that shape the report for a chart (:func:`fide_steps`, :func:`unrated_stretches`) are
exposed so tests can pin them without drawing anything.

Times on the chart are naive datetimes that mean UTC: plotly.js has no time zones, and a rating
period is a UTC calendar month (spec §4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tracker.replaying import PeriodRow, ReplayReport

LICHESS_COLOR: Final = "#4a7fc1"
FIDE_COLOR: Final = "#d9480f"
COUNTED_COLOR: Final = "#8a9bb0"
LEFT_OUT_COLOR: Final = "#d8dee6"
UNRATED_FILL: Final = "#9aa5b1"

#: Trace names; tests and the browser check look for them.
LICHESS_NAME: Final = "Lichess rating after each game"
FIDE_NAME: Final = "FIDE-style rating in force"
PERFORMANCE_NAME: Final = "Performance rating of the month"
UNRATED_NAME: Final = "Unrated (no FIDE-style rating)"
COUNTED_NAME: Final = "Games counted"
LEFT_OUT_NAME: Final = "Games left out"

#: Bars are drawn across most of their month, centred on its middle.
_BAR_WIDTH_MS: Final = 24 * 86_400_000
_MID_MONTH: Final = timedelta(days=15, hours=12)

STARTED_UNRATED: Final = "started unrated: no FIDE rating yet"


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
    start of the first period)."""

    at: datetime
    rating: int | None
    note: str


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


def rating_changes(periods: Sequence[PeriodRow]) -> list[RatingChange]:
    """The moments the FIDE-style rating in force changes, oldest first.

    A period's ``rating_before`` is in force from its first day; its ``rating_after`` from the
    first day of the next month until the next period's start. Repeats are dropped.
    """
    out: list[RatingChange] = []
    for row in periods:
        r = row.result
        for at, rating, note in (
            (month_start(r.period), r.rating_before, ""),
            (month_start(next_period(r.period)), r.rating_after, r.note),
        ):
            if out and out[-1].rating == rating:
                continue
            if out and out[-1].at == at:
                out[-1] = RatingChange(at, rating, note or out[-1].note)
            else:
                out.append(RatingChange(at, rating, note))
    return out


def chart_end(periods: Sequence[PeriodRow]) -> datetime:
    """The right edge of the time axis: the end of the month after the last period, so the
    rating (or the unrated state) that period leads to is visible."""
    return month_start(next_period(next_period(periods[-1].period)))


def fide_steps(periods: Sequence[PeriodRow]) -> tuple[list[datetime], list[int | None]]:
    """x and y of the FIDE-style step line: horizontal while a rating is in force, a vertical
    jump at each change, ``None`` (a gap) while unrated. Ends at :func:`chart_end`."""
    xs: list[datetime] = []
    ys: list[int | None] = []
    previous: int | None = None
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


def _naive_utc(points: Sequence[datetime]) -> np.ndarray:
    return np.array([p.replace(tzinfo=None) for p in points], dtype="datetime64[ms]")


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


def overview_figure(report: ReplayReport) -> go.Figure:
    """One chart, one time axis: the Lichess rating after each game, the FIDE-style rating as
    a step line by period with unrated stretches shaded and explained, the performance rating
    per period as markers, and games per month as bars underneath."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.76, 0.24],
                        vertical_spacing=0.04)
    periods = report.periods
    if report.lichess:
        fig.add_trace(go.Scatter(
            x=_naive_utc([p.at for p in report.lichess]),
            y=np.array([p.rating for p in report.lichess], dtype=np.int32),
            name=LICHESS_NAME, mode="lines", line={"color": LICHESS_COLOR, "width": 1.2},
            hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>Lichess %{y}<extra></extra>",
        ), row=1, col=1)
    if periods:
        xs, ys = fide_steps(periods)
        fig.add_trace(go.Scatter(
            x=xs, y=ys, name=FIDE_NAME, mode="lines", connectgaps=False,
            line={"color": FIDE_COLOR, "width": 3},
            hovertemplate="%{x|%Y-%m-%d}<br>FIDE-style %{y}<extra></extra>",
        ), row=1, col=1)
        rated = [r.result for r in periods if r.result.performance is not None]
        fig.add_trace(go.Scatter(
            x=[month_start(r.period) + _MID_MONTH for r in rated],
            y=[r.performance for r in rated],
            customdata=[[r.period, r.games] for r in rated],
            name=PERFORMANCE_NAME, mode="markers",
            marker={"symbol": "diamond-open", "size": 8, "color": FIDE_COLOR,
                    "line": {"width": 1.5}},
            hovertemplate="%{customdata[0]}: performance %{y} in %{customdata[1]} counted "
                          "games<extra></extra>",
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
        fig.add_trace(go.Bar(
            x=mids, y=[sum(r.excluded.values()) for r in periods], width=_BAR_WIDTH_MS,
            name=LEFT_OUT_NAME, marker_color=LEFT_OUT_COLOR,
            customdata=[r.period for r in periods],
            hovertemplate="%{customdata}: %{y} left out<extra></extra>",
        ), row=2, col=1)
        fig.update_xaxes(range=[month_start(periods[0].period), end])
    fig.update_layout(
        barmode="stack", height=620, hovermode="closest",
        margin={"l": 10, "r": 10, "t": 10, "b": 60},
        legend={"orientation": "h", "x": 0, "y": -0.07, "xanchor": "left", "yanchor": "top",
                "traceorder": "normal"},
    )
    fig.update_yaxes(title_text="rating points", row=1, col=1)
    fig.update_yaxes(title_text="games / month", row=2, col=1)
    return fig
