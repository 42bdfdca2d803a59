"""A new database is created from the ORM metadata in one step, stamped at the newest
migration, without Alembic: it must equal, schema and rows, a database the migrations made,
on SQLite and PostgreSQL, and go on upgrading and downgrading like one."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, inspect, text
from sqlalchemy.engine import make_url

from tests.conftest import CMRADE
from tracker.store import engine as engine_mod
from tracker.store.db import Store, alembic_config
from tracker.store.engine import SCHEMA_HEAD, create_db_engine, upgrade_by_migrations


def _schema(engine: Engine) -> dict[str, dict[str, Any]]:
    """Every table: its columns in order (type as the dialect writes it, nullability, server
    default, autoincrement), primary key, foreign keys (with ON DELETE), indexes (with
    uniqueness), unique and check constraints, as the database reports them."""
    insp = inspect(engine)
    out: dict[str, dict[str, Any]] = {}
    for table in sorted(insp.get_table_names()):
        out[table] = {
            "columns": [(c["name"], c["type"].compile(dialect=engine.dialect), c["nullable"],
                         c.get("default"), c.get("autoincrement"), c.get("identity"))
                        for c in insp.get_columns(table)],
            "primary key": insp.get_pk_constraint(table),
            "foreign keys": sorted(
                ((f["name"], f["constrained_columns"], f["referred_table"],
                  f["referred_columns"], f.get("options", {}))
                 for f in insp.get_foreign_keys(table)), key=repr),
            "indexes": sorted(((i["name"], i["column_names"], bool(i["unique"]))
                               for i in insp.get_indexes(table)), key=repr),
            "unique": sorted(((u["name"], u["column_names"])
                              for u in insp.get_unique_constraints(table)), key=repr),
            "checks": sorted(((c["name"], c["sqltext"])
                              for c in insp.get_check_constraints(table)), key=repr),
        }
    return out


def _rows(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, sorted."""
    with engine.connect() as conn:
        return {t: sorted(tuple(r) for r in conn.execute(text(f"SELECT * FROM {t}")))
                for t in inspect(conn).get_table_names()}


def _alembic(engine: Engine, command_name: str, revision: str) -> None:
    from alembic import command

    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        getattr(command, command_name)(cfg, revision)


