"""What the pages share: the database, cached queries, the player and perf pickers, messages.

Caching: every query is keyed on the database URL and :func:`tracker.api.data_version`
(a fingerprint that changes with every batch of games written: it holds the store's write
counter, which the saved replay passes are keyed on too), plus the player, the perf and the player's
saved settings for a replay. Nothing is keyed on time, so a page shows new data as soon as an
import lands and recomputes nothing otherwise.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Final

import charts
import streamlit as st
from plotly.graph_objects import Figure

from tracker import api
from tracker.api import (
    SPEEDS,
    NoGamesError,
    PlayerSettings,
    PlayerSummary,
    ReplayReport,
    Store,
    TrackerError,
)

#: Reports and figures kept per process: a 50,000-game report holds its games in memory.
MAX_REPORTS: Final = 4

IMPORT_PAGE: Final = "views/import_.py"
SCALES_NOTE: Final = (
    "Two scales on one axis: the Lichess rating is Glicko-2 on Lichess's pool, the FIDE-style "
    "rating is FIDE's method applied to the same games. A Lichess 1500 is not a FIDE 1500."
)

#: :func:`tracker.api.data_version`: games, newest run's end (ms), the store's write counter.
DataVersion = tuple[int, int, int]
SettingsKey = tuple[int | None, int | None, str | None, str | None, bool | None, str | None,
                    str | None]


#: The characters that make Markdown inside a line (emphasis, code, links and images, HTML,
#: entities, strikethrough, Streamlit's ``$…$`` formulas, the escape itself): each is
#: backslash-escaped, which CommonMark makes literal.
_INLINE_MARKUP: Final = re.compile(r"([\\`*_\[\]<>~$&|])")
#: A character that starts a block (a heading, list, quote, rule) at the start of a text.
_BLOCK_START: Final = re.compile(r"^(\s*\d*)([#>+=.)-])")
#: What Markdown turns into something else inside plain text, escaped or not:
#: ``scheme://``, ``www.`` and ``@`` (links, by GitHub-flavoured Markdown), ``:name:``
#: and ``:material/name:`` (Streamlit's emoji and icons). A word joiner (U+2060: invisible,
#: zero width) before the last character (after the first colon of a code) keeps it text.
_AUTOLINK: Final = re.compile(r"(?i)://|www\.|@")
_SHORTCODE: Final = re.compile(r":(?=[A-Za-z][\w/+-]*:)")
WORD_JOINER: Final = "\u2060"


def sentence(text: str) -> str:
    """``text`` as a sentence that follows a full stop: its first letter upper-case and a full
    stop at its end (``"the rapid model applied to blitz"`` → ``"The rapid model applied to
    blitz."``); ``""`` stays ``""``."""
    text = text.strip()
    if not text:
        return ""
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def md(value: object) -> str:
    """``value`` as literal text inside Streamlit Markdown: line breaks made spaces, the
    characters of inline markup backslash-escaped, a block marker at its start escaped, and
    what would still become a link, an emoji or an icon broken by a word joiner. Every text
    that comes from data (a name from a PGN, an event, an opening, an error message quoting a
    file) goes through it, so ``![p](http://host/px.png)`` is shown as those characters,
    never as an image the browser fetches, a link, a heading, HTML, a ``:red[…]`` colour or
    a ``$…$`` formula."""
    text = " ".join(str(value).splitlines())
    text = _AUTOLINK.sub(lambda m: m.group(0)[:-1] + WORD_JOINER + m.group(0)[-1:], text)
    text = _SHORTCODE.sub(":" + WORD_JOINER, text)
    text = _INLINE_MARKUP.sub(r"\\\1", text)
    return _BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), text)


def code(value: object) -> str:
    """``value`` as a Markdown code span: shown literally, whatever it holds (the fence is one
    backtick longer than any run of backticks inside)."""
    text = " ".join(str(value).splitlines())
    fence = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def db_url() -> str:
    """The database the dashboard shows: ``$TRACKER_DB`` (set by ``tracker dashboard``).
    Never shown as is: it may hold a password (see :func:`db_label`)."""
    return api.database_url(None)


def db_label() -> str:
    """The database's URL for the page, password hidden."""
    return api.database_label(db_url())


def read_only() -> bool:
    """Whether the dashboard is served read-only (``tracker dashboard --read-only`` sets
    ``$TRACKER_READ_ONLY``): no Import page, Settings shown but not editable, and
    :mod:`tracker.api` refuses every write on its store."""
    return api.read_only_mode()


