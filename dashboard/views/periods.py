"""Periods: the table of ``tracker replay --json``, one row per month, with a CSV download."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pandas as pd
import streamlit as st
import ui

from tracker import api
from tracker.api import PERIOD_KEYS, dumps, excluded_text, period_json, periods_csv

player, perf = ui.pick_player_perf()
report = ui.report(player.id, perf)

st.header(f"Rating periods — {ui.md(report.player)}, {perf}", anchor=False)
ui.scale_caption(report)
st.caption("One row per calendar month (UTC) with games of this perf. The rating in force "
           "during a month is *before*" + (" (the row below's *after*)" if report.real else "")
           + "; the change, K × Σ(score − expected), is rounded once and gives *after*, in "
           "force from the next month. Empty = unrated.")


def _number(x: Decimal | Fraction | int | None) -> float | None:
    # Display only: exact hundredths shown with two decimals come out unchanged; a median's
    # .5 stays (shown with %g: 1605.5, and 1640 never as 1640.0).
    return None if x is None else float(x)


def _rating(x: Decimal | Fraction | int | None) -> int | None:
    # A rating whole, as FIDE publishes it: a median's .5 rounded half up (said once
    # under the table); the CSV and JSON downloads keep the exact value.
    return api.whole_rating(x)


rows = []
# Newest first: the month a player looks for is the last one.
for row in reversed(report.periods):
    j = period_json(row)
    rows.append({
        **j,
        "left_out": sum(row.excluded.values()) or None,
        "excluded": excluded_text(j["excluded"]),
        "score": _number(j["score"]),
        "expected_score": _number(j["expected_score"]),
        "change": _number(j["change"]),
        "k": api.k_text(row),
        "rating_before": _rating(j["rating_before"]),
        "rating_after": _rating(j["rating_after"]),
        "performance": _rating(j["performance"]),
        "note": row.note,
        **({"band_min": row.band.min, "band_max": row.band.max} if row.band is not None
           else {}),
        **({"fide_real": row.fide_real, "gap": _rating(row.gap)} if report.real else {}),
    })
band_cols = ("band_min", "band_max") if report.banded else ()
real_cols = ("fide_real", "gap") if report.real else ()
table = pd.DataFrame(rows, columns=[*PERIOD_KEYS, "note", "left_out", *band_cols, *real_cols])
for col in ("band_min", "band_max", "fide_real", "left_out"):
    if col in table:
        table[col] = table[col].astype("Int64")
for col in ("games", "lichess_rating", "rating_before", "rating_after", "performance",
            *(("gap",) if report.real else ())):
    table[col] = table[col].astype("Int64")

picked = st.dataframe(
    table, hide_index=True, key="periods_table", placeholder="—",
    row_height=ui.ROW_HEIGHT, height=ui.table_height(len(table), ui.MAX_PERIOD_ROWS),
    on_select="rerun", selection_mode="single-row",
    # Numbers only, narrow, so that every column shows at 1280 px without scrolling: month,
    # the FIDE-style rating after, the real one and the gap, then the workings. What
    # happened (the engine's sentence) is read in full under the table. With the real rating's
    # two columns, the rating before (the row below's After) is left to the CSV and the text.
    column_order=["period", "rating_after", *real_cols, "games", "left_out", "score",
                  "expected_score", "k", *(() if real_cols else ("rating_before",)), "change",
                  "performance", "lichess_rating", *band_cols],
    column_config={
        "period": st.column_config.TextColumn(
            "Month", width=62, help="The rating period: a calendar month, UTC"),
        "games": st.column_config.NumberColumn(
            "Games", width=55, help="Games counted in the month"),
        "left_out": st.column_config.NumberColumn(
            "Left out", format="%d", width=58,
            help="Games of the month that do not count (the reasons: click the row, or "
                 "read What happened under the table)"),
        "score": st.column_config.NumberColumn(
            "Score", width=52, help="Points scored in the counted games (win 1, draw ½)"),
        "expected_score": st.column_config.NumberColumn(
            "Expected", format="%.2f", width=64,
            help="Σ PD: the expected score of the counted games against the rating in force "
                 "(empty while unrated)"),
        "k": st.column_config.TextColumn(
            "K", width=38, help="Development coefficient K after the 700 rule (with several "
            "models: their range where they differ)"),
        "rating_before": st.column_config.NumberColumn(
            "Before", format="%g", width=58,
            help="FIDE-style rating in force during the month (rating points; empty = "
                 "unrated)"),
        "change": st.column_config.NumberColumn(
            "Change", format="%+.2f", width=62,
            help="K × Σ(score − PD) in rating points, before the one rounding"),
        "rating_after": st.column_config.NumberColumn(
            "After", format="%g", width=56,
            help="FIDE-style rating in force from the next month (empty = unrated; with "
                 "several models their median, whole as FIDE publishes it)"),
        "performance": st.column_config.NumberColumn(
            "Perf.", format="%g", width=52,
            help="Performance rating of the month, Rp = Ra + dp(p) (rating points)"),
        "lichess_rating": st.column_config.NumberColumn(
            "Lichess", format="%d", width=56,
            help="Your Lichess rating after the month's last game (Glicko-2, Lichess's "
                 "scale)"),
        "band_min": st.column_config.NumberColumn(
            "Lowest", format="%d", width=58,
            help="The lowest rating after the month among the models (FIDE scale)"),
        "band_max": st.column_config.NumberColumn(
            "Highest", format="%d", width=58,
            help="The highest rating after the month among the models (FIDE scale)"),
        "fide_real": st.column_config.NumberColumn(
            "Real", format="%d", width=52,
            help="Your real FIDE rating in force from the next month (the linked list)"),
        "gap": st.column_config.NumberColumn(
            "Gap", format="%+g", width=48,
            help="Hypothetical − real: the FIDE-style rating after the month minus the real one"),
    },
)
if api.has_half(report):  # how the half is rounded, said once
    st.caption(api.HALF_NOTE)
selected = picked.selection.rows if picked is not None else []
if selected and selected[0] < len(rows):
    chosen = rows[selected[0]]
    st.markdown(f"**{chosen['period']}** — {ui.md(chosen['note'])}"
                + (f"  \nLeft out: {ui.md(chosen['excluded'])}" if chosen["excluded"] else ""))
with st.expander("What happened, month by month (newest first)"):
    st.markdown("\n".join(
        f"- **{r['period']}** — {ui.md(r['note'])}"
        + (f"; left out: {ui.md(r['excluded'])}" if r["excluded"] else "") for r in rows))

buttons = st.container(horizontal=True)
stem = f"{report.user_id}-{perf}-periods"
buttons.download_button("Download CSV", periods_csv(report).encode("utf-8"),
                     file_name=f"{stem}.csv", mime="text/csv", key="periods_csv",
                     on_click="ignore")
buttons.download_button("Download JSON", dumps(report.to_json()).encode("utf-8"),
                      file_name=f"{stem}.json", mime="application/json", key="periods_json",
                      on_click="ignore")
command = ui.code(f"tracker replay {report.user_id} --perf {perf} --json")
st.caption(f"The CSV has the keys of {command} as columns (`period`, `games`, `excluded`, "
           "`score`, `expected_score`, `k`, `rating_before`, `change`, `rating_after`, "
           "`performance`, `lichess_rating`); "
           "`excluded` is written as `reason: games; …`. Click a row to read its note.")
