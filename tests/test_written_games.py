"""The games a first import keeps for the passes it saves (WrittenGames): exactly the rows the
database gives back, in its order, and never used once they may not be."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tracker import api
from tracker.importing import import_inputs
from tracker.report.scale_runs import refresh
from tracker.sources.files import open_inputs
from tracker.store import games as store_games
from tracker.store import queries, snapshots
from tracker.store.db import Store
from tracker.store.games import WrittenGames
from tracker.store.models import CacheEntry

from .conftest import CMRADE, INDEXINATOR, INDEXINATOR_LATER
from .test_reader_process import _edge_file


def _import(path: Path, store: Store, **kwargs: Any) -> WrittenGames:
    written = WrittenGames()
    import_inputs(open_inputs(path), store=store, written=written, **kwargs)
    return written


@pytest.mark.parametrize(("source", "user"), [
    (INDEXINATOR, "indexinator"), (CMRADE, "cmrade"), ("edges", "indexinator")])
def test_the_kept_rows_are_the_rows_read_back(any_store: Store, tmp_path: Path, source: Any,
                                              user: str) -> None:
    path = _edge_file(tmp_path / "edges.ndjson") if source == "edges" else source
    written = _import(path, any_store)
    kept = written.replay_rows_by_perf(any_store, user)
    read = list(queries.replay_rows_by_perf(any_store, user))
    assert kept is not None and len(read) > 20
    # the booleans: the driver's 0/1 (SQLite) or True/False, the same to the walk
    assert [tuple(bool(v) if i in (4, 14, 20) and v is not None else v
                  for i, v in enumerate(r)) for r in kept] == [
        tuple(bool(v) if i in (4, 14, 20) and v is not None else v for i, v in enumerate(r))
        for r in read]


def test_the_passes_saved_from_them_are_the_passes_computed_again(
        db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read_back = queries.replay_rows_by_perf
    with monkeypatch.context() as m:  # the import's passes must not read the games back
        m.setattr(queries, "replay_rows_by_perf", None)
        api.import_file(INDEXINATOR, db=str(db_path))
    assert queries.replay_rows_by_perf is read_back
    store = Store(str(db_path))

    def payloads() -> dict[tuple[str, str, str], bytes]:
        snap = CacheEntry.__table__
        with store.engine.connect() as conn:
            return {(r.perf, r.kind, r.options): r.payload
                    for r in conn.execute(select(snap.c.perf, snap.c.kind, snap.c.options,
                                                 snap.c.payload))}

    saved = payloads()
    # blitz: the pass and its replay on each of the two models covering it; bullet: one
    assert sorted((perf, kind) for perf, kind, _ in saved) == [
        ("blitz", "pass"), ("blitz", "run"), ("blitz", "run"), ("bullet", "pass"),
        ("bullet", "run")]
    snapshots.drop_passes(store)
    refresh(store, "indexinator")  # read back from the database
    assert payloads() == saved


def test_not_kept_when_the_database_held_games(any_store: Store) -> None:
    _import(INDEXINATOR_LATER, any_store)
    written = _import(INDEXINATOR, any_store)
    assert written.replay_rows_by_perf(any_store, "indexinator") is None


def test_not_used_once_another_write_came_between(any_store: Store) -> None:
    written = _import(INDEXINATOR, any_store)
    assert written.replay_rows_by_perf(any_store, "indexinator") is not None
    _import(INDEXINATOR_LATER, any_store)  # another import's batch moves the counter
    assert written.replay_rows_by_perf(any_store, "indexinator") is None


def test_not_kept_past_their_limit(any_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_games, "KEPT_GAMES", 2000)
    written = _import(INDEXINATOR, any_store)  # 2,907 games
    assert written.replay_rows_by_perf(any_store, "indexinator") is None