#: What the read-only server's ``/import`` says.
READ_ONLY_IMPORT: Final = (
    "This dashboard is served read-only (`tracker dashboard --read-only`): it imports "
    "nothing and changes nothing. Import a player's games with the `tracker` command where the "
    "database is kept: `tracker import USERNAME` or `tracker import-file FILE`; the pages here "
    "show them at the next visit."
)
READ_ONLY_NOTE: Final = (
    "Read-only: this dashboard shows the database and changes nothing. Importing games, "
    "settings and FIDE links are done with the `tracker` command where the database is kept."
)


@st.cache_resource(show_spinner=False)
def _store(url: str) -> Store:
    # The dashboard creates the database, as imports do; read-only, it must exist.
    return api.open_store(url, create=not read_only())


def store() -> Store:
    """The open database; a message and a stop (not a traceback) when it cannot be opened."""
    try:
        return _store(db_url())
    except TrackerError as exc:
        st.error(f"The database cannot be opened: {md(exc)}")
        st.stop()
        raise  # unreachable: st.stop() raises


def data_version() -> DataVersion:
    """The database's fingerprint now (one cheap query per page run)."""
    return api.data_version(store())


@st.cache_data(show_spinner=False, max_entries=16)
def _players(url: str, version: DataVersion) -> list[PlayerSummary]:
    return api.players(db=_store(url))


def players() -> list[PlayerSummary]:
    """Tracked players that have games, most games first."""
    found = _players(db_url(), data_version())
    return sorted((p for p in found if p.games), key=lambda p: (-p.games, p.id))


def settings_key(user_id: str) -> SettingsKey:
    """A player's saved settings as a hashable key (part of every replay cache key)."""
    s: PlayerSettings = api.settings(user_id, db=store())
    return (s.start_rating, s.birth_year, s.rules, s.expected, s.count_provisional,
            s.start_scale, s.chapter)


RealKey = tuple[tuple[str, tuple[tuple[str, int], ...]], ...]


@st.cache_resource(show_spinner=False, max_entries=MAX_REPORTS)
def _report(url: str, version: DataVersion, user_id: str, perf: str,
            settings: SettingsKey, scale: str, real: RealKey, fide_list: str) -> ReplayReport:
    # ``real`` is in the key because the replay compares with the stored FIDE list, which a
    # link changes without changing the games.
    start_rating, birth_year, rules, expected, count_provisional, start_scale, chapter = settings
    return api.replay(user_id, perf, db=_store(url), start_rating=start_rating,
                      birth_year=birth_year, rules=rules, expected=expected,
                      count_provisional=count_provisional, scale=scale,
                      start_scale=start_scale, chapter=chapter, fide_list=fide_list)


@st.cache_resource(show_spinner=False, max_entries=MAX_REPORTS)
def _overview_figure(url: str, version: DataVersion, user_id: str, perf: str,
                     settings: SettingsKey, scale: str, real: RealKey, fide_list: str
                     ) -> Figure:
    return charts.overview_figure(
        _report(url, version, user_id, perf, settings, scale, real, fide_list),
        {kind: months for kind, months in real})


#: The real FIDE list drawn beside a perf besides the standard one (the models estimate a
#: standard rating; the matching rapid or blitz list is shown too).
MATCHING_LIST: Final = {"rapid": "rapid", "blitz": "blitz", "bullet": "blitz"}


def real_lines(user_id: str, perf: str) -> RealKey:
    """The player's real FIDE lists for this perf, ``()`` when no FIDE id is linked: the
    standard list, and the rapid or blitz list matching the perf. Read each run (a link does
    not change the games, so it is not in the data version)."""
    kinds = ["standard", *([MATCHING_LIST[perf]] if perf in MATCHING_LIST else [])]
    out = []
    for kind in kinds:
        months = api.fide_ratings(user_id, kind, db=store())
        if months:
            out.append((kind, tuple((m.month, m.rating) for m in months)))
    return tuple(out)


#: The real FIDE list the gap compares with, picked on the Overview (standard by default:
#: what the models estimate).
_FIDE_LIST: Final = "_picked_fide_list"


def compared_list(real: RealKey) -> str:
    """The real FIDE list the replay compares with: the one picked, if the player has it,
    else ``standard``."""
    picked = st.session_state.get(_FIDE_LIST, "standard")
    return picked if picked in {kind for kind, _ in real} else "standard"


