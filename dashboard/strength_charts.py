"""Figures of the strength in the moves (pure: data from :mod:`tracker.api` in, plotly figure
out; testable without Streamlit): a game's eval graph with its judgments marked, and the
level the games show per month, drawn over the Overview's rating chart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final

import charts
import plotly.graph_objects as go

from tracker.api import GameStrength, SetLevel

#: Marks of the judgments on the eval graph (Lichess's colours).
JUDGMENT_COLORS: Final = {"Inaccuracy": "#56b4e9", "Mistake": "#e69f00", "Blunder": "#df5353"}
GLYPHS: Final = {"Inaccuracy": "?!", "Mistake": "?", "Blunder": "??"}
LEVEL_NAME: Final = "Level shown in the moves (10–90 % range)"
#: The months whose level has a note of its own (the model weak there, outside its fitted
#: range): open squares, the note on hover and under the chart.
LEVEL_NOTED_NAME: Final = "Level shown, with a note (under the chart)"
LEVEL_COLOR: Final = "#2e8b57"
#: Room above the eval graph's plot (pixels): plotly's toolbar, then the turning point's label
#: under it (the label sat under the toolbar's icons).
EVAL_TOP: Final = charts.TOOLBAR_ROOM + 24
#: A month's level is drawn only when its 10–90 % range is narrower than this (rating points):
#: a wider one says too little to draw beside a rating line.
MAX_DRAWN_WIDTH: Final = 400
EVAL_NAME: Final = "White's Win%"


def _move_label(ply: int, san: str, white_first: bool = True) -> str:
    index = ply - 1 + (0 if white_first else 1)
    return f"{1 + index // 2}{'.' if index % 2 == 0 else '…'}{san}"


def eval_figure(game: GameStrength, turning_ply: int | None = None) -> go.Figure:
    """White's Win% after each ply (0–100; a ply without eval is a gap), the judged moves
    marked by kind (?!, ?, ??), and the turning point ``turning_ply`` as a dashed line."""
    plies = list(range(1, len(game.win) + 1))
    labels = [_move_label(p, game.sans[p - 1]) if p <= len(game.sans) else str(p)
              for p in plies]
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=plies, y=game.win, mode="lines", name=EVAL_NAME, line={"color": "#555555"},
        fill="tozeroy", fillcolor="rgba(200, 200, 200, 0.35)", connectgaps=False,
        customdata=labels, hovertemplate="%{customdata}: White %{y:.0f}%<extra></extra>"))
    for name, color in JUDGMENT_COLORS.items():
        marked = [p for p, e in enumerate(game.evals, start=1) if e.judgment == name]
        if not marked:
            continue
        fig.add_trace(go.Scatter(
            x=marked, y=[game.win[p - 1] for p in marked], mode="markers",
            name=f"{name} ({GLYPHS[name]})", marker={"color": color, "size": 10,
                                                    "line": {"width": 1, "color": "#222"}},
            customdata=[labels[p - 1] + GLYPHS[name] for p in marked],
            hovertemplate="%{customdata}: White %{y:.0f}%<extra></extra>"))
    if turning_ply is not None:
        fig.add_vline(x=turning_ply, line_dash="dash", line_color="#df5353",
                      annotation_text="turning point", annotation_position="top")
    fig.add_hline(y=50, line_width=1, line_color="#999999")
    fig.update_layout(height=280 + EVAL_TOP, margin={"l": 10, "r": 10, "t": EVAL_TOP, "b": 10},
                      hovermode="closest",
                      legend={"orientation": "h", "x": 0, "y": -0.2, "yanchor": "top"})
    fig.update_yaxes(range=[0, 100], title_text="White's Win%")
    fig.update_xaxes(title_text="ply", range=[0.5, max(len(plies), 1) + 0.5])
    return fig


def month_middle(month: str) -> datetime:
    """The 15th of a ``YYYY-MM`` month (where its level is drawn)."""
    year, mon = (int(x) for x in month.split("-"))
    return datetime(year, mon, 15)


def drawn_months(months: Sequence[SetLevel]) -> list[SetLevel]:
    """The months whose level is drawn: a level with a range narrower than
    :data:`MAX_DRAWN_WIDTH`, and not because the model's grid cuts it (``cut``: 3 games of a
    2600 player read 2866 (2673–2979), the grid ending at 3000)."""
    return [m for m in months if m.level is not None and m.cut is None
            and m.level.high - m.level.low < MAX_DRAWN_WIDTH]


def add_levels(fig: go.Figure, months: Sequence[SetLevel],
               notes: Mapping[str, str] | None = None) -> go.Figure:
    """A copy of the Overview's figure with the level each month's games show
    (:func:`drawn_months` only): a marker at the estimate with its 10–90 % range as a bar, on
    the rating axis (the Lichess scale of the perf), labelled in the legend; the axis widened
    to hold the ranges, so none is drawn off the chart. ``notes``: what a month's level alone
    needs said, by month (``PlayerStrength.own_note``: the model weak there, outside its
    fitted range): those months are open squares of their own legend entry, the note on
    hover."""
    shown = drawn_months(months)
    out = go.Figure(fig)
    if not shown:
        return out
    notes = notes or {}
    before = _legend_rows(out)
    for name, symbol, group in ((LEVEL_NAME, "square", [m for m in shown
                                                        if not notes.get(m.label)]),
                                (LEVEL_NOTED_NAME, "square-open", [m for m in shown
                                                                   if notes.get(m.label)])):
        if group:
            out.add_trace(_level_trace(name, symbol, group, notes), row=1, col=1)
    low = [m.level.low for m in shown if m.level is not None]
    high = [m.level.high for m in shown if m.level is not None]
    current = out.layout.yaxis.range
    if current is not None:
        out.update_yaxes(range=[min(current[0], min(low) - 25), max(current[1], max(high) + 25)],
                         row=1, col=1)
    added = _legend_rows(out) - before
    if added > 0 and out.layout.height is not None:  # a legend row more: height, not squeeze
        grow = charts.LEGEND_ROW_HEIGHT * added
        out.update_layout(height=out.layout.height + grow,
                          margin={"b": (out.layout.margin.b or 0) + grow})
    return out


def _legend_rows(fig: go.Figure) -> int:
    """The rows the Overview's legend takes (:data:`charts.LEGEND_PER_ROW` entries a row)."""
    entries = sum(1 for t in fig.data if t.showlegend is not False)
    return -(-entries // charts.LEGEND_PER_ROW)


def _level_trace(name: str, symbol: str, shown: Sequence[SetLevel], notes: Mapping[str, str]
                 ) -> go.Scatter:
    est = [m.level.estimate for m in shown if m.level is not None]
    low = [m.level.low for m in shown if m.level is not None]
    high = [m.level.high for m in shown if m.level is not None]
    return go.Scatter(
        x=[month_middle(m.label) for m in shown], y=est, mode="markers", name=name,
        marker={"color": LEVEL_COLOR, "size": 9, "symbol": symbol,
                "line": {"color": LEVEL_COLOR, "width": 2}},
        error_y={"type": "data", "symmetric": False,
                 "array": [h - e for h, e in zip(high, est, strict=True)],
                 "arrayminus": [e - lo for e, lo in zip(est, low, strict=True)],
                 "color": LEVEL_COLOR, "thickness": 2, "width": 4},
        customdata=[[m.label, m.games, lo, h,
                     "".join(f"<br>{part}" for part in notes.get(m.label, "").split("; ") if part)]
                    for m, lo, h in zip(shown, low, high, strict=True)],
        hovertemplate=("%{customdata[0]}: level shown %{y} (%{customdata[2]}–"
                       "%{customdata[3]}), %{customdata[1]} analysed games%{customdata[4]}"
                       "<extra></extra>"),
    )
