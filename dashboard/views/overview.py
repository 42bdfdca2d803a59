"""Overview: the real Lichess rating and the hypothetical FIDE-style rating on one time axis."""

from __future__ import annotations

import charts
import streamlit as st
import strength_charts
import strength_ui
import ui

from tracker import api

player, perf = ui.pick_player_perf()
report = ui.report(player.id, perf)

st.header(f"{report.player} — {perf}")
fide_now = report.current_rating
now_band = report.current_band
band_now = None  # all models: the figure quoted is their median, the band beside it
if now_band is not None and now_band.median is not None:
    band_now = api.band_json(now_band)
k_next = report.next_k()
lichess, fide, counted, k = st.columns(4)
lichess.metric("Lichess rating now", ui.number(report.current_lichess),
               help="Lichess's own number after the last rated game (Glicko-2).")
fide.metric("FIDE-style rating now",
            ui.number(band_now["median"] if band_now else fide_now, "unrated"),
            help=f"The rating in force for the next period, from FIDE's rules replayed month "
                 f"by month on these games, on the {report.scale_label}.")
fide.caption(f"on the {report.scale_label}")
if band_now is not None:
    fide.caption(f"the models' median; band {band_now['min']}–{band_now['max']}")
unrated = api.unrated_text(report)
if unrated is not None:  # the metric says "unrated"; the caption says why, once
    why = unrated.removeprefix("unrated: ")
    fide.caption(why[:1].upper() + why[1:])
counted.metric("Games counted", f"{report.counted:,}",
               help="Games that count for FIDE's method (rated, finished, standard chess, "
                    "against a rated human opponent).")
counted.caption(f"of {len(report.games):,} {perf} games")
k.metric("K next period", ui.number(k_next),
         help="The development coefficient for the next month, before the 700 rule "
              "(K × games in the month ≤ 700).")
if k_next is None:
    k.caption("no K while unrated: the next games go to the initial-rating pool")
if report.scale == ui.LICHESS_SCALE:
    st.caption(ui.SCALES_NOTE)
else:
    st.caption(f"The FIDE-style figures are on the {report.scale_label}: every opponent's "
               "Lichess rating is mapped to FIDE's scale by the model before FIDE's rules "
               "run. The Lichess line stays Lichess's own number."
               + (" With all models, the line is their median and the shade their band."
                  if report.scale == ui.ALL_MODELS else ""))
if report.real and report.mean_abs_gap is not None:
    st.caption(f"Against your real FIDE rating ({report.real_list} list): mean gap "
               f"{float(report.mean_abs_gap):.0f} points (hypothetical − real, where both "
               "exist).")

strength = strength_ui.player_strength(player.id, perf)
figure = ui.overview_figure(player.id, perf)
if strength is not None:
    figure = strength_charts.add_levels(figure, strength.months)
st.plotly_chart(figure, key="overview_chart", config={"displaylogo": False})
if strength is not None:
    recent = strength.recent.level
    st.caption(
        f"Green squares: the level each month's analysed games show together, with its 10–90 % "
        f"range, from the moves alone (model {strength.model or '-'}; never a rating), on the "
        f"Lichess {perf} scale. The last {strength.recent.games} analysed games show "
        + (f"{recent.estimate} ({recent.low}–{recent.high})." if recent else "no level.")
        + (f" {strength.note}" if strength.note else ""))

stretches = charts.unrated_stretches(report.periods, report.unrated_reason())
if stretches:
    st.markdown("**Unrated stretches** (shaded):\n" + "\n".join(
        f"- {s.label()}" for s in stretches))
s = report.settings
start = "unrated" if s.start_rating is None else f"from {s.start_rating}"
st.caption(f"Replay settings: start {start}, rules {s.rules}, expected score {s.expected}, "
           f"provisional opponents {'counted' if s.count_provisional else 'left out'} "
           "(change them on the Settings page).")