def pick_fide_list(user_id: str, perf: str, where: Any) -> None:
    """With a FIDE id linked: which real list the gap compares with (standard, or the rapid or
    blitz list matching the perf), a control in ``where``."""
    kinds = [kind for kind, _ in real_lines(user_id, perf)]
    if len(kinds) < 2:
        return
    st.session_state["fide_list"] = compared_list(real_lines(user_id, perf))
    where.segmented_control(
        "Compare with the real FIDE list", kinds, key="fide_list", required=True,
        on_change=lambda: st.session_state.__setitem__(_FIDE_LIST,
                                                       st.session_state["fide_list"]),
        help="The models estimate a standard rating, so standard is the default comparison.")


def _key(user_id: str, perf: str
         ) -> tuple[str, DataVersion, str, str, SettingsKey, str, RealKey, str]:
    real = real_lines(user_id, perf)
    return (db_url(), data_version(), user_id, perf, settings_key(user_id),
            current_scale(perf), real, compared_list(real))


def report(user_id: str, perf: str) -> ReplayReport:
    """The replay of the player's games of ``perf`` with their saved settings (cached).

    A player without games in that perf is a message and a stop.
    """
    try:
        with st.spinner(f"Replaying {user_id}'s {perf} games…"):
            return _report(*_key(user_id, perf))
    except NoGamesError as exc:
        st.warning(md(exc))
        st.stop()
        raise


def overview_figure(user_id: str, perf: str) -> Figure:
    """The Overview chart of that replay (cached with the report), with the player's real
    FIDE lists when a FIDE id is linked."""
    return _overview_figure(*_key(user_id, perf))


#: Query parameters: the stable keys (``?player=indexinator&perf=blitz``), never the labels.
PLAYER_PARAM: Final = "player"
PERF_PARAM: Final = "perf"
SCALE_PARAM: Final = "scale"
#: The scale pick, kept outside the widget (a widget's own state does not survive a page
#: switch); with the URL it was read from, so a typed URL wins over the remembered pick.
_SCALE_PICKED: Final = "_picked_scale"
_SCALE_URL_SEEN: Final = "_scale_url_seen"
LICHESS_SCALE: Final = "lichess"
ALL_MODELS: Final = "all"


def scale_options(perf: str) -> dict[str, str]:
    """The scales a replay of ``perf`` can use, key → label: the Lichess numbers, each model
    covering the perf, all of them (their median and band), and each group's club model
    fitted for the perf (``club:NAME``; never part of "all")."""
    models = api.scale_models(perf)
    # Short labels: the sidebar is ~26 characters wide.
    out = {}
    if len(models) > 1:
        out[ALL_MODELS] = "FIDE scale: all models (median)"
    elif models:
        out[ALL_MODELS] = f"FIDE scale: {models[0].key}"
    out.update({m.key: f"{m.key} alone" + (" (the same)" if len(models) == 1 else "")
                for m in models})
    out.update({key: f"club model: {key.removeprefix('club:')}"
                for key, perfs in api.club_scales(db=store()) if perf in perfs})
    out[LICHESS_SCALE] = "Lichess scale (raw numbers)"
    return out


def pick_scale(user_id: str, perf: str) -> str:
    """The scale picker in the sidebar, kept in the URL (``?scale=lebowitz``): a URL not
    seen before sets it; else the pick of this session; else the player's saved default."""
    options = scale_options(perf)
    url = _url_param(SCALE_PARAM)
    if url is not None and url != st.session_state.get(_SCALE_URL_SEEN):
        st.session_state[_SCALE_URL_SEEN] = url
        key = url if url in options else url.lower()  # a club's name keeps its case
        if key in options:
            st.session_state[_SCALE_PICKED] = key
        else:
            st.sidebar.warning(f"{md(repr(url))} is not a scale for {perf}: use one of "
                               f"{', '.join(options)}.")
    saved = api.settings(user_id, db=store()).resolved(perf).scale
    if st.session_state.get(_SCALE_PICKED) not in options:
        st.session_state[_SCALE_PICKED] = saved if saved in options else api.default_scale(perf)
    if saved not in options:  # one rule with the CLI: the saved scale replaced, and said so
        st.sidebar.caption(api.saved_scale_note(saved, perf))
    st.session_state["scale"] = st.session_state[_SCALE_PICKED]
    picked = str(st.sidebar.selectbox(
        "Scale", list(options), key="scale", format_func=options.__getitem__,
        on_change=lambda: st.session_state.__setitem__(_SCALE_PICKED,
                                                       st.session_state["scale"]),
        help="The scale of the opponents' ratings the replay uses: Lichess's own numbers, or "
             "mapped to FIDE's scale by a published model (all: every model, as a band)."))
    # The default scale stays out of the URL, so ?player=…&perf=… is the plain link.
    if picked == api.default_scale(perf):
        st.query_params.pop(SCALE_PARAM, None)
    elif _url_param(SCALE_PARAM) != picked:
        st.query_params[SCALE_PARAM] = picked
        st.session_state[_SCALE_URL_SEEN] = picked
    return picked


