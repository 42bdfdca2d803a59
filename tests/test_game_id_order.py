"""One order of games on every database (issue 32, item 4): two games ending in the same
millisecond, ``aaaaaaaa`` and ``BBBBBBBB``, are replayed in the order of their ids byte by byte
(``BBBBBBBB`` first), on SQLite and on PostgreSQL whose database collation (ICU ``en-US``)
sorts them the other way: the replay saved by the import (rows kept in memory, sorted in
Python) equals the replay read back after ``passes --drop`` (rows sorted by the database)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.conftest import INDEXINATOR
from tracker import api
from tracker.importing import import_file
from tracker.store.db import Store

END_MS = 1_760_078_471_128


def _two_games(path: Path) -> Path:
    template = json.loads(INDEXINATOR.read_text().splitlines()[0])
    lines = []
    for gid, rating in (("aaaaaaaa", 1500), ("BBBBBBBB", 1600)):
        game = json.loads(json.dumps(template))
        game.update(id=gid, createdAt=END_MS - 300_000, lastMoveAt=END_MS)
        game["players"]["white"].update(rating=rating, ratingDiff=5)
        lines.append(json.dumps(game))
    path.write_text("\n".join(lines) + "\n")
    return path


def _line(store: Store) -> list[tuple[str, int]]:
    """The replay's Lichess line: (game id, rating after it), in the order replayed."""
    return [(p.game_id, p.rating) for p in api.replay("indexinator", "blitz", db=store).lichess]


#: Byte order: ``BBBBBBBB`` replayed first (the second point carries the line on).
BYTE_ORDER = [("BBBBBBBB", 1605), ("aaaaaaaa", 1610)]


def _saved_and_fresh(store: Store, tmp_path: Path
                     ) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    summary = api.import_file(_two_games(tmp_path / "two.ndjson"), db=store)
    assert summary.new == 2
    assert [p.perf for p in api.saved_passes(db=store)] == ["blitz"]  # saved by the import
    saved = _line(store)
    assert api.drop_passes(db=store) >= 1
    return saved, _line(store)


def test_sqlite_replays_the_games_of_one_millisecond_by_id_bytes(tmp_path: Path) -> None:
    with Store(str(tmp_path / "t.db")) as store:
        assert _saved_and_fresh(store, tmp_path) == (BYTE_ORDER, BYTE_ORDER)


@pytest.fixture
def icu_store(pg_url: str) -> Iterator[Store]:
    """A store in a new PostgreSQL database whose collation is ICU's ``en-US`` (which sorts
    ``aaaaaaaa`` before ``BBBBBBBB``); skipped where the server has no ICU."""
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text("DROP DATABASE IF EXISTS tracker_icu"))
            try:
                conn.execute(text("CREATE DATABASE tracker_icu TEMPLATE template0 "
                                  "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"))
            except Exception as exc:  # a server without ICU
                pytest.skip(f"no ICU collation on this PostgreSQL: {exc}")
        store = Store(pg_url.rsplit("/", 1)[0] + "/tracker_icu")
        try:
            yield store
        finally:
            store.close()
        with admin.connect() as conn:
            conn.execute(text("DROP DATABASE tracker_icu"))
    finally:
        admin.dispose()


def test_postgres_with_a_non_c_collation_replays_them_in_the_same_order(
        icu_store: Store, tmp_path: Path) -> None:
    with icu_store.engine.connect() as conn:  # the database itself sorts the other way
        assert conn.execute(text("SELECT 'aaaaaaaa' < 'BBBBBBBB'")).scalar() is True
    assert _saved_and_fresh(icu_store, tmp_path) == (BYTE_ORDER, BYTE_ORDER)


def _id_collation(store: Store) -> str | None:
    with store.engine.connect() as conn:
        return conn.execute(text(
            "SELECT collation_name FROM information_schema.columns "
            "WHERE table_name = 'games' AND column_name = 'id'")).scalar()


def test_migration_0010_sets_the_binary_order_and_drops_saved_passes_on_postgres(
        icu_store: Store, tmp_path: Path) -> None:
    from alembic import command

    from tracker.store.engine import alembic_config

    assert _id_collation(icu_store) == "C"  # a new database: created at head
    cfg = alembic_config()
    with icu_store.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0009")
    assert _id_collation(icu_store) is None  # the database's own
    # the games stored at 0009, and a pass as a tracker of then saved it (replay_snapshots;
    # this tracker saves into cache_entries, made by 0011)
    import_file(_two_games(tmp_path / "two.ndjson"), store=icu_store)
    with icu_store.engine.begin() as conn:
        conn.execute(text("INSERT INTO replay_snapshots (user_id, perf, options, write_seq, "
                          "payload) VALUES ('indexinator', 'blitz', 'p0-old', 1, 'x')"))
    with icu_store.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0010")
        passes = conn.execute(text("SELECT count(*) FROM replay_snapshots")).scalar()
        command.upgrade(cfg, "head")
    assert passes == 0  # 0010: read in the old order, dropped, computed again
    assert _id_collation(icu_store) == "C"
    assert api.saved_passes(db=icu_store) == []
    assert _line(icu_store) == BYTE_ORDER
