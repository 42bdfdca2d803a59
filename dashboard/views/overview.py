"""Overview: the answer first (the FIDE-style rating now, on the scale it says), then the real
Lichess rating and the hypothetical FIDE-style rating on one time axis."""

from __future__ import annotations

import charts
import streamlit as st
import strength_charts
import strength_ui
import ui

from tracker import api

player, perf = ui.pick_player_perf()
report = ui.report(player.id, perf)

st.header(f"{ui.md(report.player)} — {perf}", anchor=False)
ui.scale_caption(report)
if report.real:
    ui.pick_fide_list(player.id, perf, st)
band = report.current_band if report.banded else None
real_now = api.real_now(report)
columns = st.columns(5 if report.real else 4)
fide, *rest = columns
real_col = rest.pop(0) if report.real else None
lichess, counted, k = rest
fide.metric("FIDE-style rating now", api.rating_text(report.current_rating, "unrated"),
            help=f"The rating in force for the next period, from FIDE's rules replayed month "
                 f"by month on these games, on the {report.scale_label}.")
if band is not None and band.min is not None:
    fide.caption(f"the models' median; band {band.min}–{band.max}")
if api.has_half(report):  # how the half is rounded, said once
    st.caption(api.HALF_NOTE)
unrated = api.unrated_text(report)
if unrated is not None:  # the metric says "unrated"; the caption says why, once
    why = unrated.removeprefix("unrated: ")
    fide.caption(why[:1].upper() + why[1:])
if real_col is not None:
    real_col.metric(f"Real FIDE now ({report.real_list})", api.rating_text(real_now),
                    help="Your real FIDE rating, from FIDE's latest list of the kind compared "
                         "(linked FIDE id).")
    gap = api.gap_text(report)
    real_col.caption(f"The estimate is {gap}." if gap else "No month to compare yet.")
lichess.metric("Lichess rating now", ui.number(report.current_lichess),
               help="Lichess's own number after the last rated game (Glicko-2, Lichess's "
                    "scale).")
counted.metric("Games counted", f"{report.counted:,}",
               help="Games that count for FIDE's method (rated, finished, standard chess, "
                    "against a rated human opponent).")
counted.caption(f"of {api.plural(len(report.games), perf + ' game', ',')}")
k_next = ui.next_k_text(report)
k.metric("K next period", k_next,
         help="The development coefficient for the next month, before the 700 rule "
              "(K × games in the month ≤ 700); with several models, their range where they "
              "differ.")
if k_next == "—":
    k.caption("no K while unrated: the next games go to the initial-rating pool")
if report.scale == ui.LICHESS_SCALE:
    st.caption(ui.SCALES_NOTE)
else:
    st.caption("Every opponent's Lichess rating is mapped to FIDE's scale by the model before "
               "FIDE's rules run; the Lichess line stays Lichess's own number."
               + (" The bold line is the models' median, the shade their band; click a "
                  "model in the legend to draw its own line." if report.banded else ""))

strength = strength_ui.player_strength(player.id, perf)
figure = ui.overview_figure(player.id, perf)
# What a month's level alone needs said (the model weak there, outside its fitted range).
noted = {m.label: own for m in strength.months
         if (own := strength.own_note(m.level))} if strength is not None else {}
if strength is not None:
    figure = strength_charts.add_levels(figure, strength.months, noted)
st.plotly_chart(figure, key="overview_chart", config={"displaylogo": False})
if strength is not None:
    recent = strength.recent.level
    drawn_months = strength_charts.drawn_months(strength.months)
    drawn = len(drawn_months)
    flagged = [f"{m.label} ({noted[m.label]})" for m in drawn_months if m.label in noted]
    hidden = sum(1 for m in strength.months if m.level is not None) - drawn
    months = f"{hidden} month{'s' if hidden != 1 else ''}"
    narrow = f"a range narrower than {strength_charts.MAX_DRAWN_WIDTH} points"
    st.caption(
        (f"Green squares: the level each month's analysed games show together, with its "
         f"10–90 % range, from the moves and the clock setting (model {strength.model or '-'}; "
         f"never a rating), on the Lichess {strength.scale or perf} scale"
         + (f"; {months} with too few analysed games for {narrow} not drawn" if hidden else "")
         + (". Open squares, read with care: " + "; ".join(flagged) if flagged else "")
         if drawn else
         f"No monthly level drawn: {months} with analysed games, none with enough of them for "
         f"{narrow} (model {strength.model or '-'}, from the moves and the clock setting, on the "
         f"Lichess {strength.scale or perf} scale)")
        + f". The last {strength.recent.games} analysed games show "
        + (f"{recent.estimate} ({recent.low}–{recent.high})"
           + (f" — {recent.note}." if recent.note else ".") if recent else "no level.")
        + (f" {ui.sentence(raw)}" if (raw := strength.recent_uncalibrated()) else "")
        + (f" {ui.sentence(strength.note)}"
           if strength.note and not (recent and recent.note) else "")
        + (f" {strength.partial} game{'s' if strength.partial != 1 else ''} with evals for "
           f"part of the plies only count{'s' if strength.partial == 1 else ''} in no level."
           if strength.partial else ""))

conversion = api.conversion_text(report)
if conversion is not None:
    st.caption(conversion)
stretches = charts.unrated_stretches(report.periods, report.unrated_reason())
if stretches:
    st.markdown("**Unrated stretches** (shaded):\n" + "\n".join(
        f"- {s.label()}" for s in stretches))
s = report.settings
start = api.start_text(report).removeprefix("starting ")
st.caption(f"Replay settings: start {start}, rules {s.rules}, expected score "
           f"{s.expected}, provisional opponents "
           f"{'counted' if s.count_provisional else 'left out'} (change them on the Settings "
           "page).")
