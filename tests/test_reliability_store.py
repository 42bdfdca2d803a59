"""What a second, hostile look at the store's paths found (issue 19), on SQLite and
PostgreSQL: a resumed sync after a file import, text no database can hold, column sizes,
oversized PGN tags. Each test failed before its fix."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tests.conftest import CMRADE, INDEXINATOR, INDEXINATOR_LATER
from tests.lichess_server import LichessServer, ndjson_lines
from tests.pg_server import postgres_url
from tracker.importing import import_file
from tracker.importing.lichess import import_user
from tracker.store import queries
from tracker.store.db import Store
from tracker.store.sync import load_cursor

LINES = ndjson_lines(INDEXINATOR)
LATER = ndjson_lines(INDEXINATOR_LATER)
FAST: dict[str, Any] = {"retry_wait_429": 0.05, "retry_wait": 0.01, "timeout": (2.0, 0.4)}
#: 2035-01-01, a year mistyped in a file
FUTURE_MS = 2_051_222_400_000


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


@pytest.fixture
def lichess() -> Iterator[LichessServer]:
    with LichessServer() as server:
        server.add_user("indexinator", LINES)
        yield server


def _ids(lines: list[str]) -> set[str]:
    return {json.loads(line)["id"] for line in lines}


def _stored_ids(store: Store) -> set[str]:
    with store.engine.connect() as conn:
        return {r[0] for r in conn.execute(text("SELECT id FROM games"))}


# -- 1. a resumed sync follows what the API sent, never a file's game -------------------------


@pytest.mark.parametrize("file_game", ["a later game", "a game dated 2035"])
def test_a_resumed_sync_fetches_the_new_games_after_a_file_import(
    lichess: LichessServer, backend: Store, tmp_path: Path, file_game: str
) -> None:
    lichess.cut_after(900)
    lichess.fail_429(times=2, skip=1)  # the resumed download meets 429 twice: partial
    first = import_user("indexinator", store=backend, base_url=lichess.url, **FAST)
    assert (first.status, first.new) == ("partial", 900)
    one = tmp_path / "one.ndjson"
    if file_game == "a later game":  # the player's newest game, from a file, before the API
        one.write_text(LATER[0] + "\n", encoding="utf-8")
        extra: set[str] = set()
    else:  # a copy of a game with its own id and a mistyped year
        obj = json.loads(LINES[0])
        obj.update(id="Fut00001", createdAt=FUTURE_MS, lastMoveAt=FUTURE_MS + 600_000)
        one.write_text(json.dumps(obj) + "\n", encoding="utf-8")
        extra = {"Fut00001"}
    assert import_file(one, store=backend).new == 1
    lichess.add_games("indexinator", LATER)  # ten new games on Lichess
    for _ in range(2):
        again = import_user("indexinator", store=backend, base_url=lichess.url, **FAST)
        assert again.status == "complete", again.message
    assert _stored_ids(backend) == _ids(LINES) | _ids(LATER) | extra  # before: 9 or 10 lost
    cursor = load_cursor(backend, "indexinator")
    assert cursor is not None and cursor.newest_ms == max(
        json.loads(line)["createdAt"] for line in LATER)


def test_a_cursor_an_older_tracker_moved_into_the_future_is_read_afresh(
    lichess: LichessServer, backend: Store
) -> None:
    from tracker.cursor import Cursor
    from tracker.store.sync import save_cursor

    backend.ensure_player("indexinator", "indexinator")
    save_cursor(backend, "indexinator", "", Cursor(FUTURE_MS, None, FUTURE_MS))
    summary = import_user("indexinator", store=backend, base_url=lichess.url, **FAST)
    assert (summary.status, summary.new) == ("complete", 2907)  # before: 0, "complete"
    cursor = load_cursor(backend, "indexinator")
    assert cursor is not None and cursor.newest_ms == json.loads(LINES[0])["createdAt"]


# -- 3. text no database can store: one game skipped, every other one stored ------------------


def _opponent_named(line: str, name: str) -> str:
    """The game ``line`` with its opponent's (not indexinator's) name set to ``name``,
    written as JSON writes it (``\\ud800``, ``\\u0000`` escapes)."""
    obj = json.loads(line)
    for side in obj["players"].values():
        user = side.get("user")
        if user and user["id"] != "indexinator":
            user["name"] = name
            return json.dumps(obj, separators=(",", ":"))
    raise AssertionError("no opponent with an account")


#: Two games whose names no database can store: a lone surrogate, and NUL.
BAD_NAMES = {5: "jes\ud800108", 9: "nul\x00name"}


def _lines_with_bad_names() -> list[str]:
    lines = list(LINES)
    for i, name in BAD_NAMES.items():
        lines[i] = _opponent_named(lines[i], name)
    assert "\\ud800" in lines[5] and "\\u0000" in lines[9]
    return lines


def test_a_lone_surrogate_or_nul_in_a_file_is_one_invalid_value(
    backend: Store, tmp_path: Path
) -> None:
    path = tmp_path / "bad.ndjson"
    path.write_text("\n".join(_lines_with_bad_names()) + "\n", encoding="utf-8")
    summary = import_file(path, store=backend)
    assert (summary.read, summary.new, summary.skipped) == (2907, 2905, {"invalid value": 2})
    assert any("lone surrogate" in w for w in summary.warnings)
    assert any("NUL character" in w for w in summary.warnings)
    assert queries.count_games(backend) == 2905
    assert _stored_ids(backend) == _ids(LINES) - {json.loads(LINES[i])["id"] for i in BAD_NAMES}


def test_a_lone_surrogate_or_nul_from_the_api_is_one_invalid_value(backend: Store) -> None:
    with LichessServer() as server:
        server.add_user("indexinator", _lines_with_bad_names())
        summary = import_user("indexinator", store=backend, base_url=server.url, **FAST)
    assert summary.status == "complete", summary.message
    assert (summary.read, summary.new, summary.skipped) == (2907, 2905, {"invalid value": 2})
    assert queries.count_games(backend) == 2905


def test_a_nul_byte_in_a_pgn_tag_is_one_invalid_value(backend: Store, tmp_path: Path) -> None:
    data = CMRADE.read_bytes()
    at = [i for i in range(len(data)) if data.startswith(b'[White "', i)][3] + len('[White "')
    path = tmp_path / "nul.pgn"
    path.write_bytes(data[:at] + b"a\x00b" + data[at:])
    summary = import_file(path, store=backend)
    assert (summary.new, summary.skipped) == (473, {"invalid value": 1})
    assert any("white user_id holds a NUL character" in w for w in summary.warnings)
    assert queries.count_games(backend) == 473


def test_an_escaped_backslash_before_u0000_is_a_name_like_any_other() -> None:
    from tracker.sources.ndjson import read_ndjson

    line = _opponent_named(LINES[5], "back\\u0000slash")  # a backslash, then "u0000"
    assert "\\\\u0000" in line
    (record,) = read_ndjson([line.encode()])
    assert "back\\u0000slash" in (record.white.name, record.black.name)
