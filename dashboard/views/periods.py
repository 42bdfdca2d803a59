"""Periods: the table of ``tracker replay --json``, one row per month, with a CSV download."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import ui

from tracker.replaying import PERIOD_KEYS, dumps, excluded_text, period_json, periods_csv

player, perf = ui.pick_player_perf()
report = ui.report(player.id, perf)

st.header(f"Rating periods — {report.player}, {perf}")
st.caption("One row per calendar month (UTC) with games of this perf. The rating in force "
           "during a month is *before*; the change, K × Σ(score − expected), is rounded once "
           "and gives *after*, in force from the next month. Empty = unrated.")


def _number(x: object) -> float | None:
    # Display only: exact hundredths shown with two decimals come out unchanged.
    return None if x is None else float(x)  # type: ignore[arg-type]


rows = []
for row in report.periods:
    j = period_json(row)
    rows.append({
        **j,
        "excluded": excluded_text(j["excluded"]),
        "score": _number(j["score"]),
        "expected_score": _number(j["expected_score"]),
        "change": _number(j["change"]),
        "note": row.result.note,
    })
table = pd.DataFrame(rows, columns=[*PERIOD_KEYS, "note"])
for col in ("games", "k", "rating_before", "rating_after", "performance", "lichess_rating"):
    table[col] = table[col].astype("Int64")

st.dataframe(
    table, hide_index=True, key="periods_table", placeholder="—",
    height=min(36 * (len(table) + 1) + 3, 720),
    column_config={
        "period": st.column_config.TextColumn("period", help="Calendar month, UTC"),
        "games": st.column_config.NumberColumn("games", help="Games counted"),
        "excluded": st.column_config.TextColumn(
            "excluded", help="Games of the month left out, by reason", width="medium"),
        "score": st.column_config.NumberColumn("score", help="Points scored in counted games"),
        "expected_score": st.column_config.NumberColumn(
            "expected_score", format="%.2f", help="Σ PD: the expected score (empty = unrated)"),
        "k": st.column_config.NumberColumn("k", help="K after the 700 rule"),
        "rating_before": st.column_config.NumberColumn("rating_before", format="%d"),
        "change": st.column_config.NumberColumn(
            "change", format="%+.2f", help="K × Σ(score − PD), before rounding"),
        "rating_after": st.column_config.NumberColumn(
            "rating_after", format="%d", help="In force from the next month"),
        "performance": st.column_config.NumberColumn(
            "performance", format="%d", help="Performance rating Rp = Ra + dp(p)"),
        "lichess_rating": st.column_config.NumberColumn(
            "lichess_rating", format="%d", help="Lichess rating after the month's last game"),
        "note": st.column_config.TextColumn("note", width="large"),
    },
)

buttons = st.container(horizontal=True)
stem = f"{report.user_id}-{perf}-periods"
buttons.download_button("Download CSV", periods_csv(report).encode("utf-8"),
                     file_name=f"{stem}.csv", mime="text/csv", key="periods_csv",
                     on_click="ignore")
buttons.download_button("Download JSON", dumps(report.to_json()).encode("utf-8"),
                      file_name=f"{stem}.json", mime="application/json", key="periods_json",
                      on_click="ignore")
st.caption(f"The CSV has the keys of `tracker replay {report.user_id} --perf {perf} --json` as "
           "columns; `excluded` is written as `reason: games; …`.")
