from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import func, select

from tests.conftest import INDEXINATOR
from tracker.core.records import GameRecord, Side
from tracker.importing import import_file
from tracker.store import queries
from tracker.store.db import DatabaseError, Store
from tracker.store.engine import create_db_engine, upgrade_by_migrations
from tracker.store.models import Base, Game, GameSide


def _game(gid: str, raw: str = "x", source: str = "ndjson", **kw) -> GameRecord:
    return GameRecord(
        id=gid,
        source=source,  # type: ignore[arg-type]
        created_at=datetime(2024, 1, 5, 12, tzinfo=UTC),
        last_move_at=datetime(2024, 1, 5, 12, 10, tzinfo=UTC),
        rated=True,
        speed="blitz",
        perf="blitz",
        status="mate",
        result="1-0",
        plies=40,
        white=Side("alice", "Alice", None, 1500, 6),
        black=Side("bob", "Bob", None, 1490, -6),
        raw=raw,
        **kw,
    )


def test_migrated_schema_equals_orm_metadata(db_path: Path) -> None:
    """By the migrations, not the one-step creation of a new database (which is the metadata
    itself: see tests/test_schema_fast.py)."""
    engine = create_db_engine(f"sqlite:///{db_path}")
    upgrade_by_migrations(engine)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    assert diff == []


def test_sqlite_runs_in_wal_mode_with_foreign_keys(db_path: Path) -> None:
    store = Store(str(db_path))
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_opening_an_existing_database_migrates_and_keeps_data(db_path: Path) -> None:
    with Store(str(db_path)) as s:
        s.write_games([_game("AAAA0001")])
    with Store(str(db_path)) as s:
        assert queries.count_games(s) == 1


def test_database_from_a_newer_tracker_is_refused_with_one_line(db_path: Path) -> None:
    Store(str(db_path)).close()
    con = sqlite3.connect(db_path)
    con.execute("UPDATE alembic_version SET version_num = 'ffff_future'")
    con.commit()
    con.close()
    with pytest.raises(DatabaseError, match="unknown to this tracker"):
        Store(str(db_path))


def test_not_a_database_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_text("this is not sqlite" * 100)
    with pytest.raises(DatabaseError) as info:
        Store(str(bad))
    assert "\n" not in str(info.value)


def test_write_games_counts_new_unchanged_and_updated(store: Store) -> None:
    assert store.write_games([_game("AAAA0001"), _game("AAAA0002")]).new == 2
    again = store.write_games([_game("AAAA0001"), _game("AAAA0002", raw="changed")])
    assert (again.new, again.updated, again.unchanged) == (0, 1, 1)
    assert queries.count_games(store) == 2
    with store.session() as s:
        assert s.execute(select(func.count()).select_from(GameSide)).scalar_one() == 4


def test_pgn_copy_never_overwrites_an_api_record(store: Store) -> None:
    store.write_games([_game("AAAA0001", raw="api", source="api")])
    counts = store.write_games([_game("AAAA0001", raw="pgn", source="pgn")])
    assert counts.unchanged == 1
    with store.session() as s:
        assert s.scalars(select(Game.source).where(Game.id == "AAAA0001")).one() == "api"


def test_duplicate_ids_within_one_batch_store_one_game(store: Store) -> None:
    counts = store.write_games([_game("AAAA0001", raw="a"), _game("AAAA0001", raw="b")])
    assert counts.new == 1
    assert queries.count_games(store) == 1


