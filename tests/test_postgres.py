"""The store on PostgreSQL: the same migrations, upserts and replay as on SQLite."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text

from tests.conftest import CMRADE, INDEXINATOR, INDEXINATOR_LATER
from tracker import api
from tracker.importing import import_file
from tracker.store import queries
from tracker.store.db import Store
from tracker.store.engine import create_db_engine, upgrade_by_migrations
from tracker.store.models import Base


@pytest.fixture
def pg_store(pg_url: str):
    store = Store(pg_url)
    yield store
    with store.engine.begin() as conn:  # a clean schema for the next test
        conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    store.close()


def test_migrated_postgres_schema_equals_orm_metadata(pg_url: str) -> None:
    """By the migrations, not the one-step creation of a new database (which is the metadata
    itself: see tests/test_schema_fast.py)."""
    engine = create_db_engine(pg_url)
    try:
        upgrade_by_migrations(engine)
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
    finally:
        with engine.begin() as conn:  # a clean schema for the next test
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        engine.dispose()


def test_postgres_import_is_incremental_and_never_duplicates(pg_store: Store) -> None:
    assert import_file(INDEXINATOR, store=pg_store).new == 2907
    assert import_file(INDEXINATOR_LATER, store=pg_store).new == 10
    again = import_file([INDEXINATOR, INDEXINATOR_LATER], store=pg_store)
    assert (again.new, again.updated, again.unchanged) == (0, 0, 2917)
    assert queries.count_games(pg_store) == 2917
    assert import_file(CMRADE, store=pg_store).new == 474


def test_postgres_replay_equals_sqlite_replay(pg_store: Store, store: Store) -> None:
    for s in (pg_store, store):
        import_file(INDEXINATOR, store=s)
    pg = api.replay("indexinator", "blitz", db=pg_store).to_json()
    lite = api.replay("indexinator", "blitz", db=store).to_json()
    assert pg == lite
    assert len(pg["periods"]) == 31


def test_postgres_saves_the_replay_pass_and_a_write_makes_it_stale(pg_store: Store) -> None:
    from tracker.report import saved_pass as report_pass
    from tracker.store import snapshots

    import_file(INDEXINATOR, store=pg_store, user="indexinator")
    options = report_pass._options(False)
    assert snapshots.saved_pass(pg_store, "indexinator", "blitz", options).payload is None
    first = api.replay("indexinator", "blitz", db=pg_store).to_json()
    assert snapshots.is_current(pg_store, "indexinator", "blitz", options)
    assert api.replay("indexinator", "blitz", db=pg_store).to_json() == first  # read back
    seq = snapshots.write_seq(pg_store)
    assert import_file(INDEXINATOR_LATER, store=pg_store).new == 10
    assert snapshots.write_seq(pg_store) == seq + 1
    assert not snapshots.is_current(pg_store, "indexinator", "blitz", options)
    later = api.replay("indexinator", "blitz", db=pg_store).to_json()
    assert later["periods"][-1]["games"] > first["periods"][-1]["games"]
