"""Settings: a player's replay settings, saved in the database and shared with the CLI
(``tracker settings``)."""

from __future__ import annotations

from datetime import date

import streamlit as st
import ui

from tracker import api
from tracker.api import (
    EXPECTED_METHODS,
    MAX_START_RATING,
    MIN_START_RATING,
    RULES,
    SettingsError,
)

player, _perf = ui.pick_player_perf()
saved = api.settings(player.id, db=ui.store())
resolved = saved.resolved()

st.header(f"Replay settings — {ui.md(player.username)}")
st.caption("Saved in the database: `tracker replay` and every page of the dashboard use them "
           f"(`tracker settings {player.id}` shows the same).")


def fide_link_or_none(user_id: str) -> api.FideLink | None:
    try:
        return api.fide_show(user_id, db=ui.store())
    except api.NotLinkedError:
        return None


def show_read_only(user_id: str, settings: api.PlayerSettings) -> None:
    """The saved settings and FIDE link as text: a read-only dashboard changes nothing."""
    r = settings.resolved()
    st.table({
        "Setting": ["Start", "Birth year", "Rules version", "Expected score",
                    "Provisional opponents", "Default scale", "Start rating is on",
                    "FIDE chapter"],
        "Value": ["unrated" if r.start_rating is None else f"from {r.start_rating}",
                  str(r.birth_year or "not given"), r.rules, r.expected,
                  "counted" if r.count_provisional else "left out", r.scale,
                  "FIDE's scale" if r.start_scale == "fide" else "Lichess's scale",
                  settings.chapter or "by perf"],
    })
    link = fide_link_or_none(user_id)
    st.markdown("**Real FIDE rating**: " + (
        f"linked to FIDE {link.profile.fide_id} — {ui.md(link.profile.name)}" if link is not None
        else "no FIDE id linked"))
    st.caption(f"To change them: {ui.code(f'tracker settings {user_id} …')} or "
               f"{ui.code(f'tracker fide link {user_id} ID')} where the database is kept.")


if ui.read_only():
    show_read_only(player.id, saved)
    st.stop()

# The start is picked outside the form, so that the start rating and its scale are greyed out
# at once when the replay starts unrated (a widget inside a form reruns nothing until Save).
start = st.radio(
    "Start", ["unrated", "rating"], horizontal=True,
    index=0 if saved.start_rating is None else 1, key=f"set_start_{player.id}",
    format_func=lambda s: "unrated, as a newcomer to FIDE" if s == "unrated"
    else "from a FIDE rating (your real one)")
unrated = start == "unrated"
with st.form(f"settings_{player.id}"):
    start_rating = st.number_input(
        "Start rating (used when starting from a FIDE rating)", min_value=MIN_START_RATING,
        max_value=MAX_START_RATING, value=saved.start_rating or 1500, step=1,
        key=f"set_rating_{player.id}", disabled=unrated,
        help="Not used while the replay starts unrated." if unrated else None)
    birth_year = st.number_input(
        "Birth year (optional: enables the junior K 40)", min_value=1900,
        max_value=date.today().year, value=saved.birth_year, step=1, placeholder="not given",
        key=f"set_birth_{player.id}")
    rules = st.selectbox(
        "Rules version", RULES, index=RULES.index(resolved.rules), key=f"set_rules_{player.id}",
        help="fide-2025-10: the 2650 exemption from the 400-point rule; fide-2024-03: the "
             "rule binds everyone. One version for the whole replay.")
    expected = st.selectbox(
        "Expected score", EXPECTED_METHODS, index=EXPECTED_METHODS.index(resolved.expected),
        key=f"set_expected_{player.id}",
        format_func=lambda m: "FIDE table 8.1.2" if m == "table" else "logistic formula")
    provisional = st.checkbox(
        "Count games against provisional opponents (rating deviation ≥ 110)",
        value=resolved.count_provisional, key=f"set_prov_{player.id}")
    scales = {"all": "FIDE scale: all models covering the perf (their median; the default)",
              **{m.key: f"FIDE scale: {m.name}" for m in api.scale_models()},
              "lichess": "Lichess scale (the raw numbers)"}
    scale = st.selectbox(
        "Default scale", list(scales), format_func=scales.__getitem__,
        index=list(scales).index(resolved.scale) if resolved.scale in scales else 0,
        key=f"set_scale_{player.id}",
        help="The scale the pages open on (the sidebar picks another for a visit). A model "
             "that does not cover a perf falls back to that perf's default there (all models; "
             "the Lichess scale where no model covers it), and the pages say so.")
    start_scale = st.radio(
        "The start rating is", ["fide", "lichess"], horizontal=True,
        index=0 if resolved.start_scale == "fide" else 1, key=f"set_start_scale_{player.id}",
        format_func=lambda x: "a real FIDE rating" if x == "fide" else "a Lichess rating",
        disabled=unrated,
        help="Not used while the replay starts unrated." if unrated else None)
    chapters = {"": "by perf (classical and correspondence: standard; rapid, blitz, bullet: "
                    "rapid & blitz)", "standard": "standard", "rapid-blitz": "rapid & blitz"}
    chapter = st.selectbox(
        "FIDE chapter", list(chapters), format_func=chapters.__getitem__,
        index=list(chapters).index(saved.chapter or ""), key=f"set_chapter_{player.id}",
        help="FIDE rates standard games under its standard chapter and rapid and blitz games "
             "under the rapid & blitz chapter (no 2650 exemption; the 600-point rule).")
    submitted = st.form_submit_button("Save", type="primary")