@pytest.mark.usefixtures("file_batches_of_500")
def test_interrupted_import_keeps_finished_batches_and_resumes_without_duplicates(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(str(db_path))
    real_write = store.write_prepared
    calls = {"n": 0}

    def failing_write(*args):  # the third batch dies before it is written
        calls["n"] += 1
        if calls["n"] >= 3:  # from the third batch on, every write fails
            raise RuntimeError("injected failure after the second batch")
        return real_write(*args)

    monkeypatch.setattr(store, "write_prepared", failing_write)
    with pytest.raises(RuntimeError):
        import_file(INDEXINATOR, store=store, user="indexinator")
    assert queries.count_games(store) == 1000  # two batches of 500, nothing half-written
    with store.session() as s:
        assert s.execute(select(func.count()).select_from(GameSide)).scalar_one() == 2000
    run = queries.import_runs(store)[0]
    assert run.status == "failed" and "injected failure" in run.message

    monkeypatch.setattr(store, "write_prepared", real_write)
    summary = import_file(INDEXINATOR, store=store, user="indexinator")
    assert (summary.new, summary.unchanged, summary.status) == (1907, 1000, "complete")
    assert queries.count_games(store) == 2907


def test_player_games_come_back_in_end_order_with_both_sides(store: Store) -> None:
    import_file(INDEXINATOR, store=store, user="indexinator")
    games = list(queries.player_games(store, "indexinator", "blitz"))
    assert len(games) == 2891
    ends = [g.ended_at for g in games]
    assert ends == sorted(ends)
    first = games[0]
    assert first.id == "nwMIWDD2"
    assert first.created_at == datetime(2023, 4, 19, 19, 23, 15, 273000, tzinfo=UTC)
    assert first.last_move_at == datetime(2023, 4, 19, 19, 30, 48, 110000, tzinfo=UTC)
    assert first.white == Side("indexinator", "indexinator", None, 1500, 319, True, None)
    assert first.black.user_id == "supersonic6" and first.black.rating == 1601


def test_a_copy_with_fewer_plies_or_no_result_never_replaces_the_stored_game(
    store: Store,
) -> None:
    from dataclasses import replace

    full = _game("AAAA0001", raw="full", source="pgn")
    store.write_games([full])
    cut = replace(full, raw="cut", plies=0)
    unfinished = replace(full, raw="no result", result=None)
    counts = store.write_games([cut])
    counts.add(store.write_games([unfinished]))
    assert (counts.unchanged, counts.updated) == (2, 0)
    (game,) = queries.player_games(store, "alice")
    assert (game.plies, game.result) == (40, "1-0")


def test_ensure_player_twice_tracks_one_player(store: Store) -> None:
    store.ensure_player("Alice", "Alice")
    store.ensure_player("alice")
    store.ensure_player("ALICE", "Alice")
    with store.session() as s:
        from tracker.store.models import Player

        assert [(p.id, p.username) for p in s.query(Player)] == [("alice", "Alice")]


def test_two_processes_opening_a_new_database_at_once_both_succeed(tmp_path: Path) -> None:
    import subprocess
    import sys

    db = tmp_path / "race.db"
    code = "import sys; from tracker.store.db import Store; Store(sys.argv[1]).close()"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(db)], stderr=subprocess.PIPE,
                              text=True) for _ in range(4)]
    errors = [p.communicate()[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    with Store(str(db)) as s:
        assert queries.count_games(s) == 0


def test_a_folder_given_as_database_is_said_plainly(tmp_path: Path) -> None:
    with pytest.raises(DatabaseError, match="is a folder: give a database file"):
        Store(str(tmp_path))


def test_missing_folder_of_a_new_database_is_created(tmp_path: Path) -> None:
    db = tmp_path / "new" / "deeper" / "t.db"
    Store(str(db)).close()
    assert db.exists()


def test_schema_head_constant_is_alembics_head() -> None:
    """A database at SCHEMA_HEAD opens without Alembic, so the constant must be the newest
    migration: adding one without moving it fails here."""
    from alembic.script import ScriptDirectory

    from tracker.store.db import alembic_config
    from tracker.store.engine import SCHEMA_HEAD

    assert ScriptDirectory.from_config(alembic_config()).get_current_head() == SCHEMA_HEAD


def test_a_database_at_head_opens_without_loading_alembic(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "t.db"
    Store(str(path)).close()  # created and migrated
    code = ("import sys; from tracker.store.db import Store; Store(sys.argv[1]).close(); "
            "print(any(m == 'alembic' or m.startswith('alembic.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "False"
