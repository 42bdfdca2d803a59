"""Games: the games of one rating period, counted or not (and why), with PD and ΔR."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import strength_ui
import ui

from tracker import api
from tracker.api import GAME_KEYS, game_row, period_json

RESULTS = {1: "1", 0: "0"}
OUTCOMES = {1: "Win", 0: "Loss"}

player, perf = ui.pick_player_perf()
report = ui.report(player.id, perf)

by_period = {row.period: row for row in report.periods}
periods = list(reversed(by_period))  # newest first


def _label(period: str) -> str:
    row = by_period[period]
    left_out = sum(row.excluded.values())
    return f"{period} — {row.result.games} counted" + (f", {left_out} left out" if left_out
                                                        else "")


#: ``?game=ID``: open that game (its month picked, its details shown).
linked = st.query_params.get("game")
linked_period = next((p for p in periods if linked and any(
    d.selected.game.id == linked for d in report.period_games(p))), None)
if linked_period is not None and st.session_state.get("_linked_game") != linked:
    st.session_state["games_period"] = linked_period
    st.session_state["_linked_game"] = linked
if st.session_state.get("games_period") not in by_period:
    st.session_state["games_period"] = periods[0]
st.header(f"Games — {ui.md(report.player)}, {perf}", anchor=False)
if linked and linked_period is None:
    st.warning(f"No game {ui.md(linked)} among {ui.md(report.player)}'s {perf} games: the "
               "link names another player's game, another perf's, or one not imported here.")
ui.scale_caption(report)
pick, show_col = st.columns([2, 3], vertical_alignment="bottom")
period = pick.selectbox("Rating period (UTC month)", periods, key="games_period",
                        format_func=_label)
show = show_col.segmented_control("Show", ["all", "counted", "left out"], default="all",
                                  required=True, key="games_filter")
# Each game's PD exists under one model's replay: with several models, the page shows one
# model's scale at a time (the opponents' ratings, the rating in force and PD on it).
model = None
if report.banded:
    model = str(st.segmented_control(
        "Opponents' ratings on the scale of", [m.key for m in report.models],
        default=report.models[0].key, required=True, key="games_model",
        help="The month's median is not one replay: each model rates every game on its own "
             "scale. Pick whose scale the opponents' ratings, expected scores and ΔR are "
             "shown on."))
on_scale = report.game_model(model)
row = by_period[period]
j = period_json(row)
r = row.result
if row.band is not None and on_scale is not None and on_scale.key in row.band.results:
    r = row.band.results[on_scale.key]
    st.caption(f"Shown on {on_scale.key}'s scale: the month under {on_scale.key} alone "
               f"(the answer, the models' median, ends the month at "
               f"{api.rating_text(row.rating_after, 'unrated')}).")
    j = {**j, "score": r.score, "expected_score": api.shown(r.expected_score),
         "change": api.shown(r.change)}
if r.rating_before is not None:
    st.markdown(
        f"Rating in force **{r.rating_before}**, K **{r.k}**: score {j['score']} against "
        f"expected {j['expected_score']}, change K × ΣΔR = **{ui.signed(j['change'])}** → "
        f"**{ui.number(r.rating_after, 'unrated')}** from the next month.")
else:
    st.markdown(f"Unrated this month: no expected score or ΔR. {ui.md(r.note)}.")
if r.rating_before is not None and r.note != f"K {r.k}":  # a note that adds to the sentence
    st.caption(ui.md(r.note))

details = report.period_games(period, model)
pairs = [(d, game_row(d)) for d in details]
strength = strength_ui.player_strength(player.id, perf)
by_game = {g.id: g.side(color) for g, color in strength.games} if strength else {}
if show == "counted":
    pairs = [(d, g) for d, g in pairs if g["counted"]]
elif show == "left out":
    pairs = [(d, g) for d, g in pairs if not g["counted"]]
rows = [g for _, g in pairs]

table = pd.DataFrame(rows, columns=[*GAME_KEYS, "outcome", "points", "opponent_on_scale",
                                    "accuracy", "acpl", "level"])
if not table.empty:
    table["date"] = pd.to_datetime([g["date"] for g in rows], utc=True).tz_localize(None)
    table["result"] = [RESULTS.get(g["result"], "½") if g["result"] is not None else "—"
                       for g in rows]
    table["outcome"] = [OUTCOMES.get(g["result"], "Draw") if g["result"] is not None
                        else "unfinished" for g in rows]
    table["reason"] = table["reason"].fillna("counted")
    # The rating points each game moved the rating: K × ΔR (the month's change is their sum,
    # rounded once at the end of the month).
    table["points"] = [None if g["delta"] is None or r.k is None else float(g["delta"] * r.k)
                       for g in rows]
    for col in ("expected", "delta"):
        table[col] = [None if v is None else float(v) for v in table[col]]
    table["opponent_rating"] = table["opponent_rating"].astype("Int64")
    table["opponent_on_scale"] = pd.array([d.opponent_rating for d, _ in pairs], dtype="Int64")
    sides = [by_game.get(d.selected.game.id) for d, _ in pairs]
    table["accuracy"] = pd.array([s.accuracy if s else None for s in sides], dtype="Int64")
    table["acpl"] = pd.array([s.acpl if s else None for s in sides], dtype="Int64")
    # A level with a note of its own (the model weak there, outside its fitted range) is
    # marked, as in `tracker strength`; the clicked game's page gives the note.
    table["level"] = [f"{s.level.estimate} ({s.level.low}–{s.level.high})"
                      + (" †" if strength is not None and strength.own_note(s.level) else "")
                      if s and s.level else None for s in sides]
places = "%.2f" if report.settings.expected == "table" else "%.4f"
on_fide = on_scale is not None
# What each game did (result, expected, ΔR and the points it moved) comes right after the
# opponent, so that it shows at 1280 px; why a game does not count and the move analysis
# follow.
shown = ["date", "colour", "opponent", "opponent_rating", *(["opponent_on_scale"] if on_fide
                                                             else []),
         "outcome", "expected", "delta", "points", "reason", "accuracy", "acpl", "level", "url"]
picked = st.dataframe(
    table, hide_index=True, key="games_table", placeholder="",
    column_order=shown, on_select="rerun", selection_mode="single-row",
    row_height=ui.ROW_HEIGHT, height=ui.table_height(len(table)),
    column_config={
        "date": st.column_config.DatetimeColumn("Date (UTC)", format="MM-DD HH:mm", width=95,
                                                help="The game's end, UTC (the month is the "
                                                     "period picked)"),
        "colour": st.column_config.TextColumn("Colour", width=55),
        "opponent": st.column_config.TextColumn("Opponent", width=130),
        "opponent_rating": st.column_config.NumberColumn(
            "Opp. Lichess", format="%d", width=90,
            help="The opponent's Lichess rating at the game's start (Lichess's scale)"),
        "opponent_on_scale": st.column_config.NumberColumn(
            "Opp. FIDE", format="%d", width=80,
            help="The opponent's rating on the FIDE scale the replay uses (the model's "
                 "conversion of the Lichess one): the expected score is computed from it; "
                 "empty = the model cannot place it"),
        "outcome": st.column_config.TextColumn(
            "Result", width=60, help="From your side: Win (1), Draw (½), Loss (0)"),
        "reason": st.column_config.TextColumn("Counted, or why not", width="medium"),
        "expected": st.column_config.NumberColumn(
            "Expected", format=places, width=75,
            help="The game's expected score (FIDE's regulations call it PD), from FIDE table "
                 "8.1.2 or the logistic formula"),
        "delta": st.column_config.NumberColumn(
            "ΔR", format=places.replace("%", "%+"), width=65,
            help="Score − expected: what the game did against expectation"),
        "points": st.column_config.NumberColumn(
            "K × ΔR", format="%+.2f", width=70,
            help="Rating points this game moved your rating: K × ΔR. The month's change is "
                 "their sum, rounded once."),
        "accuracy": st.column_config.NumberColumn(
            "Accuracy", format="%d%%", width="small",
            help="Your accuracy in the game (Lichess's formula), where the game has evals"),
        "acpl": st.column_config.NumberColumn(
            "ACPL", format="%d", width="small", help="Your average centipawn loss"),
        "level": st.column_config.TextColumn(
            "Level shown", width="small",
            help="The level your moves show: estimate (10–90 % range), Lichess scale; † a "
                 "note of its own, on the game's page"),
        "url": st.column_config.LinkColumn("Game", display_text="lichess.org ↗"),
    },
)
st.caption(f"{len(rows)} of {api.plural(len(details), 'game')} of {period}. The expected score "
           "and ΔR are shown for counted games of a rated month; each game is ΔR = score − "
           "expected, and the month's change is K × ΣΔR, rounded once. Click a row to see the "
           "game."
           + (" † after a level: it has a note of its own (the model weak there, or outside "
              "its fitted range), on the game's page."
              if any(str(v).endswith(" †") for v in table.get("level", [])) else ""))
# The month's games for a player's own spreadsheet: what `tracker replay … --period M --csv`
# prints (on the scale picked above, every game whatever the filter).
st.download_button(
    "Download the month's games (CSV)", api.games_csv(details).encode("utf-8"),
    file_name=f"{report.user_id}-{perf}-{period}-games.csv", mime="text/csv",
    key="games_csv", on_click="ignore",
    help=f"Every game of {period}: `tracker replay {report.user_id} --perf {perf} --period "
         f"{period} --csv` gives the same.")

selected = picked.selection.rows if picked is not None else []
linked_row = next((i for i, (d, _) in enumerate(pairs) if d.selected.game.id == linked), None)
if not selected and linked_row is not None:
    selected = [linked_row]
if selected and selected[0] < len(pairs):
    chosen, shown_row = pairs[selected[0]]
    game = chosen.selected.game
    moves = api.game_moves(game.id, db=ui.store(), orientation=chosen.selected.color)
    white, black = game.white, game.black
    st.subheader(ui.md(f"{white.name or white.user_id or '?'} ({white.rating or '?'}) – "
                       f"{black.name or black.user_id or '?'} ({black.rating or '?'}), "
                       f"{game.result or 'unfinished'}"))
    board, text = st.columns([2, 3])
    board.image(moves.svg, caption=f"Final position (you played {chosen.selected.color})")
    if moves.url:
        text.link_button("Open on lichess.org", moves.url, icon=":material/open_in_new:")
    if moves.problem:
        text.warning(ui.md(moves.problem))
    text.markdown(moves.numbered or "_No moves stored._")  # SAN by python-chess, not data
    strength_ui.show_game(game.id, chosen.selected.color)

strength_ui.analyse_panel(player.id, perf)