def saved_chapter(settings: api.PlayerSettings) -> str:
    return settings.chapter or "by perf"


if submitted:
    try:
        new = api.settings(
            player.id, db=ui.store(),
            start_rating=int(start_rating) if start == "rating" else None,
            birth_year=int(birth_year) if birth_year is not None else None,
            rules=rules, expected=expected, count_provisional=bool(provisional),
            scale=scale, start_scale=start_scale, chapter=chapter or None,
        )
    except SettingsError as exc:
        st.error(ui.md(exc))
    else:
        r = new.resolved()
        st.success(
            f"Saved: start {'unrated' if r.start_rating is None else r.start_rating}, birth "
            f"year {r.birth_year or '—'}, rules {r.rules}, expected {r.expected}, provisional "
            f"opponents {'counted' if r.count_provisional else 'left out'}, scale {r.scale}, "
            f"chapter {saved_chapter(new)}. The other pages now replay with these settings.")

st.subheader("Real FIDE rating")
st.caption("Link your FIDE id to draw your real FIDE rating beside the replay (the standard "
           "list, and the rapid or blitz list matching the perf). FIDE's lists are fetched "
           "from Lichess; `tracker import` refreshes them, as does `tracker fide link`.")
link = fide_link_or_none(player.id)
if link is not None:
    p = link.profile
    current = ", ".join(f"{kind} {p.rating(kind)}" for kind in api.FIDE_LIST_KINDS
                        if p.rating(kind) is not None)
    st.markdown(f"Linked to FIDE **{p.fide_id}** — {ui.md(p.name)}"
                + (f" ({ui.md(p.federation)})" if p.federation else "")
                + (f": {current}" if current else ""))
with st.form(f"fide_{player.id}"):
    fide_id = st.text_input("FIDE id", value=str(link.profile.fide_id) if link else "",
                            key=f"fide_id_{player.id}",
                            help="The number on your ratings.fide.com profile, e.g. 35009192")
    linked = st.form_submit_button("Link and fetch" if link is None else "Link again (refresh)")
if linked:
    if not fide_id.strip():
        st.warning("Type a FIDE id first.")
    else:
        try:
            with st.spinner("Fetching FIDE's lists from Lichess…"):
                result = api.fide_link(player.id, fide_id.strip(), db=ui.store())
        except api.TrackerError as exc:
            st.error(ui.md(exc))
        else:
            c = result.counts
            st.success(f"Linked {ui.md(player.username)} to FIDE "
                       f"{result.link.profile.fide_id} {ui.md(result.link.profile.name)}: list "
                       f"months {c.new} new, {c.updated} updated, {c.unchanged} unchanged. The "
                       "Overview draws the real line.")