@pytest.fixture(params=["sqlite", "postgresql"])
def two_urls(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(URL of a database to create the fast way, URL of one to create by the migrations),
    both new: two SQLite files, or two databases of the throwaway PostgreSQL server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fast.db'}", f"sqlite:///{tmp_path / 'migrated.db'}"
        return
    url = make_url(request.getfixturevalue("pg_url"))
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    names = ("tracker_fast", "tracker_migrated")
    with admin.connect() as conn:
        for name in names:
            conn.execute(text(f"DROP DATABASE IF EXISTS {name}"))
            conn.execute(text(f"CREATE DATABASE {name}"))
    try:
        yield (url.set(database=names[0]).render_as_string(hide_password=False),
               url.set(database=names[1]).render_as_string(hide_password=False))
    finally:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


def test_a_new_database_made_the_fast_way_equals_one_made_by_the_migrations(
        two_urls: tuple[str, str]) -> None:
    fast_url, migrated_url = two_urls
    fast = Store(fast_url)
    migrated = create_db_engine(migrated_url)
    try:
        upgrade_by_migrations(migrated)
        fast_schema, migrated_schema = _schema(fast.engine), _schema(migrated)
        assert fast_schema == migrated_schema
        assert len(fast_schema) == 17  # 16 tables of tracker and alembic_version
        assert fast_schema["game_sides"]["primary key"]["constrained_columns"] == [
            "game_pk", "color"]
        assert [c[0] for c in fast_schema["games"]["columns"]][-1] == "pk"  # 0006 added it
        assert _rows(fast.engine) == _rows(migrated)
        assert _rows(fast.engine)["store_state"] == [(1, 0)]
        assert _rows(fast.engine)["alembic_version"] == [(SCHEMA_HEAD,)]
    finally:
        fast.close()
        migrated.dispose()


def test_the_fast_made_database_downgrades_and_upgrades_like_a_migrated_one(
        two_urls: tuple[str, str]) -> None:
    fast_url, migrated_url = two_urls
    Store(fast_url).close()
    fast, migrated = create_db_engine(fast_url), create_db_engine(migrated_url)
    try:
        upgrade_by_migrations(migrated)
        _alembic(fast, "downgrade", "0005")  # 0009 … 0006 undone by name on the fast schema
        assert engine_mod._schema_revision(fast) == "0005"
        assert "game_analysis" not in inspect(fast).get_table_names()
        _alembic(fast, "downgrade", "base")
        assert inspect(fast).get_table_names() == ["alembic_version"]
        _alembic(fast, "upgrade", "head")
        assert _schema(fast) == _schema(migrated)
        assert _rows(fast) == _rows(migrated)
    finally:
        fast.dispose()
        migrated.dispose()


def test_a_new_database_is_at_head_with_the_migrations_rows_and_works(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    path.touch()  # an empty file is a new database too
    with Store(str(path)) as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT version_num FROM alembic_version").all() == [
            (SCHEMA_HEAD,)]
        assert conn.exec_driver_sql("SELECT id, write_seq FROM store_state").all() == [
            (1, 0)]
        assert conn.exec_driver_sql("PRAGMA page_size").scalar() == 16384
    from tracker.importing import import_file

    with Store(str(path)) as store:
        assert import_file(CMRADE, store=store).new == 474
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT write_seq FROM store_state").scalar() > 0


def test_a_database_with_a_table_of_its_own_is_not_created_the_fast_way(tmp_path: Path) -> None:
    """Only a database with no table at all is created in one step; another one is left to the
    migrations (which add tracker's tables beside it)."""
    engine = create_db_engine(f"sqlite:///{tmp_path / 'other.db'}")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE notes (body TEXT)")
    assert engine_mod._create_at_head(engine) is False
    assert inspect(engine).get_table_names() == ["notes"]
    engine_mod.migrate(engine)
    assert engine_mod._schema_revision(engine) == SCHEMA_HEAD
    assert {"games", "notes", "store_state"} <= set(inspect(engine).get_table_names())
    engine.dispose()


def test_a_database_at_an_older_revision_still_goes_through_the_migrations(
        tmp_path: Path) -> None:
    """At 0004 (before store_state): opening it runs 0005 … 0009, which insert the row."""
    engine = create_db_engine(f"sqlite:///{tmp_path / 'old.db'}")
    _alembic(engine, "upgrade", "0004")
    assert "store_state" not in inspect(engine).get_table_names()
    engine.dispose()
    with Store(str(tmp_path / "old.db")) as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == (
            SCHEMA_HEAD)
        assert conn.exec_driver_sql("SELECT id, write_seq FROM store_state").all() == [
            (1, 0)]


def test_import_file_into_a_new_database_does_not_load_alembic(tmp_path: Path) -> None:
    """``tracker import-file`` (through the CLI's entry point) into a new database: the games
    are stored and the schema is at head, and Alembic was never imported."""
    db = tmp_path / "new.db"
    code = ("import sys\n"
            "from tracker.cli import commands as cli\n"
            "sys.argv = ['tracker', '--db', sys.argv[1], 'import-file', sys.argv[2], '--json']\n"
            "try:\n"
            "    cli.main()\n"
            "except SystemExit as exc:\n"
            "    assert not exc.code, exc.code\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('alembic', 'mako')))\n")
    out = subprocess.run([sys.executable, "-c", code, str(db), str(CMRADE)],
                         capture_output=True, text=True, check=True).stdout
    summary, _, loaded = out.rstrip().rpartition("\n")
    assert json.loads(summary)["new"] == 474
    assert loaded == "[]"
    with Store(str(db)) as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == (
            SCHEMA_HEAD)


def test_processes_creating_one_new_database_at_once_all_open_it_at_head(
        two_urls: tuple[str, str]) -> None:
    """Four processes open the same new database at once (SQLite file, PostgreSQL database):
    one creates it under the lock, the others wait, find it at head, and load no Alembic."""
    url = two_urls[0]
    code = ("import sys; from tracker.store.db import Store; Store(sys.argv[1]).close(); "
            "print(any(m.split('.')[0] == 'alembic' for m in sys.modules))")
    procs = [subprocess.Popen([sys.executable, "-c", code, url], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [e for _, e in outs]
    assert [o.strip() for o, _ in outs] == ["False"] * 4
    engine = create_db_engine(url)
    try:
        rows = _rows(engine)
        assert rows["alembic_version"] == [(SCHEMA_HEAD,)]
        assert rows["store_state"] == [(1, 0)]
    finally:
        engine.dispose()
