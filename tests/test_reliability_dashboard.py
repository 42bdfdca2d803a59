"""Dashboard reliability: no page shows a database password, every uploaded file is imported,
``tracker dashboard`` stopped with SIGTERM takes its Streamlit server down with it."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from streamlit.testing.v1 import AppTest

from tests.conftest import CMRADE, DB2013, INDEXINATOR, default_sigint
from tracker import api
from tracker.store.db import Store

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
PAGES = ("views/overview.py", "views/periods.py", "views/games.py", "views/calculator.py",
         "views/import_.py", "views/settings.py")
PASSWORD = "S3cretPW_x9"
TIMEOUT = 60


def page_text(at: AppTest) -> str:
    """Everything the page sends to the browser, as text: every element's message, main area
    and sidebar alike."""
    parts: list[str] = []

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            parts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    text = "\n".join(parts)
    # and as the browser shows it: the Markdown escapes of a text from data undone
    # (dashboard/ui.py md(): a backslash before a markup character, a word joiner)
    shown = re.sub(r"\\\\(.)", r"\1", text.replace("\u2060", ""))
    return f"{text}\n{shown}"


def open_app(db: str, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("TRACKER_DB", db)
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    return at


def with_password(url: str) -> str:
    """``postgresql+psycopg://tracker@host:port/db`` with the password put in (the test
    server trusts every local login, so any password works)."""
    return url.replace("://tracker@", f"://tracker:{PASSWORD}@", 1)


def test_no_page_shows_the_postgresql_password(pg_url: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    url = with_password(pg_url)
    assert PASSWORD in url
    try:
        at = open_app(url, monkeypatch)
        assert "import your games first" in page_text(at)  # the empty database names itself
        shown = page_text(at)
        assert PASSWORD not in shown and "tracker:***@" in shown
        at.switch_page("views/import_.py").run()
        assert PASSWORD not in page_text(at) and "tracker:***@" in page_text(at)
        at.file_uploader(key="import_files").set_value(
            (INDEXINATOR.name, INDEXINATOR.read_bytes(), "application/x-ndjson"))
        at.text_input(key="import_user").set_value("indexinator")
        at.button[-1].click().run()
        assert any("read 2907, new 2907" in s.value for s in at.success)
        assert PASSWORD not in page_text(at)
        for page in PAGES:
            at.switch_page(page).run()
            assert not at.exception, [e.value for e in at.exception]
            assert PASSWORD not in page_text(at), page
    finally:
        with Store(pg_url) as s, s.engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))


def test_a_database_that_cannot_be_opened_never_shows_its_password(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql+psycopg://tracker:{PASSWORD}@127.0.0.1:{port}/tracker"
    at = open_app(url, monkeypatch)
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        shown = page_text(at)
        assert PASSWORD not in shown, page
    assert "tracker:***@127.0.0.1" in shown  # the import page still says which database


def test_the_database_label_hides_every_password() -> None:
    assert api.database_label(f"postgresql+psycopg://u:{PASSWORD}@h/db") == (
        "postgresql+psycopg://u:***@h/db")
    assert PASSWORD not in api.database_label(f"postgresql://u@h/db?password={PASSWORD}")
    assert api.database_label("/tmp/x.db") == "sqlite:////tmp/x.db"


def test_two_uploaded_files_with_the_same_name_are_both_imported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two ``lichess.pgn`` from different folders: 474 + 50 games, not 50."""
    db = tmp_path / "upload.db"
    at = open_app(str(db), monkeypatch)
    at.switch_page("views/import_.py").run()
    at.file_uploader(key="import_files").set_value([
        ("lichess.pgn", CMRADE.read_bytes(), "application/x-chess-pgn"),
        ("lichess.pgn", DB2013.read_bytes(), "application/x-chess-pgn"),
    ])
    at.button[-1].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("new 524," in s.value for s in at.success), [s.value for s in at.success]
    assert sum(p.games for p in api.players(db=db)) >= 474


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stopping_tracker_dashboard_stops_its_server(tmp_path: Path, sig: int) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = tmp_path / "t.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracker.cli.commands",
         "--db", str(db), "dashboard", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 60
        while not _port_open(port):
            assert proc.poll() is None, "the dashboard did not start"
            assert time.monotonic() < deadline, "the dashboard did not listen within 60 s"
            time.sleep(0.2)
        proc.send_signal(sig)  # to the tracker process only, not its group
        deadline = time.monotonic() + 5
        while _port_open(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _port_open(port), "the server still answers 5 s after the signal"
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
