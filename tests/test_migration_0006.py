"""Migration 0006 (integer surrogate keys for games and their sides), tested with data.

A database at 0005 is filled the way 0005's write path filled it (each game row keyed by its
Lichess id, each side row by that id and its colour, the same column values), then opened by
this tracker, which upgrades it. The issue's equality test: the same 10k-game file stored
through the old keys and upgraded, or imported afresh, gives the same games, the same sides
and the same replay report; and the upgraded database goes on as a fresh one does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import Engine, create_engine, event, text

from tests.conftest import INDEXINATOR, INDEXINATOR_LATER, stored_rows
from tracker import api
from tracker.core.records import GameRecord
from tracker.importing import import_file
from tracker.sources.ndjson import read_ndjson
from tracker.store import queries
from tracker.store.db import Store
from tracker.store.engine import SCHEMA_HEAD, _sqlite_on_connect, alembic_config
from tracker.store.games import (
    GAME_COLUMNS,
    P_BLACK,
    P_DIGEST,
    P_GAME,
    P_ID,
    P_RAW,
    P_WHITE,
    SIDE_COLUMNS,
    prepare,
)

#: 0005's column lists: the same as today's without the surrogate keys.
OLD_GAME_COLUMNS = GAME_COLUMNS[1:]
OLD_SIDE_COLUMNS = ("game_id", *SIDE_COLUMNS[1:])


def _lines_10k() -> list[str]:
    """10,000 games: the bundled export four times over, each copy with its own ids."""
    lines = INDEXINATOR.read_text(encoding="utf-8").splitlines()
    head = '{"id":"'
    assert all(line.startswith(head) for line in lines)
    # ids stay 8 characters long, as Lichess's are: the copy's letter replaces the first
    return [head + copy + line[len(head) + 1 :] for copy in "ABCD" for line in lines][:10_000]


def _engine_at_0005(url: str) -> Engine:
    """An engine on a new database migrated to 0005 (tracker's SQLite settings)."""
    engine = create_engine(url)
    if url.startswith("sqlite"):
        event.listen(engine, "connect", _sqlite_on_connect)
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005")
    return engine


def _write_as_0005(engine: Engine, records: Sequence[GameRecord], batch: int = 500) -> None:
    """Store ``records`` as 0005's write path did: batches of 500, keyed by the game id, the
    last copy of a game winning (the file holds no game twice)."""
    games_sql = text(f"INSERT INTO games ({', '.join(OLD_GAME_COLUMNS)}) VALUES "
                     f"({', '.join(':' + c for c in OLD_GAME_COLUMNS)})")
    sides_sql = text(f"INSERT INTO game_sides ({', '.join(OLD_SIDE_COLUMNS)}) VALUES "
                     f"({', '.join(':' + c for c in OLD_SIDE_COLUMNS)})")
    for i in range(0, len(records), batch):
        chunk = [prepare(r) for r in records[i : i + batch]]
        games = [dict(zip(OLD_GAME_COLUMNS, (*p[P_GAME], p[P_RAW], p[P_DIGEST]),
                          strict=True)) for p in chunk]
        sides = [dict(zip(OLD_SIDE_COLUMNS, (p[P_ID], *side), strict=True))
                 for p in chunk for side in (p[P_WHITE], p[P_BLACK])]
        with engine.begin() as conn:
            conn.execute(games_sql, games)
            conn.execute(sides_sql, sides)


def _report(store: Store) -> dict[str, Any]:
    return api.replay("indexinator", "blitz", db=store).to_json()


@pytest.fixture
def file_10k(tmp_path: Path) -> Path:
    path = tmp_path / "10k.ndjson"
    path.write_text("\n".join(_lines_10k()) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def old_and_new(tmp_path: Path, file_10k: Path) -> Iterator[tuple[Store, Store]]:
    """The 10k file stored at 0005 and upgraded, and the same file imported afresh."""
    old_url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = _engine_at_0005(old_url)
    with file_10k.open("rb") as f:
        _write_as_0005(engine, list(read_ndjson(f)))
    engine.dispose()
    old = Store(old_url)  # upgraded to 0006 on open
    new = Store(str(tmp_path / "new.db"))
    import_file(file_10k, store=new)
    yield old, new
    old.close()
    new.close()


def test_the_10k_file_stored_at_0005_and_upgraded_equals_a_fresh_import(
        old_and_new: tuple[Store, Store]) -> None:
    old, new = old_and_new
    assert queries.count_games(old) == queries.count_games(new) == 10_000
    old_games, old_sides = stored_rows(old)
    new_games, new_sides = stored_rows(new)
    assert len(old_sides) == 20_000
    assert old_games == new_games
    assert old_sides == new_sides
    report = _report(old)
    assert report == _report(new)
    assert sum(p["games"] for p in report["periods"]) > 9_000


def test_the_upgraded_database_numbers_its_games_and_goes_on_like_a_fresh_one(
        old_and_new: tuple[Store, Store], file_10k: Path) -> None:
    old, new = old_and_new
    with old.engine.connect() as conn:
        keys = conn.execute(text("SELECT pk, id FROM games ORDER BY pk")).all()
        orphans = conn.execute(text(
            "SELECT count(*) FROM game_sides s LEFT JOIN games g ON g.pk = s.game_pk "
            "WHERE g.pk IS NULL")).scalar()
        # upgraded to the newest schema (0006 and the migrations after it)
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == (
            SCHEMA_HEAD)
    assert [pk for pk, _ in keys] == list(range(1, 10_001))  # numbered in id order
    assert [gid for _, gid in keys] == sorted(gid for _, gid in keys)
    assert orphans == 0
    for store in (old, new):  # re-imported: nothing new, nothing parsed again
        again = import_file(file_10k, store=store)
        assert (again.new, again.updated, again.unchanged) == (0, 0, 10_000)
        later = import_file(INDEXINATOR_LATER, store=store)
        assert (later.new, later.status) == (10, "complete")
    with old.engine.connect() as conn:
        assert conn.execute(text("SELECT max(pk) FROM games")).scalar() == 10_010
    assert stored_rows(old) == stored_rows(new)
    assert _report(old) == _report(new)


def test_upgrading_0005_on_postgresql_keeps_every_game_and_side(db_path: Path) -> None:
    from tests.pg_server import postgres_url

    with postgres_url() as (url, reason):
        if url is None:
            pytest.skip(reason)
        with INDEXINATOR.open("rb") as f:
            records = list(read_ndjson(f))
        engine = _engine_at_0005(url)
        try:
            _write_as_0005(engine, records)
            engine.dispose()
            with Store(url) as upgraded, Store(str(db_path)) as fresh:
                import_file(INDEXINATOR, store=fresh)
                assert stored_rows(upgraded) == stored_rows(fresh)
                assert _report(upgraded) == _report(fresh)
                again = import_file(INDEXINATOR, store=upgraded)
                assert (again.new, again.updated, again.unchanged) == (0, 0, 2907)
        finally:
            with engine.begin() as conn:
                conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
            engine.dispose()
