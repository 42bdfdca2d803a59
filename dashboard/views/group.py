"""Group: one row per member of a group (``tracker group show``), sortable, and a chart that
overlays the FIDE-style lines (the models' median) of the players picked."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from fractions import Fraction
from typing import Any, Final

import charts
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import ui

from tracker import api
from tracker.api import SPEEDS, GroupRow

GROUP_PARAM: Final = "group"
#: The group picked, kept outside the widget (a page switch clears the URL).
_GROUP_PICKED: Final = "_picked_group"
#: The note of a member without games in the last three months (no "Change, 3 months").
NO_GAMES_3M: Final = "no games in the last 3 months"
#: Players drawn when the page opens: the first ones with a rating, in the table's order.
DEFAULT_PICKED: Final = 3
#: The colours of the overlaid lines, one per player in pick order.
PALETTE: Final = ("#d9480f", "#1971c2", "#2b8a3e", "#ae3ec9", "#e67700", "#0c8599",
                  "#c2255c", "#5f3dc4", "#66a80f", "#495057")

COLUMNS: Final = {
    "username": ("Player", "The member's Lichess name."),
    "fide": ("FIDE-style now", "The hypothetical FIDE rating in force now: the median of the "
             "scale models' replays under FIDE's rules (rating points)."),
    "band": ("Band", "The lowest and highest of the models."),
    "club": ("Club model", "The FIDE-style rating now through the group's own model "
             "(tracker group calibrate), fitted on its members with a FIDE rating."),
    "real_fide": ("Real FIDE", "The real FIDE rating in force now, standard list (when a "
                  "FIDE id is linked)."),
    "gap": ("Gap", "FIDE-style now − real FIDE (rating points)."),
    "lichess": ("Lichess", "The Lichess rating after the last rated game of the perf."),
    "games_30d": ("Games, 30 days", "Rated games of the perf in the last 30 days."),
    "change_3m": ("Change, 3 months", "The FIDE-style rating now minus the one in force "
                  "three months ago."),
    "level": ("Level in play (Lichess scale)", "The level the last analysed games show "
              "together (move analysis): estimate (10–90 % range) on the Lichess scale of the "
              "table's perf, never a rating. \", where the model is weak\" or \", outside "
              "the model's fitted range\": its estimate falls there (the player's Overview "
              "and tracker strength say why). \", uncalibrated evals\": some of those games "
              "were analysed at a budget no engine calibration covers: it reads high."),
    "note": ("Why no figure", "Why a member has no FIDE-style rating, or which figure is "
             "missing."),
}


def _float(x: Fraction | int | None) -> int | None:
    # Display only: whole as FIDE publishes it (a median's .5 rounded half up).
    return api.whole_rating(x)


def table_frame(rows: Sequence[GroupRow]) -> pd.DataFrame:
    """The table as the page shows it: numbers stay numbers, so a click on a header sorts."""
    return pd.DataFrame([{
        "username": r.username, "fide": _float(r.fide),
        "band": f"{r.fide_low}–{r.fide_high}" if r.fide_low is not None else None,
        "club": r.club,
        "real_fide": r.real_fide, "gap": _float(r.gap), "lichess": r.lichess,
        "games_30d": r.recent_games,
        # No games in three months is no change of form: no figure, and the note says so.
        "change_3m": None if r.games_3m == 0 else _float(r.change),
        "level": r.level or api.NOT_ANALYSED,
        "note": "; ".join(filter(None, (r.note, NO_GAMES_3M if r.games_3m == 0 else None))),
    } for r in rows], columns=list(COLUMNS))


def group_figure(rows: Sequence[GroupRow], banded: bool = True) -> go.Figure:
    """The FIDE-style lines of ``rows`` on one time axis: each month's models' median in
    force from the month after its period (a step line, broken while unrated), the band on
    hover; not ``banded`` (one model covers the perf), that model's rating, no band."""
    fig = go.Figure()
    values: list[float] = []
    for i, r in enumerate(rows):
        xs: list[datetime] = []
        ys: list[float | None] = []
        hover: list[str] = []
        for period, median, low, high in r.line:
            xs.append(charts.month_start(charts.next_period(period)))
            ys.append(_float(median))
            values += [] if median is None else [float(median)]
            band = f" (band {low}–{high})" if banded else ""
            hover.append(f"{period}: {_float(median)}{band}" if median is not None
                         else f"{period}: unrated")
        # A month rated between unrated ones (or alone) is a dot: a line of one point is none.
        alone = [y is not None and (k == 0 or ys[k - 1] is None)
                 and (k == len(ys) - 1 or ys[k + 1] is None) for k, y in enumerate(ys)]
        fig.add_trace(go.Scatter(
            x=xs, y=ys, name=r.username, mode="lines+markers", line_shape="hv",
            line={"color": PALETTE[i % len(PALETTE)], "width": 2.5}, connectgaps=False,
            marker={"size": [7 if a else 0 for a in alone]},
            hovertext=hover, hoverinfo="text+name"))
    # Every line inside the axes with room, and plotly's toolbar above the plot, not on it.
    y_range = charts.padded_range(values)
    fig.update_layout(
        height=460, margin={"l": 10, "r": 10, "t": charts.TOOLBAR_ROOM, "b": 10},
        hovermode="closest",
        yaxis_title="FIDE-style rating" + (" (models' median)" if banded else ""),
        legend={"orientation": "h"},
        **({"yaxis_range": list(y_range)} if y_range is not None else {}))
    return fig


