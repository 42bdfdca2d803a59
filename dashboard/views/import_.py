"""Import: a player's games from Lichess (optional token, never stored) or from PGN/NDJSON
files. The other pages refresh by themselves: their caches are keyed on the database state."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import streamlit as st
import ui

from tracker import api
from tracker.api import SPEEDS, ImportSummary, TrackerError

#: Seconds between two progress-bar updates (each one is a message to the browser).
PROGRESS_EVERY = 0.25


def progress_bar(label: str) -> tuple[Any, Callable[[int, int, int | None], None]]:
    """A progress bar and the ``progress(games_read, done, total)`` callback that moves it."""
    bar = st.progress(0.0, text=label)
    last = [0.0]
    shown = [0.0]

    def update(games: int, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_EVERY:
            return
        last[0] = now
        fraction = min(done / total, 1.0) if total else 0.0
        shown[0] = fraction
        bar.progress(fraction, text=f"{label}: {games:,} games read")

    def wait(line: str) -> None:
        """Lichess asked to wait (HTTP 429): the bar says so until the games flow again."""
        bar.progress(shown[0], text=f"{label}: {ui.md(line)}")

    update.wait = wait  # type: ignore[attr-defined]  # the Lichess import's on_wait
    return bar, update


def show_summary(summary: ImportSummary) -> None:
    for warning in summary.warnings:
        st.warning(ui.md(warning))
    line = ui.md(summary.line())
    if summary.status == "complete":
        st.success(line)
    elif summary.status == "partial":
        st.warning(line)
    else:
        st.error(line)
    if summary.player:
        st.session_state["player"] = summary.player
    st.page_link("views/overview.py", label="See the overview", icon=":material/show_chart:")


def run_import(label: str,
               call: Callable[[Callable[[int, int, int | None], None]], ImportSummary]) -> None:
    """``call(progress)`` under a progress bar labelled ``label``: its summary shown, or its
    error in one line."""
    bar, update = progress_bar(label)
    try:
        summary = call(update)
    except TrackerError as exc:
        bar.empty()
        st.error(ui.md(exc))
    else:
        bar.progress(1.0, text="Done")
        show_summary(summary)


if ui.read_only():  # not in the navigation then; and the API would refuse the import anyway
    st.stop()

st.header("Import games")
st.caption(f"Into {ui.code(ui.db_label())}. Importing again only adds what is new; nothing is "
           "duplicated.")

from_lichess, from_file = st.tabs(["From Lichess", "From a file"])

with from_lichess:
    with st.form("import_lichess"):
        username = st.text_input("Lichess username", key="import_username")
        token = st.text_input(
            "API token (optional)", type="password", key="import_token",
            help="A personal token lets Lichess send games faster. It is used for this import "
                 "only and never stored.")
        perf = st.selectbox("Perf", ["all", *SPEEDS], key="import_perf",
                            help="Only games of this speed (all: every game).")
        full = st.checkbox("Download everything again (not only games since the last import)",
                           key="import_full")
        go = st.form_submit_button("Import from Lichess", type="primary")
    if go:
        import_user = getattr(api, "import_user", None)
        if not username.strip():
            st.warning("Type a Lichess username first.")
        elif import_user is None:
            st.error("This version of tracker cannot download from Lichess yet: export your "
                     "games from lichess.org and use “From a file”.")
        else:
            download = import_user  # not None here, also inside the lambda
            run_import(f"Downloading {username.strip()}'s games", lambda update: download(
                username.strip(), db=ui.store(), perf=None if perf == "all" else perf,
                full=full, token=token or None, progress=update,
                on_wait=getattr(update, "wait", None)))

with from_file:
    with st.form("import_file", clear_on_submit=True):
        files = st.file_uploader(
            "Lichess PGN or NDJSON export (plain, .gz, .bz2, .xz or .zst)",
            accept_multiple_files=True, key="import_files",
            help="The format is recognised from the content, not the name. The Lichess open "
                 "database's monthly .pgn.zst files work too (with a name below).")
        user = st.text_input(
            "Whose history is this? (optional)", key="import_user",
            help="Only this player's games are kept. Empty: the player in most games.")
        go_file = st.form_submit_button("Import file", type="primary")
    if go_file:
        if not files:
            st.warning("Choose a file first.")
        else:
            run_import("Importing", lambda update: api.import_uploads(
                [(f.name, f.getvalue()) for f in files], db=ui.store(),
                user=user.strip() or None, progress=update))
