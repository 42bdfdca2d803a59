"""Calculator: FIDE's Elo calculator, done right (table 8.1.2, the 400-point rule, the 700
rule, one rounding). Needs no database: it calls :func:`tracker.api.calc` only."""

from __future__ import annotations

from fractions import Fraction

import streamlit as st
import ui

from tracker import api
from tracker.api import CAP_EXEMPT_FROM, MAX_K_TIMES_GAMES, RULES

RESULTS = {"1": Fraction(1), "½": Fraction(1, 2), "0": Fraction(0)}
RESULT_LABELS = {"1": "Win 1", "½": "Draw ½", "0": "Loss 0"}
K_CHOICES = ("40", "20", "10", "other")
DEFAULT_OPPONENT = 1500


def _add_row() -> None:
    st.session_state.calc_next += 1
    st.session_state.calc_rows.append(st.session_state.calc_next)


def _remove_row(rid: int) -> None:
    st.session_state.calc_rows.remove(rid)


if "calc_rows" not in st.session_state:
    st.session_state.calc_rows = [0]
    st.session_state.calc_next = 0

st.header("FIDE rating calculator")
st.caption("Your rating change for a set of games, the way FIDE computes it: expected score "
           "from table 8.1.2 (or the logistic formula most calculator pages use), the 400-point "
           "rule, K reduced by the 700 rule, and one rounding of the total.")

left, middle, right = st.columns(3)
rating = left.number_input("Your rating", min_value=0, max_value=3500, value=1500, step=1,
                           key="calc_rating")
k_choice = middle.segmented_control(
    "K (development coefficient)", K_CHOICES, default="20", required=True, key="calc_k",
    format_func=lambda k: "other…" if k == "other" else f"K {k}",
    help="40: fewer than 30 games, or a junior under 2300; 20: the rest; 10: once rated "
         "2400 or more.")
if k_choice == "other":
    k = middle.number_input("K", min_value=1, max_value=100, value=15, step=1,
                            key="calc_k_other")
else:
    k = int(k_choice)
rules = right.selectbox(
    "Rules", RULES, key="calc_rules",
    help="fide-2025-10: players rated 2650 or more are exempt from the 400-point rule "
         "(amendment of 1 October 2025); fide-2024-03: the rule binds everyone.")
method_col, cap_col = st.columns([2, 1])
method = method_col.radio(
    "Expected score", ["table", "formula"], horizontal=True, key="calc_method",
    format_func=lambda m: "FIDE table 8.1.2" if m == "table" else "formula 1 / (1 + 10^(−D/400))")
cap_400 = cap_col.toggle("400-point rule", value=True, key="calc_cap",
                         help="A rating difference of more than 400 points counts as 400.")

st.subheader("Games")
head = st.columns([2, 3, 1.3, 1.3, 0.6])
for col, text in zip(head, ("Opponent's rating", "Result", "Expected", "Change"),
                     strict=False):
    col.markdown(f"**{text}**")
games: list[tuple[int, Fraction]] = []
outputs = []
for rid in list(st.session_state.calc_rows):
    opp_col, res_col, exp_col, chg_col, del_col = st.columns([2, 3, 1.3, 1.3, 0.6],
                                                               vertical_alignment="center")
    opponent = opp_col.number_input("Opponent's rating", min_value=0, max_value=3500,
                                    value=DEFAULT_OPPONENT, step=1, key=f"calc_opp_{rid}",
                                    label_visibility="collapsed")
    picked = res_col.segmented_control(
        "Result", list(RESULTS), default="1", required=True, key=f"calc_res_{rid}",
        format_func=RESULT_LABELS.__getitem__, label_visibility="collapsed")
    del_col.button("", icon=":material/close:", key=f"calc_del_{rid}", on_click=_remove_row,
                   args=(rid,), help="Remove this game")
    games.append((int(opponent), RESULTS[picked]))
    outputs.append((exp_col.empty(), chg_col.empty()))
st.button("Add a game", key="calc_add", on_click=_add_row, icon=":material/add:")

if not games:
    st.info("Add a game to see the rating change.")
    st.stop()
try:
    result = api.calc(int(rating), int(k), games, cap_400=cap_400, rules=rules, expected=method)
except ValueError as exc:
    st.error(str(exc))
    st.stop()
data = api.calc_json(result)
for (exp_out, chg_out), game in zip(outputs, data["games"], strict=True):
    exp_out.markdown(f"{game['expected']}")
    chg_out.markdown(f"{ui.signed(game['change'])}")

st.divider()
k_out, change_out, new_out = st.columns(3)
k_out.metric("K used", f"{result.k}")
change_out.metric("Rating change", ui.signed(data["change"]),
                  help="K × Σ(score − expected), unrounded")
new_out.metric("New rating", f"{result.new_rating}",
               help="Rating + the change rounded once, half away from zero")
floor = api.floor_note(result.new_rating)
if floor is not None:
    new_out.caption(floor[:1].upper() + floor[1:] + ".")
n = len(result.games)
if result.rule_700_applied:
    st.info(f"**700 rule applied:** K {result.k_requested} × {n} games = "
            f"{result.k_requested * n} > {MAX_K_TIMES_GAMES}, so K becomes the largest whole "
            f"number with K × {n} ≤ {MAX_K_TIMES_GAMES}: {MAX_K_TIMES_GAMES} ÷ {n} → "
            f"**K {result.k}**.")
if not result.rule_400_applied:
    if cap_400 and rating >= CAP_EXEMPT_FROM:
        st.caption(f"400-point rule not applied: rated {CAP_EXEMPT_FROM} or more, exempt under "
                   f"{rules}.")
    else:
        st.caption("400-point rule switched off: the real rating difference is used.")
terms = " + ".join(f"({g['score']} − {g['expected']})" for g in data["games"][:6])
st.caption(f"Change = K × Σ(score − expected) = {result.k} × ({terms}{' + …' if n > 6 else ''})"
           f" = {ui.signed(data['change'])}; new rating = {int(rating)} "
           f"{ui.signed(data['change'])}, rounded once = {result.new_rating}.")
