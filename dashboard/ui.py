"""What the pages share: the database, cached queries, the player and perf pickers, messages.

Caching: every query is keyed on the database URL and :func:`tracker.store.queries.data_version`
(a fingerprint that changes when an import lands), plus the player, the perf and the player's
saved settings for a replay. Nothing is keyed on time, so a page shows new data as soon as an
import lands and recomputes nothing otherwise.
"""

from __future__ import annotations

from typing import Any, Final

import charts
import streamlit as st
from plotly.graph_objects import Figure

from tracker import api
from tracker.config import database_url
from tracker.errors import TrackerError
from tracker.replaying import NoGamesError, PlayerSettings, ReplayReport
from tracker.store import queries
from tracker.store.db import Store

#: Reports and figures kept per process: a 50,000-game report holds its games in memory.
MAX_REPORTS: Final = 4

IMPORT_PAGE: Final = "pages/import_.py"
SCALES_NOTE: Final = (
    "Two scales on one axis: the Lichess rating is Glicko-2 on Lichess's pool, the FIDE-style "
    "rating is FIDE's method applied to the same games. A Lichess 1500 is not a FIDE 1500."
)

SettingsKey = tuple[int | None, int | None, str | None, str | None, bool | None]


def db_url() -> str:
    """The database the dashboard shows: ``$TRACKER_DB`` (set by ``tracker dashboard``)."""
    return database_url(None)


@st.cache_resource(show_spinner=False)
def _store(url: str) -> Store:
    return Store(url)


def store() -> Store:
    """The open database; a message and a stop (not a traceback) when it cannot be opened."""
    try:
        return _store(db_url())
    except TrackerError as exc:
        st.error(f"The database cannot be opened: {exc}")
        st.stop()
        raise  # unreachable: st.stop() raises


def data_version() -> tuple[int, int]:
    """The database's fingerprint now (one cheap query per page run)."""
    return queries.data_version(store())


@st.cache_data(show_spinner=False, max_entries=16)
def _players(url: str, version: tuple[int, int]) -> list[queries.PlayerSummary]:
    return api.players(db=_store(url))


def players() -> list[queries.PlayerSummary]:
    """Tracked players that have games, most games first."""
    found = _players(db_url(), data_version())
    return sorted((p for p in found if p.games), key=lambda p: (-p.games, p.id))


def settings_key(user_id: str) -> SettingsKey:
    """A player's saved settings as a hashable key (part of every replay cache key)."""
    s: PlayerSettings = api.settings(user_id, db=store())
    return (s.start_rating, s.birth_year, s.rules, s.expected, s.count_provisional)


@st.cache_resource(show_spinner=False, max_entries=MAX_REPORTS)
def _report(url: str, version: tuple[int, int], user_id: str, perf: str,
            settings: SettingsKey) -> ReplayReport:
    start_rating, birth_year, rules, expected, count_provisional = settings
    return api.replay(user_id, perf, db=_store(url), start_rating=start_rating,
                      birth_year=birth_year, rules=rules, expected=expected,
                      count_provisional=count_provisional)


@st.cache_resource(show_spinner=False, max_entries=MAX_REPORTS)
def _overview_figure(url: str, version: tuple[int, int], user_id: str, perf: str,
                     settings: SettingsKey) -> Figure:
    return charts.overview_figure(_report(url, version, user_id, perf, settings))


def _key(user_id: str, perf: str) -> tuple[str, tuple[int, int], str, str, SettingsKey]:
    return db_url(), data_version(), user_id, perf, settings_key(user_id)


def report(user_id: str, perf: str) -> ReplayReport:
    """The replay of the player's games of ``perf`` with their saved settings (cached).

    A player without games in that perf is a message and a stop.
    """
    try:
        with st.spinner(f"Replaying {user_id}'s {perf} games…"):
            return _report(*_key(user_id, perf))
    except NoGamesError as exc:
        st.warning(str(exc))
        st.stop()
        raise


def overview_figure(user_id: str, perf: str) -> Figure:
    """The Overview chart of that replay (cached with the report)."""
    return _overview_figure(*_key(user_id, perf))


def pick_player_perf() -> tuple[queries.PlayerSummary, str]:
    """The player and perf pickers in the sidebar (remembered across pages and in the URL).

    Only players with games and only perfs with games are offered. An empty database is a
    message pointing to the Import page, and a stop.
    """
    found = players()
    if not found:
        st.info("The database holds no games yet: import your games first.")
        st.page_link(IMPORT_PAGE, label="Import games", icon=":material/download:")
        st.caption(f"Database: `{db_url()}`")
        st.stop()
    by_id = {p.id: p for p in found}
    if st.session_state.get("player") not in by_id:
        st.session_state["player"] = found[0].id
    player = by_id[st.sidebar.selectbox(
        "Player", list(by_id), key="player", format_func=lambda uid: by_id[uid].username,
        bind="query-params", persist_state="session",
    )]
    perfs = {p.perf: p.games for p in player.perfs if p.games}
    if st.session_state.get("perf") not in perfs:
        st.session_state["perf"] = next(iter(perfs))
    perf = st.sidebar.selectbox(
        "Perf", list(perfs), key="perf", format_func=lambda p: f"{p} — {perfs[p]:,} games",
        bind="query-params", persist_state="session",
    )
    return player, perf


def signed(x: Any) -> str:
    """A change as people read it: ``+15.20``, ``-4.80``, ``0.00``; ``—`` for none."""
    if x is None:
        return "—"
    return f"{x:+}" if x else f"{x}"


def number(x: int | None, empty: str = "—") -> str:
    return empty if x is None else f"{x}"