def current_scale(perf: str) -> str:
    """The scale picked on this page (see :func:`pick_scale`), the perf's default if none."""
    picked = st.session_state.get(_SCALE_PICKED, api.default_scale(perf))
    return picked if picked in scale_options(perf) else api.default_scale(perf)


def scale_caption(report: ReplayReport) -> None:
    """Every page with figures says which scale they are on (and a saved scale replaced)."""
    st.caption(f"Figures on the **{md(report.scale_label)}**"
               + (" — with several models, each figure is their median." if report.banded
                  else "."))
    if report.scale_note:
        st.caption(md(report.scale_note[:1].upper() + report.scale_note[1:] + "."))


def next_k_text(report: ReplayReport) -> str:
    """K for the next period: the models' K where they agree, else their range; ``—`` while
    unrated."""
    last = report.periods[-1] if report.periods else None
    if last is None:
        return "—"
    results = list(last.band.results.values()) if report.banded and last.band else [last.result]
    ks = sorted({r.next_k for r in results if r.next_k is not None})
    if not ks:
        return "—"
    return str(ks[0]) if len(ks) == 1 else f"{ks[0]}–{ks[-1]}"


#: The (player, perf) this session last wrote to the URL: a different URL was typed or
#: bookmarked, so it wins over the pickers' remembered values.
_URL_WRITTEN: Final = "_url_written"
#: The pick, kept outside the widgets: a widget's own state does not survive a page switch.
_PICKED: Final = {"player": "_picked_player", "perf": "_picked_perf"}
VARIANTS_ONLY: Final = "FIDE rates standard chess only: this player's games are all variants"


def find_player(found: list[PlayerSummary], name: str) -> PlayerSummary | None:
    """The player ``name`` designates: the user id or the display name, case-insensitively."""
    wanted = name.strip().lower()
    return next((p for p in found if p.id == wanted or p.username.lower() == wanted), None)


def standard_perfs(player: PlayerSummary) -> dict[str, int]:
    """The player's standard-chess perfs with games (most played first) and their counts.

    Variants (chess960, threeCheck…) are left out: FIDE counts standard chess only, so their
    replay would count no game.
    """
    return {p.perf: p.games for p in player.perfs if p.games and p.perf in SPEEDS}


def _url_param(name: str) -> str | None:
    value = st.query_params.get(name)
    return (value.strip() or None) if value is not None else None


def _remember(key: str) -> None:
    """``on_change`` of a picker: keep what was picked for the next run and the other pages."""
    st.session_state[_PICKED[key]] = st.session_state[key]


def _picker(label: str, options: list[str], key: str, format_func: Any) -> str:
    """A sidebar selectbox showing the remembered pick (set in ``_PICKED[key]`` beforehand)."""
    st.session_state[key] = st.session_state[_PICKED[key]]
    return st.sidebar.selectbox(label, options, key=key, format_func=format_func,
                                on_change=_remember, args=(key,))


