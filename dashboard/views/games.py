"""Games: the games of one rating period, counted or not (and why), with PD and ΔR."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import ui

from tracker.replaying import GAME_KEYS, game_row, period_json

RESULTS = {1: "1", 0: "0"}

player, perf = ui.pick_player_perf()
report = ui.report(player.id, perf)

by_period = {row.period: row for row in report.periods}
periods = list(reversed(by_period))  # newest first


def _label(period: str) -> str:
    row = by_period[period]
    left_out = sum(row.excluded.values())
    return f"{period} — {row.result.games} counted" + (f", {left_out} left out" if left_out
                                                        else "")


if st.session_state.get("games_period") not in by_period:
    st.session_state["games_period"] = periods[0]
st.header(f"Games — {report.player}, {perf}")
pick, show_col = st.columns([2, 3], vertical_alignment="bottom")
period = pick.selectbox("Rating period (UTC month)", periods, key="games_period",
                        format_func=_label)
show = show_col.segmented_control("Show", ["all", "counted", "left out"], default="all",
                                  required=True, key="games_filter")
row = by_period[period]
j = period_json(row)
r = row.result
if r.rating_before is not None:
    st.markdown(
        f"Rating in force **{r.rating_before}**, K **{r.k}**: score {j['score']} against "
        f"expected {j['expected_score']}, change K × ΣΔR = **{ui.signed(j['change'])}** → "
        f"**{ui.number(r.rating_after, 'unrated')}** from the next month.")
else:
    st.markdown(f"Unrated this month: no PD or ΔR. {r.note}.")
if r.rating_before is not None:
    st.caption(r.note)

details = report.period_games(period)
rows = [game_row(d) for d in details]
if show == "counted":
    rows = [g for g in rows if g["counted"]]
elif show == "left out":
    rows = [g for g in rows if not g["counted"]]

table = pd.DataFrame(rows, columns=list(GAME_KEYS))
if not table.empty:
    table["date"] = pd.to_datetime([g["date"] for g in rows], utc=True).tz_localize(None)
    table["result"] = [RESULTS.get(g["result"], "½") if g["result"] is not None else "—"
                       for g in rows]
    table["reason"] = table["reason"].fillna("counted")
    for col in ("expected", "delta"):
        table[col] = [None if v is None else float(v) for v in table[col]]
    table["opponent_rating"] = table["opponent_rating"].astype("Int64")
places = "%.2f" if report.settings.expected == "table" else "%.4f"
st.dataframe(
    table, hide_index=True, key="games_table", placeholder="",
    column_order=[k for k in GAME_KEYS if k != "counted"],
    height=min(36 * (len(table) + 1) + 3, 720),
    column_config={
        "date": st.column_config.DatetimeColumn("date (UTC)", format="YYYY-MM-DD HH:mm"),
        "colour": st.column_config.TextColumn("colour"),
        "opponent": st.column_config.TextColumn("opponent"),
        "opponent_rating": st.column_config.NumberColumn(
            "opp. rating", format="%d", help="The opponent's Lichess rating at the game's start"),
        "result": st.column_config.TextColumn("result", help="Your score: 1, ½ or 0"),
        "reason": st.column_config.TextColumn("counted, or why not", width="medium"),
        "expected": st.column_config.NumberColumn(
            "PD", format=places, help="Expected score (table 8.1.2 or the formula)"),
        "delta": st.column_config.NumberColumn("ΔR", format=places.replace("%", "%+"),
                                               help="score − PD"),
        "url": st.column_config.LinkColumn("game", display_text="lichess.org ↗"),
    },
)
st.caption(f"{len(rows)} of {len(details)} games of {period}. PD and ΔR are shown for counted "
           "games of a rated month; each game is ΔR = score − PD, and the month's change is "
           "K × ΣΔR, rounded once.")