def pick_group() -> str:
    """The group picker (kept in the URL as ``?group=…``); a message and a stop without
    groups."""
    groups = api.group_list(db=ui.store())
    if not groups:
        st.info("No groups yet: create one with `tracker group create NAME` and add players "
                "with `tracker group add NAME USER…`.")
        st.stop()
    names = [g.name for g in groups]
    # A page switch clears the URL: then the group picked earlier in this session.
    wanted = st.query_params.get(GROUP_PARAM) or st.session_state.get(_GROUP_PICKED)
    index = names.index(wanted) if wanted in names else 0
    picked = str(st.sidebar.selectbox(
        "Group", names, index=index,
        format_func=lambda n: f"{n} — {next(g.members for g in groups if g.name == n)} "
                              "members"))
    if st.query_params.get(GROUP_PARAM) != picked:
        st.query_params[GROUP_PARAM] = picked
    st.session_state[_GROUP_PICKED] = picked
    return picked


def pick_perf() -> str:
    """The perf picker (kept in the URL as ``?perf=…``): the URL's; else, after a page switch
    (which clears the URL), the perf picked on any page of this session (the Overview's
    too); else blitz. The pick is shared back, so the Overview opens on it where the player
    has games of it."""
    wanted = st.query_params.get(ui.PERF_PARAM) or ui.picked_perf()
    options = list(SPEEDS)
    perf = str(st.sidebar.selectbox("Perf", options, index=options.index(wanted)
                                    if wanted in options else options.index("blitz")))
    if st.query_params.get(ui.PERF_PARAM) != perf:
        st.query_params[ui.PERF_PARAM] = perf
    ui.share_perf(perf)
    return perf


group = pick_group()
perf = pick_perf()
with st.spinner(f"Reading the table of {group}…"):
    table = api.group_table(group, perf, db=ui.store())

st.header(f"{ui.md(table.group)} — {perf}")
st.caption(f"As of {table.as_of} (UTC). FIDE-style: what FIDE's rules make of each member's "
           "games with the opponents mapped to FIDE's scale: "
           f"{table.scale_words}. Real FIDE: the standard list. Click a header to sort. "
           + (api.HALF_NOTE if table.banded else ""))
config: dict[str, Any] = {
    key: st.column_config.Column(label, help=help_) for key, (label, help_) in COLUMNS.items()}
for key in ("fide", "gap", "change_3m"):
    config[key] = st.column_config.NumberColumn(COLUMNS[key][0], help=COLUMNS[key][1],
                                                format="%g")
frame = table_frame(table.rows)
if table.club is None:  # the group has no club model for this perf: no empty column
    frame = frame.drop(columns=["club"])
    config.pop("club")
else:
    st.caption(f"Club model: {ui.md(table.club)}.")
if not table.banded:  # one model covers the perf: its rating, no band of one value
    frame = frame.drop(columns=["band"])
    config.pop("band")
# A missing figure reads "—", as in `tracker group show` (never "None").
st.dataframe(frame, column_config=config, hide_index=True, key="group_table", placeholder="—",
             height=ui.table_height(len(frame)), width="stretch")
st.download_button("Download CSV", api.group_table_csv(table, sort="fide"),
                   file_name=f"{table.group}-{perf}.csv", mime="text/csv")

rated = [r for r in table.rows if r.line]
if not rated:
    st.info(f"No member has {perf} games to draw.")
    st.stop()
by_name = {r.username: r for r in rated}
default = [r.username for r in api.sort_rows(rated, "fide") if r.fide is not None]
picked = st.multiselect("Players on the chart", list(by_name),
                        default=default[:DEFAULT_PICKED], key=f"group_pick_{group}_{perf}")
st.plotly_chart(group_figure([by_name[n] for n in picked], table.banded), key="group_chart",
                config={"displaylogo": False})
st.caption("Each line is a member's FIDE-style rating in force each month: "
           + ("the median of the models (hover for their band)." if table.banded
              else f"{table.scale_words}.") + " A gap: unrated then.")