def pick_player_perf() -> tuple[PlayerSummary, str]:
    """The player and perf pickers in the sidebar (remembered across pages and in the URL).

    Only players with games and only standard perfs with games are offered. The URL holds the
    stable keys, ``?player=<user id>&perf=<perf key>``; a URL not written by this session (typed
    or bookmarked) sets the pickers, matched case-insensitively (the display name works too).
    An empty database, or a player whose games are all variants, is a message and a stop.
    """
    found = players()
    if not found:
        st.info("The database holds no games yet: import your games first.")
        if not read_only():
            st.page_link(IMPORT_PAGE, label="Import games", icon=":material/download:")
        st.caption(f"Database: {code(db_label())}")
        st.stop()
    by_id = {p.id: p for p in found}
    url_player, url_perf = _url_param(PLAYER_PARAM), _url_param(PERF_PARAM)
    from_url = (url_player, url_perf) != st.session_state.get(_URL_WRITTEN)
    if from_url and url_player is not None:
        wanted = find_player(found, url_player)
        if wanted is None:
            st.sidebar.warning(f"No player {md(repr(url_player))} in this database.")
        else:
            st.session_state[_PICKED["player"]] = wanted.id
    if st.session_state.get(_PICKED["player"]) not in by_id:
        st.session_state[_PICKED["player"]] = found[0].id
    player = by_id[_picker("Player", list(by_id), "player", lambda uid: by_id[uid].username)]
    perfs = standard_perfs(player)
    if not perfs:
        _write_url(player.id, None)
        st.info(f"{VARIANTS_ONLY} ({', '.join(p.perf for p in player.perfs if p.games)}).")
        st.stop()
    if from_url and url_perf is not None:
        key = {p.lower(): p for p in SPEEDS}.get(url_perf.lower())
        if key in perfs:
            st.session_state[_PICKED["perf"]] = key
        else:
            st.sidebar.warning(_perf_not_here(url_perf, key, player.username))
    if st.session_state.get(_PICKED["perf"]) not in perfs:
        st.session_state[_PICKED["perf"]] = next(iter(perfs))
    perf = _picker("Perf", list(perfs), "perf",
                   lambda p: f"{p} — {perfs[p]:,} game{'s' * (perfs[p] != 1)}")
    _write_url(player.id, perf)
    pick_scale(player.id, perf)
    return player, perf


def picked_perf() -> str | None:
    """The perf picked on any page of this session (``None`` before the first pick)."""
    picked = st.session_state.get(_PICKED["perf"])
    return str(picked) if picked is not None else None


def share_perf(perf: str) -> None:
    """Remember ``perf`` as this session's pick, as the sidebar's perf picker does: another
    page (the Group page) passes its pick on to the player pages."""
    st.session_state[_PICKED["perf"]] = perf


def _perf_not_here(perf: str, key: str | None, username: str) -> str:
    """Why the URL's ``perf`` (the speed ``key``, ``None`` for none) is not picked, as
    Markdown: the player has no games of it; a variant (FIDE rates standard chess only); or
    no perf at all, in the CLI's words ("unknown perf 'blits': use one of …")."""
    if key is not None:
        return f"{md(username)} has no {key} games."
    if perf.lower() in {p.lower() for p in api.PERFS}:
        return f"{md(repr(perf))} is not a standard perf: FIDE rates standard chess only."
    try:
        api.perf_key(perf)
    except api.PerfError as exc:
        return md(str(exc))
    return md(f"unknown perf {perf!r}")  # not reached: ``perf`` is no speed


def _write_url(player: str, perf: str | None) -> None:
    """Put the stable keys in the URL (only when they change: each write is a message)."""
    if _url_param(PLAYER_PARAM) != player:
        st.query_params[PLAYER_PARAM] = player
    if perf is None:
        st.query_params.pop(PERF_PARAM, None)
    elif _url_param(PERF_PARAM) != perf:
        st.query_params[PERF_PARAM] = perf
    st.session_state[_URL_WRITTEN] = (player, perf)


#: Streamlit's table row height (pixels); tables are sized to their rows, so no empty or
#: half-clipped row shows under a short table.
ROW_HEIGHT: Final = 35
MAX_TABLE_ROWS: Final = 20


def table_height(rows: int, max_rows: int = MAX_TABLE_ROWS) -> int:
    """The height (pixels) that shows ``rows`` rows and the header exactly (up to
    ``max_rows`` rows, 20 by default; a longer table scrolls inside)."""
    return ROW_HEIGHT * (min(max(rows, 1), max_rows) + 1) + 3


#: The Periods table shows this many months before it scrolls inside: the page scrolls, with
#: every month of a few years' history in view.
MAX_PERIOD_ROWS: Final = 120


def signed(x: Any) -> str:
    """A change as people read it: ``+15.20``, ``-4.80``, ``0.00``, ``+2.5`` (a Fraction
    too, on Python 3.11); ``—`` for none."""
    if x is None:
        return "—"
    return api.figure(x, signed=True)


def number(x: int | Decimal | None, empty: str = "—") -> str:
    return empty if x is None else f"{x}"
