"""Shared fixtures: the real Lichess exports (copied from shared/ into tests/fixtures/) and
in-memory or temporary databases."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text

from tracker.store.db import Store
from tracker.store.models import Game, GameSide

FIXTURES = Path(__file__).parent / "fixtures"
LICHESS = FIXTURES / "lichess"
CASES = FIXTURES / "cases"

INDEXINATOR = LICHESS / "indexinator-2023-04_2025-10.ndjson"
INDEXINATOR_LATER = LICHESS / "indexinator-2025-10-later.ndjson"
CMRADE = LICHESS / "cmrade-2018-07_2020-11.pgn"
DB2013 = LICHESS / "lichess_db_standard_rated_2013-01-first50.pgn"
SINGLE = LICHESS / "single-game-q7ZvsdUF.pgn"
#: 41 rapid games of one player, each with Lichess's server analysis.
ANALYSED = LICHESS / "analysed-reda46-rapid.ndjson"


@pytest.fixture
def store() -> Store:
    """A fresh in-memory database, migrated."""
    s = Store("sqlite://")
    yield s
    s.close()


@pytest.fixture
def file_batches_of_500(monkeypatch: pytest.MonkeyPatch) -> int:
    """File imports write batches of 500 games (instead of
    :data:`~tracker.store.games.FILE_BATCH_SIZE`), so that a 2,907-game export is several
    batches: for the tests of what an import keeps when a batch fails."""
    monkeypatch.setattr("tracker.importing.files.FILE_BATCH_SIZE", 500)
    return 500


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A path for a file database (not created yet)."""
    return tmp_path / "tracker.db"


@pytest.fixture(scope="session")
def indexinator_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled indexinator history imported once per session; tests use copies of it
    (:func:`indexinator_db`), never this file."""
    from tracker.importing import import_file

    path = tmp_path_factory.mktemp("shared") / "indexinator.db"
    with Store(str(path)) as s:
        summary = import_file(INDEXINATOR, store=s, user="indexinator")
        assert summary.new == 2907
    return path


@pytest.fixture(scope="module")
def indexinator_db(indexinator_master: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file database holding the bundled indexinator history: a copy per test module (made
    with SQLite's backup API), so that what one module's replays save, or a server it started
    leaves behind, never reaches another module's database. Tests must not write to it."""
    import sqlite3

    path = tmp_path_factory.mktemp("indexinator") / "indexinator.db"
    source, target = sqlite3.connect(indexinator_master), sqlite3.connect(path)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    return path


def stored_rows(store: Store) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every stored game and side, every column, by the natural key and sorted: the games
    without their surrogate key ``pk``, each side with its game's id in place of ``game_pk``.
    Two databases hold the same games iff these are equal (the keys are numbered per database,
    in the order games were first stored)."""
    games_t, sides_t = Game.__table__, GameSide.__table__
    game_cols = [c for c in games_t.c if c.name != "pk"]
    side_cols = [c for c in sides_t.c if c.name != "game_pk"]
    with store.engine.connect() as conn:
        games = [tuple(r) for r in conn.execute(select(*game_cols))]
        sides = [tuple(r) for r in conn.execute(
            select(games_t.c.id, *side_cols).join(games_t, games_t.c.pk == sides_t.c.game_pk))]
    return sorted(games, key=repr), sorted(sides, key=repr)


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    """The URL of a throwaway PostgreSQL server, one per test module (tests/pg_server.py);
    the test is skipped, with the reason, where none can be started."""
    from tests.pg_server import postgres_url

    with postgres_url() as (url, reason):
        if url is None:
            pytest.skip(reason)
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh migrated store on SQLite (a file) and, as a second case, on the throwaway
    PostgreSQL, its schema emptied after the test."""
    if request.param == "sqlite":
        with Store(str(tmp_path / "t.db")) as store:
            yield store
        return
    store = Store(request.getfixturevalue("pg_url"))
    try:
        yield store
    finally:
        with store.engine.begin() as conn:  # a clean schema for the next test
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        store.close()


def default_sigint() -> None:
    """``preexec_fn`` of a child a test sends SIGINT to: a suite started as a background job
    (``pytest … &``) runs with SIGINT ignored, which every child inherits, and Python only
    turns SIGINT into KeyboardInterrupt where it starts with the default handler."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
