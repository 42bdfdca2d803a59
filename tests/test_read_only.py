"""A database served read-only (``tracker dashboard --read-only``, ``$TRACKER_READ_ONLY``):
every write of the API is refused with one clear line and nothing changes; the database itself
refuses a write that gets past the API (SQLite and PostgreSQL); serving beyond this machine
needs ``--read-only`` or ``--allow-writes``."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tests.browser import free_port
from tests.conftest import CMRADE, INDEXINATOR
from tracker import api
from tracker.api import launcher
from tracker.core import config
from tracker.core.errors import ArgumentError, ReadOnlyError
from tracker.core.records import GameRecord
from tracker.store.db import DatabaseError, Store


@pytest.fixture
def copy_db(indexinator_db: Path, tmp_path: Path) -> Path:
    """A copy of the session's sample database (indexinator's 2,907 games)."""
    path = tmp_path / "club.db"
    with sqlite3.connect(indexinator_db) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    return path


def _state(db: Path) -> tuple[object, ...]:
    """Games, FIDE links and saved passes (counts), and every player row with its saved
    settings, read with plain sqlite3."""
    with sqlite3.connect(db) as conn:
        counts = [conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                  for t in ("games", "fide_links", "cache_entries")]
        return (*counts, conn.execute("SELECT * FROM players ORDER BY 1").fetchall())


def test_every_write_of_the_api_is_refused_and_nothing_changes(
        copy_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _state(copy_db)
    store = api.open_store(copy_db, read_only=True)
    assert store.read_only and api.read_only_mode(store)
    writes = {
        "importing games": lambda: api.import_file(CMRADE, db=store, user="cmrade"),
        "linking a FIDE id": lambda: api.fide_link("indexinator", 35009192, db=store),
        "changing settings": lambda: api.settings("indexinator", db=store, start_rating=1800),
    }
    for action, write in writes.items():
        with pytest.raises(ReadOnlyError) as info:
            write()
        assert str(info.value) == (
            f"{action} is not allowed: the database is served read-only (tracker dashboard "
            "--read-only, or $TRACKER_READ_ONLY); run it with the tracker command where the "
            "database is kept")
        assert info.value.exit_code == 1
    # A Lichess import is refused before any request or token check.
    with pytest.raises(ReadOnlyError, match=r"^importing games is not allowed"):
        api.import_user("indexinator", db=store, base_url="http://127.0.0.1:9")
    # Reading works, and a report computed on it saves no pass.
    with sqlite3.connect(copy_db) as conn:
        conn.execute("DELETE FROM cache_entries")
    before = (*before[:2], 0, before[3])
    report = api.replay("indexinator", "blitz", db=store, scale="all")
    assert report.current_band is not None and report.current_band.median == 1499
    assert api.settings("indexinator", db=store).start_rating is None
    assert [p.id for p in api.players(db=store)] == ["indexinator"]
    store.close()
    assert _state(copy_db) == before
    # $TRACKER_READ_ONLY: the same refusal for a database given by its path (the CLI's way).
    monkeypatch.setenv("TRACKER_READ_ONLY", "1")
    with pytest.raises(ReadOnlyError, match=r"^importing games is not allowed"):
        api.import_file(CMRADE, db=copy_db)
    assert api.open_store(copy_db).read_only
    assert _state(copy_db) == before


def test_the_cli_under_tracker_read_only_refuses_in_one_line(copy_db: Path) -> None:
    before = _state(copy_db)
    env = {"TRACKER_READ_ONLY": "yes", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "--db", str(copy_db),
                           "settings", "indexinator", "--start-rating", "1800"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1
    # The user set the variable: the line names it to unset, not "run it with the tracker
    # command" (issue 30, item 14).
    assert done.stderr == ("error: changing settings is not allowed: $TRACKER_READ_ONLY is "
                           "set, which makes every database read-only: unset it (unset "
                           "TRACKER_READ_ONLY) and run the command again\n")
    assert done.stderr.count("\n") == 1
    assert _state(copy_db) == before


WRITE_REFUSED = (r"^writing to the database is not allowed: the database is served "
                 r"read-only \(tracker dashboard --read-only, or \$TRACKER_READ_ONLY\)$")


def test_the_store_and_the_database_refuse_a_write_past_the_api(copy_db: Path) -> None:
    store = Store(str(copy_db), read_only=True)
    # Any module's write through the engine: one line, before the database sees it.
    with pytest.raises(ReadOnlyError, match=WRITE_REFUSED), store.engine.begin() as conn:
        conn.execute(text("DELETE FROM games"))
    from tracker.store import groups

    with pytest.raises(ReadOnlyError, match=WRITE_REFUSED):
        groups.create_group(store, "club")  # a write past the API's own guard
    # Past SQLAlchemy, on the driver's own connection, SQLite refuses it (query_only).
    raw = store.engine.raw_connection()
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            raw.cursor().execute("DELETE FROM games")
    finally:
        raw.close()
    assert store.write_games([]).new == 0  # an empty batch writes nothing: no error
    store.close()
    assert _state(copy_db)[0] == 2907


def test_read_only_neither_creates_nor_migrates(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    with pytest.raises(DatabaseError, match=r"^no database at .*none.db: import games first"):
        api.open_store(missing, create=True, read_only=True)
    assert not missing.exists()
    old = tmp_path / "old.db"
    with sqlite3.connect(old) as conn:
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32))")
        conn.execute("INSERT INTO alembic_version VALUES ('0005')")
    with pytest.raises(DatabaseError, match=r"has schema 0005, not .*: open it once without "
                                            "--read-only"):
        Store(str(old), read_only=True)


def test_postgres_read_only_refuses_writes_in_the_api_and_the_server(pg_url: str) -> None:
    writable = Store(pg_url)
    try:
        assert api.import_file(INDEXINATOR, db=writable, user="indexinator").new == 2907
        store = api.open_store(pg_url, read_only=True)
        with pytest.raises(ReadOnlyError, match=r"^importing games is not allowed"):
            api.import_file(CMRADE, db=store)
        with pytest.raises(ReadOnlyError, match=WRITE_REFUSED), store.engine.begin() as conn:
            conn.execute(text("DELETE FROM games"))
        raw = store.engine.raw_connection()
        try:  # past SQLAlchemy, the server refuses it
            with pytest.raises(Exception, match="read-only transaction"):
                raw.cursor().execute("DELETE FROM games")
        finally:
            raw.close()
        record: list[GameRecord] = []
        assert store.write_games(record).new == 0
        assert api.replay("indexinator", "blitz", db=store).current_lichess == 1408
        store.close()
        with writable.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM games")).scalar() == 2907
    finally:
        with writable.engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        writable.close()


# --- tracker dashboard --host / --read-only / --allow-writes ---------------------------------

@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost", "127.0.0.2"])
def test_loopback_needs_no_flag(host: str) -> None:
    assert launcher.is_loopback(host)
    assert launcher.check_exposure(host, read_only=False, allow_writes=False) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "192.168.1.20"])
def test_beyond_this_machine_needs_read_only_or_allow_writes(host: str) -> None:
    assert not launcher.is_loopback(host)
    with pytest.raises(launcher.WritesNotAllowedError) as info:
        launcher.check_exposure(host, read_only=False, allow_writes=False)
    assert info.value.exit_code == 2
    assert "add --read-only to serve it read-only, or --allow-writes" in str(info.value)
    assert launcher.check_exposure(host, read_only=True, allow_writes=False) is None
    warning = launcher.check_exposure(host, read_only=False, allow_writes=True)
    assert warning == (f"warning: the dashboard on {host} is writable by anyone who can reach "
                       "it (imports, settings, FIDE links); --read-only serves it read-only")
    with pytest.raises(ArgumentError, match="contradict"):
        launcher.check_exposure(host, read_only=True, allow_writes=True)


def test_cli_host_without_a_flag_is_a_usage_error(copy_db: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "--db", str(copy_db),
                           "dashboard", "--host", "0.0.0.0", "--port", "8999"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == (
        "error: --host 0.0.0.0 serves the dashboard beyond this machine, and anyone who "
        "reaches it could import games and change settings: add --read-only to serve it "
        "read-only, or --allow-writes to serve it writable anyway\n")
    assert "http://" not in done.stdout


def test_read_only_and_allow_writes_reach_the_server(
        copy_db: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    started: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(subprocess, "call",
                        lambda cmd, env, **kw: started.append((cmd, env)) or 0)
    monkeypatch.setenv("TRACKER_READ_ONLY", "")
    port = free_port()
    assert launcher.dashboard(db=copy_db, port=port, host="0.0.0.0", read_only=True) == 0
    cmd, env = started[-1]
    assert env["TRACKER_READ_ONLY"] == "1"
    assert cmd[cmd.index("--server.address") + 1] == "0.0.0.0"
    err = capsys.readouterr().err
    assert err == f"tracker dashboard: http://0.0.0.0:{port}  read-only  (Ctrl+C to stop)\n"
    assert launcher.dashboard(db=copy_db, port=port, host="0.0.0.0", allow_writes=True) == 0
    assert "TRACKER_READ_ONLY" not in started[-1][1]
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith("warning: the dashboard on 0.0.0.0 is writable")
    # Read-only serving never creates a database.
    with pytest.raises(DatabaseError, match="no database at"):
        launcher.dashboard(db=copy_db.parent / "missing.db", port=port, read_only=True)
    assert not (copy_db.parent / "missing.db").exists()


# --- the dashboard served read-only (AppTest) ------------------------------------------------

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"


def _app(db: Path, monkeypatch: pytest.MonkeyPatch, page: str | None = None) -> object:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("TRACKER_DB", str(db))
    monkeypatch.setenv("TRACKER_READ_ONLY", "1")
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    if page is not None:
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("page", [None, "views/periods.py", "views/games.py",
                                  "views/calculator.py", "views/settings.py"])
def test_every_page_says_read_only(copy_db: Path, monkeypatch: pytest.MonkeyPatch,
                                   page: str | None) -> None:
    at: Any = _app(copy_db, monkeypatch, page)
    assert [i.value for i in at.info][:1] == [
        "Read-only: this dashboard shows the database and changes nothing. Importing games, "
        "settings and FIDE links are done with the `tracker` command where the database is "
        "kept."]


def test_read_only_settings_show_values_and_no_controls(
        copy_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _state(copy_db)
    at: Any = _app(copy_db, monkeypatch, "views/settings.py")
    assert not at.button and not at.text_input and not at.number_input and not at.radio
    table = at.table[0].value
    assert dict(zip(table["Setting"], table["Value"], strict=True))["Rules version"] == (
        "fide-2025-10")
    assert "no FIDE id linked" in " ".join(m.value for m in at.markdown)
    assert _state(copy_db) == before


def test_read_only_has_no_import_page(copy_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at: Any = _app(copy_db, monkeypatch)
    with pytest.raises(Exception, match="import_"):
        at.switch_page("views/import_.py").run()


# --- read-only: no engine starts, no write path is reachable ---------------------------------

@pytest.fixture
def recording_engine(tmp_path: Path) -> tuple[Path, Path]:
    """An engine path that records being started (then runs Stockfish): ``(engine, marker)``
    where ``marker`` exists once anything started the engine."""
    marker = tmp_path / "engine-started"
    engine = tmp_path / "engine.sh"
    engine.write_text(f"#!/bin/sh\necho started >> '{marker}'\nexec /usr/games/stockfish\n")
    engine.chmod(0o755)
    return engine, marker


def _refused_writes(store: Store, user: str, engine: Path) -> dict[str, Any]:
    return {
        "analysing games": lambda: api.analyse(user, db=store, engine=str(engine), last=3,
                                               nodes=1000),
        "dropping saved passes": lambda: api.drop_passes(db=store),
        "changing groups": [lambda: api.group_create("club", db=store),
                            lambda: api.group_add("club", [user], db=store),
                            lambda: api.group_remove("club", [user], db=store)],
        "syncing players": lambda: api.sync(db=store, base_url="http://127.0.0.1:9"),
        "saving a club model": lambda: api.group_calibrate("club", "blitz", db=store),
        "importing games": lambda: api.import_uploads([("games.pgn", b"")], db=store),
    }


def _assert_refused(store: Store, user: str, engine: Path) -> None:
    for action, writes in _refused_writes(store, user, engine).items():
        for write in writes if isinstance(writes, list) else [writes]:
            with pytest.raises(ReadOnlyError) as info:
                write()
            assert str(info.value) == (
                f"{action} is not allowed: the database is served read-only (tracker "
                "dashboard --read-only, or $TRACKER_READ_ONLY); run it with the tracker "
                "command where the database is kept")


def test_read_only_refuses_analyse_before_any_engine_starts_and_every_write(
        copy_db: Path, recording_engine: tuple[Path, Path]) -> None:
    engine, marker = recording_engine
    before = _state(copy_db)
    store = api.open_store(copy_db, read_only=True)
    _assert_refused(store, "indexinator", engine)
    store.close()
    assert not marker.exists()
    assert _state(copy_db) == before
    # The same database writable: the engine starts (the recording engine works).
    summary = api.analyse("indexinator", db=copy_db, engine=str(engine), last=1, nodes=1000)
    assert summary.analysed == 1 and marker.exists()


def test_postgres_read_only_refuses_analyse_and_every_write(
        pg_url: str, recording_engine: tuple[Path, Path]) -> None:
    engine, marker = recording_engine
    writable = Store(pg_url)
    try:
        assert api.import_file(CMRADE, db=writable, user="cmrade").new == 474
        store = api.open_store(pg_url, read_only=True)
        _assert_refused(store, "cmrade", engine)
        store.close()
        assert not marker.exists()
        with writable.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM games")).scalar() == 474
            assert conn.execute(text("SELECT count(*) FROM groups")).scalar() == 0
    finally:
        with writable.engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        writable.close()


def test_the_cli_refuses_analyse_in_one_line_without_an_engine(
        copy_db: Path, recording_engine: tuple[Path, Path]) -> None:
    engine, marker = recording_engine
    env = {"TRACKER_READ_ONLY": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "--db", str(copy_db),
                           "analyse", "indexinator", "--last", "3", "--engine", str(engine)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1
    # The user set the variable: the line names it to unset (issue 30, item 14).
    assert done.stderr == ("error: analysing games is not allowed: $TRACKER_READ_ONLY is set, "
                           "which makes every database read-only: unset it (unset "
                           "TRACKER_READ_ONLY) and run the command again\n")
    assert not marker.exists()


def _analyse_panels(at: Any) -> list[str]:
    return [e.label for e in at.expander if "with Stockfish" in e.label]


def test_the_read_only_games_page_has_no_analyse_panel(
        copy_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at: Any = _app(copy_db, monkeypatch, "views/games.py")
    assert _analyse_panels(at) == []
    assert "Analyse" not in " ".join(b.label for b in at.button)
    # Writable, the same page has it.
    from streamlit.testing.v1 import AppTest

    monkeypatch.delenv("TRACKER_READ_ONLY")
    writable = AppTest.from_file(str(APP), default_timeout=60)
    writable.run()
    writable.switch_page("views/games.py").run()
    assert not writable.exception
    assert _analyse_panels(writable) == ["Analyse indexinator's blitz games with Stockfish"]


def test_only_config_reads_the_environment() -> None:
    """``$TRACKER_READ_ONLY``, ``$TRACKER_DB``, ``$TRACKER_ENGINE``, ``$TRACKER_PROCESSES``…
    are read in one module, :mod:`tracker.core.config`; every other one asks it."""
    root = Path(__file__).resolve().parent.parent
    readers = sorted(str(p.relative_to(root)) for folder in ("tracker", "dashboard")
                     for p in (root / folder).rglob("*.py")
                     if any(s in p.read_text(encoding="utf-8")
                            for s in ("os.environ", "getenv(", "environ[")))
    assert readers == ["tracker/core/config.py"]
    env = config.child_environment("sqlite:///x.db", read_only=False)
    assert env["TRACKER_DB"] == "sqlite:///x.db" and env["PYTHONSAFEPATH"] == "1"
    assert "TRACKER_READ_ONLY" not in env
    assert config.child_environment("x", read_only=True)["TRACKER_READ_ONLY"] == "1"


# --- a PostgreSQL role that may only read (how a club shares its database) -------------------

def test_a_postgres_role_that_may_only_read_is_refused_in_one_line_before_any_engine(
        pg_url: str, recording_engine: tuple[Path, Path],
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A club grants its dashboard's role SELECT only. Every write used to reach the server
    and come back as a ``psycopg.errors.InsufficientPrivilege`` traceback, ``analyse`` after
    Stockfish had searched a game, and ``sync`` failed every member one by one."""
    engine, marker = recording_engine
    writable = Store(pg_url)
    reader_url = pg_url.replace("//tracker@", "//club_reader@")
    try:
        assert api.import_file(CMRADE, db=writable, user="cmrade").new == 474
        with writable.engine.begin() as conn:
            conn.execute(text("DROP ROLE IF EXISTS club_reader"))
            conn.execute(text("CREATE ROLE club_reader LOGIN"))
            conn.execute(text("GRANT USAGE ON SCHEMA public TO club_reader"))
            conn.execute(text("GRANT SELECT ON ALL TABLES IN SCHEMA public TO club_reader"))
        reason = ("the PostgreSQL role club_reader may only read this database: run it with a "
                  "role that may write (GRANT INSERT, UPDATE, DELETE)")
        # A role granted nothing: one line that says which grant is missing (it was
        # "(psycopg.errors.InsufficientPrivilege) permission denied for table …" alone).
        with writable.engine.begin() as conn:
            conn.execute(text("DROP ROLE IF EXISTS club_nobody"))
            conn.execute(text("CREATE ROLE club_nobody LOGIN"))
            conn.execute(text("GRANT USAGE ON SCHEMA public TO PUBLIC"))  # as a new database
        nobody = pg_url.replace("//tracker@", "//club_nobody@")
        with pytest.raises(DatabaseError) as refused:
            Store(nobody)
        assert str(refused.value).endswith(
            ": permission denied for table alembic_version: the role may not read tracker's "
            "tables (GRANT SELECT ON ALL TABLES IN SCHEMA public TO the role; INSERT, UPDATE "
            "and DELETE too for a role that imports)")
        with writable.engine.begin() as conn:  # nor the schema: the other grant
            conn.execute(text("REVOKE ALL ON SCHEMA public FROM PUBLIC"))
        with pytest.raises(DatabaseError) as refused:
            Store(nobody)
        assert str(refused.value).endswith(
            ": the role may not use the database's schema (GRANT USAGE ON SCHEMA public TO "
            "the role; the owner runs tracker once to create the tables)")
        with writable.engine.begin() as conn:
            conn.execute(text("GRANT USAGE ON SCHEMA public TO PUBLIC"))
        store = api.open_store(reader_url)  # not asked to be read-only: the role says it
        assert store.read_only and store.read_only_reason == reason
        for action, writes in _refused_writes(store, "cmrade", engine).items():
            for write in writes if isinstance(writes, list) else [writes]:
                with pytest.raises(ReadOnlyError) as info:
                    write()
                assert str(info.value) in (f"{action} is not allowed: {reason}",
                                           f"writing to the database is not allowed: {reason}")
        with pytest.raises(ReadOnlyError, match=r"^analysing games is not allowed: the "):
            api.analyse("cmrade", db=store, engine=str(engine), last=1, nodes=1000)
        with pytest.raises(ReadOnlyError, match=r"^syncing players is not allowed: the "):
            api.sync(db=store, base_url="http://127.0.0.1:9")
        assert api.replay("cmrade", "blitz", db=store).periods  # reading works
        store.close()
        assert not marker.exists()  # no engine started
        done = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "--db", reader_url,
                               "settings", "cmrade", "--start-rating", "1800"],
                              capture_output=True, text=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin", "TRACKER_READ_ONLY": ""})
        assert (done.returncode, done.stderr) == (
            1, f"error: writing to the database is not allowed: {reason}\n")
        # The dashboard on that role is served read-only (no Import page, no engine panel).
        started: list[dict[str, str]] = []
        monkeypatch.setattr(subprocess, "call", lambda cmd, env, **kw: started.append(env) or 0)
        monkeypatch.setenv("TRACKER_READ_ONLY", "")
        port = free_port()
        assert launcher.dashboard(db=reader_url, port=port) == 0
        assert started[-1]["TRACKER_READ_ONLY"] == "1"
        assert capsys.readouterr().err == (f"tracker dashboard: http://127.0.0.1:{port}  "
                                           "read-only  (Ctrl+C to stop)\n")
        with writable.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM games")).scalar() == 474
            assert conn.execute(text("SELECT count(*) FROM groups")).scalar() == 0
        with Store(pg_url) as owner:
            assert not owner.read_only  # the owner still writes
        # A role that may write tracker's tables, beside another application's table it may
        # only read, writes: only tracker's own tables are looked at.
        with writable.engine.begin() as conn:
            conn.execute(text("CREATE TABLE other_app (x int)"))
            conn.execute(text("DROP ROLE IF EXISTS club_writer"))
            conn.execute(text("DROP ROLE IF EXISTS club_nobody"))
            conn.execute(text("CREATE ROLE club_writer LOGIN"))
            conn.execute(text("GRANT USAGE ON SCHEMA public TO club_writer"))
            conn.execute(text("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "
                              "public TO club_writer"))
            conn.execute(text("GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO club_writer"))
            conn.execute(text("REVOKE INSERT, UPDATE, DELETE ON other_app FROM club_writer"))
        with Store(pg_url.replace("//tracker@", "//club_writer@")) as writer:
            assert not writer.read_only and writer.read_only_reason is None
            api.group_create("club", db=writer)
    finally:
        with writable.engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
            conn.execute(text("DROP ROLE IF EXISTS club_reader"))
            conn.execute(text("DROP ROLE IF EXISTS club_writer"))
            conn.execute(text("DROP ROLE IF EXISTS club_nobody"))
        writable.close()
