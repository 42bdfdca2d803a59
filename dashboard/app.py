"""The tracker dashboard: ``tracker [--db URL] dashboard`` runs this with ``streamlit run``.

Pages live in ``views/`` next to this file — not ``pages/``, which Streamlit would also take
for its old file-based multipage app (raw file names in the sidebar, "Page not found" on a
direct link); shared widgets and cached queries in ``ui.py``; figures in ``charts.py``.
Everything shown comes from :mod:`tracker.api`: the dashboard computes nothing the CLI could
not print. Paths are relative to this file, so the app runs from a source checkout
(``dashboard/``) and from an installed wheel (``tracker/_dashboard/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # ``streamlit run`` adds it; AppTest and others may not
    sys.path.insert(0, str(HERE))

import ui  # noqa: E402

from tracker.api import DatabaseOperationalError, TrackerError  # noqa: E402

PAGES = HERE / "views"

st.set_page_config(page_title="tracker — FIDE-style rating from Lichess games", page_icon="♞",
                   layout="wide")

READ_ONLY = ui.read_only()


def read_only_import() -> None:
    """What ``/import`` shows on a read-only server (instead of Streamlit's "Page not
    found"): that it imports nothing, and where to import."""
    st.header("Importing is off on this server", anchor=False)
    st.markdown(ui.READ_ONLY_IMPORT)


page = st.navigation([
    st.Page(PAGES / "overview.py", title="Overview", icon=":material/show_chart:", default=True),
    st.Page(PAGES / "periods.py", title="Periods", icon=":material/calendar_month:"),
    st.Page(PAGES / "games.py", title="Games", icon=":material/list:"),
    st.Page(PAGES / "group.py", title="Group", icon=":material/groups:", url_path="group"),
    st.Page(PAGES / "calculator.py", title="Calculator", icon=":material/calculate:"),
    # Read-only (tracker dashboard --read-only): no Import page in the navigation; its URL
    # says that the server is read-only.
    st.Page(read_only_import, title="Import (read-only)", icon=":material/lock:",
            url_path="import", visibility="hidden") if READ_ONLY
    else st.Page(PAGES / "import_.py", title="Import", icon=":material/download:",
                 url_path="import"),
    st.Page(PAGES / "settings.py", title="Settings", icon=":material/settings:"),
])
if READ_ONLY:  # said on every page, above its content
    st.info(ui.READ_ONLY_NOTE, icon=":material/lock:")

try:
    page.run()
except DatabaseOperationalError as exc:
    # SQLite answers "database is locked" when an import holds the write lock too long.
    if "locked" in str(exc).lower() or "busy" in str(exc).lower():
        st.warning("The database is busy: an import is writing to it. Try again in a moment; "
                   "nothing was lost.")
    else:
        st.error(f"Database error: {ui.md(getattr(exc, 'orig', exc))}")
except TrackerError as exc:
    st.error(ui.md(exc))
