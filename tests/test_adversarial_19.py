"""What a second adversarial pass over issue 19's fixes still found (items 3, 4, 5), each on
SQLite and on a throwaway PostgreSQL: a huge PGN tag line whose *name* is huge, and player
names given on the command line that no column can hold."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.pg_server import postgres_url
from tracker.importing import import_file
from tracker.store import queries
from tracker.store.db import Store


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with postgres_url() as (url, reason):
        if url is None:
            pytest.skip(reason)
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh migrated store on SQLite (a file) or on the throwaway PostgreSQL."""
    if request.param == "sqlite":
        with Store(str(tmp_path / "t.db")) as s:
            yield s
        return
    url = request.getfixturevalue("pg_url")
    store = Store(url)
    try:
        yield store
    finally:
        with store.engine.begin() as conn:  # a clean schema for the next test
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        store.close()


def _stored_ids(store: Store) -> set[str]:
    with store.engine.connect() as conn:
        return {r[0] for r in conn.execute(text("SELECT id FROM games"))}


def _pgn(gid: str, extra: str = "") -> bytes:
    return (f'[Event "Rated Blitz game"]\n{extra}[Site "https://lichess.org/{gid}"]\n'
            '[White "a"]\n[Black "b"]\n[Result "1-0"]\n[UTCDate "2024.01.01"]\n'
            '[UTCTime "10:00:00"]\n[WhiteElo "1500"]\n[BlackElo "1500"]\n'
            '[TimeControl "180+0"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n\n').encode()


# -- item 5: a tag line over the cap whose name alone fills the first 256 bytes ---------------

HUGE = 5 << 20  # over the 4 MB cap of one game


@pytest.mark.parametrize("user", [None, "b"])
@pytest.mark.parametrize("line", [
    "[" + "N" * HUGE + ' "v"]\n',  # a 5 MB tag name
    "[Event" + "x" * HUGE + "]\n",  # a name and value run together, no quote
    "[ " + "x" * HUGE + "\n",  # a bracket, a space, then 5 MB
], ids=["name", "no-quote", "bracket-space"])
def test_a_tag_line_with_a_huge_name_is_one_game_too_large(
    backend: Store, tmp_path: Path, line: str, user: str | None
) -> None:
    middle = _pgn("aaaaaaa2", extra=line)
    path = tmp_path / "tag.pgn"
    path.write_bytes(_pgn("aaaaaaa1") + middle + _pgn("aaaaaaa3"))
    summary = import_file(path, store=backend, user=user)
    # before: read 4, new 3: the tags after the huge line and the moves were read as a game
    # of their own and stored as "aaaaaaa2" (its Event lost), the huge line one more "game"
    assert (summary.read, summary.new, summary.skipped) == (3, 2, {"game too large": 1})
    assert _stored_ids(backend) == {"aaaaaaa1", "aaaaaaa3"}
    one = tmp_path / "one.pgn"
    one.write_bytes(middle)
    alone = import_file(one, store=backend, user=user)
    assert (alone.read, alone.new, alone.skipped) == (1, 0, {"game too large": 1})
    assert queries.count_games(backend) == 2
