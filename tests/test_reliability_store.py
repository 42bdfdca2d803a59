"""What a second, hostile look at the store's paths found (issue 19), on SQLite and
PostgreSQL: a resumed sync after a file import, text no database can hold, column sizes,
oversized PGN tags. Each test failed before its fix."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
from sqlalchemy import text

from tests.conftest import CMRADE, INDEXINATOR, INDEXINATOR_LATER, SINGLE
from tests.lichess_server import LichessServer, ndjson_lines
from tracker.importing import import_file
from tracker.importing.lichess import LichessOptions, import_user
from tracker.store import queries
from tracker.store.db import Store
from tracker.store.sync import load_cursor

LINES = ndjson_lines(INDEXINATOR)
LATER = ndjson_lines(INDEXINATOR_LATER)
FAST: dict[str, Any] = {"retry_wait_429": 0.05, "retry_wait": 0.01, "timeout": (2.0, 0.4)}


def fast(url: str, **kwargs: Any) -> LichessOptions:
    """The options of a test's import from the local Lichess at ``url``: short waits."""
    return LichessOptions(base_url=url, **{**FAST, **kwargs})


#: 2035-01-01, a year mistyped in a file
FUTURE_MS = 2_051_222_400_000


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
    lichess: LichessServer, any_store: Store, tmp_path: Path, file_game: str
) -> None:
    lichess.cut_after(900)
    lichess.fail_429(times=2, skip=1)  # the resumed download meets 429 twice: partial
    first = import_user("indexinator", store=any_store, options=fast(lichess.url))
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
    assert import_file(one, store=any_store).new == 1
    lichess.add_games("indexinator", LATER)  # ten new games on Lichess
    for _ in range(2):
        again = import_user("indexinator", store=any_store, options=fast(lichess.url))
        assert again.status == "complete", again.message
    assert _stored_ids(any_store) == _ids(LINES) | _ids(LATER) | extra  # before: 9 or 10 lost
    cursor = load_cursor(any_store, "indexinator")
    assert cursor is not None and cursor.newest_ms == max(
        json.loads(line)["createdAt"] for line in LATER)


def test_a_cursor_an_older_tracker_moved_into_the_future_is_read_afresh(
    lichess: LichessServer, any_store: Store
) -> None:
    from tracker.core.cursor import Cursor
    from tracker.store.sync import save_cursor

    any_store.ensure_player("indexinator", "indexinator")
    save_cursor(any_store, "indexinator", "", Cursor(FUTURE_MS, None, FUTURE_MS))
    summary = import_user("indexinator", store=any_store, options=fast(lichess.url))
    assert (summary.status, summary.new) == ("complete", 2907)  # before: 0, "complete"
    cursor = load_cursor(any_store, "indexinator")
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
    any_store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "bad.ndjson"
    path.write_text("\n".join(_lines_with_bad_names()) + "\n", encoding="utf-8")
    summary = import_file(path, store=any_store)
    assert (summary.read, summary.new, summary.skipped) == (2907, 2905, {"invalid value": 2})
    assert any("lone surrogate" in w for w in summary.warnings)
    assert any("NUL character" in w for w in summary.warnings)
    assert queries.count_games(any_store) == 2905
    assert _stored_ids(any_store) == _ids(LINES) - {json.loads(LINES[i])["id"] for i in BAD_NAMES}


def test_a_lone_surrogate_or_nul_from_the_api_is_one_invalid_value(any_store: Store) -> None:
    with LichessServer() as server:
        server.add_user("indexinator", _lines_with_bad_names())
        summary = import_user("indexinator", store=any_store, options=fast(server.url))
    assert summary.status == "complete", summary.message
    assert (summary.read, summary.new, summary.skipped) == (2907, 2905, {"invalid value": 2})
    assert queries.count_games(any_store) == 2905


def test_a_nul_byte_in_a_pgn_tag_is_one_invalid_value(any_store: Store, tmp_path: Path) -> None:
    data = CMRADE.read_bytes()
    at = [i for i in range(len(data)) if data.startswith(b'[White "', i)][3] + len('[White "')
    path = tmp_path / "nul.pgn"
    path.write_bytes(data[:at] + b"a\x00b" + data[at:])
    summary = import_file(path, store=any_store)
    assert (summary.new, summary.skipped) == (473, {"invalid value": 1})
    assert any("white user_id holds a NUL character" in w for w in summary.warnings)
    assert queries.count_games(any_store) == 473


def test_an_escaped_backslash_before_u0000_is_a_name_like_any_other() -> None:
    from tracker.sources.ndjson import read_ndjson

    line = _opponent_named(LINES[5], "back\\u0000slash")  # a backslash, then "u0000"
    assert "\\\\u0000" in line
    (record,) = read_ndjson([line.encode()])
    assert "back\\u0000slash" in (record.white.name, record.black.name)


# -- 4. every bounded text column holds the longest value tracker writes ----------------------

#: Columns whose values come from the FIDE client, which checks them (issue 19, item 6).
FIDE_CHECKED = {("fide_players", "name"), ("fide_players", "federation"),
                ("fide_players", "title")}


def _longest_written() -> dict[tuple[str, str], int]:
    """Every bounded text column → the longest value tracker writes there, from the limits
    the code keeps to (the sources check a game's fields against ``TEXT_LIMITS``)."""
    from tracker.analysis.engine_calibration import CALIBRATION_ID_MAX
    from tracker.core.codec import raw_digest
    from tracker.core.fide_records import LIST_KINDS
    from tracker.core.records import PERFS, SIDE_TEXT_LIMITS, TEXT_LIMITS, AnalysisSource
    from tracker.fide import EXPECTED_METHODS, RULES
    from tracker.fide.rules import CHAPTERS
    from tracker.report.saved_pass import _options
    from tracker.report.scale_runs import run_options
    from tracker.report.settings import CLUB_PREFIX, SCALES, START_SCALES, PlayerSettings
    from tracker.report.strength import _options as strength_options
    from tracker.sources.engine import ENGINE_NAME_MAX, ENGINE_VERSION_MAX
    from tracker.store.claims import WORKER_MAX
    from tracker.store.groups import MAX_NAME
    from tracker.store.runs import RUN_STATUSES
    from tracker.store.snapshots import GROUP, PASS, RUN, STRENGTH

    user_id = SIDE_TEXT_LIMITS["user_id"]  # a game's player; an account's id is 2-30
    perf = max(map(len, PERFS))

    def longest(values: Any) -> int:
        return max(len(v) for v in values)

    written = {("games", k): v for k, v in TEXT_LIMITS.items()
               if k not in ("initial_fen", "opening_name")}  # TEXT columns, unbounded
    written.update({("game_sides", k): v for k, v in SIDE_TEXT_LIMITS.items()})
    written.update({
        ("games", "digest"): len(raw_digest("a game")),
        ("game_sides", "color"): longest(("white", "black")),
        ("players", "id"): user_id, ("players", "username"): SIDE_TEXT_LIMITS["name"],
        ("players", "rules"): longest(RULES), ("players", "expected"): longest(EXPECTED_METHODS),
        ("players", "scale"): longest(SCALES), ("players", "start_scale"): longest(START_SCALES),
        ("players", "chapter"): longest(CHAPTERS),
        ("sync_cursors", "player_id"): user_id,
        ("sync_cursors", "perf_filter"): len(",".join(sorted(PERFS))),
        ("import_runs", "source"): longest(("api", "file")),
        ("import_runs", "status"): longest(RUN_STATUSES),
        ("import_runs", "player_id"): user_id,
        ("rating_history", "player_id"): user_id, ("rating_history", "perf"): 32,
        ("fide_links", "player_id"): user_id,
        ("fide_ratings", "kind"): longest(LIST_KINDS), ("fide_ratings", "month"): len("2026-12"),
        ("cache_entries", "user_id"): user_id, ("cache_entries", "perf"): perf,
        ("cache_entries", "kind"): longest((PASS, RUN, GROUP, STRENGTH)),
        ("cache_entries", "options"): longest((
            _options(True).options, _options(False).options,  # a pass, a scale's replay of it
            strength_options(None),  # a player's saved strength results
            run_options("chessdojo-2024", PlayerSettings(start_rating=2000).resolved()).options)),
        ("groups", "name"): MAX_NAME,
        ("group_members", "user_id"): user_id,
        ("group_members", "username"): SIDE_TEXT_LIMITS["name"],
        ("club_models", "perf"): perf,
        ("game_analysis", "source"): longest(get_args(AnalysisSource)),
        ("game_analysis", "engine"): ENGINE_NAME_MAX,
        ("game_analysis", "engine_version"): ENGINE_VERSION_MAX,
        ("game_analysis", "calibration"): CALIBRATION_ID_MAX,
        # a worker id and a skipped game's mark are cut to it (tracker.store.claims)
        ("analysis_claims", "worker"): WORKER_MAX,
    })
    # A saved scale may name a club model: "club:" and a group's name.
    written[("players", "scale")] = max(longest(SCALES), len(CLUB_PREFIX) + MAX_NAME)
    return written


def _bounded_columns() -> dict[tuple[str, str], int]:
    from sqlalchemy import String

    from tracker.store.models import Base

    return {(t.name, c.name): c.type.length for t in Base.metadata.tables.values()
            for c in t.columns if isinstance(c.type, String) and c.type.length is not None}


def test_every_bounded_text_column_holds_the_longest_value_written() -> None:
    columns = _bounded_columns()
    written = _longest_written()
    assert set(columns) == set(written) | FIDE_CHECKED  # a new column needs its bound here
    too_narrow = {col: (written[col], width) for col, width in columns.items()
                  if col in written and written[col] > width}
    assert too_narrow == {}  # before: status 11 > 10, perf_filter 135 > 128


def test_postgresql_columns_after_the_migrations_are_as_wide(pg_url: str) -> None:
    with Store(pg_url) as store:
        try:
            with store.engine.connect() as conn:
                widths = {(t, c): n for t, c, n in conn.execute(text(
                    "SELECT table_name, column_name, character_maximum_length FROM "
                    "information_schema.columns WHERE table_schema = 'public' AND "
                    "character_maximum_length IS NOT NULL AND table_name != 'alembic_version'"))}
        finally:
            with store.engine.begin() as conn:
                conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    assert widths == _bounded_columns()
    assert all(widths[col] >= n for col, n in _longest_written().items())


def _dead_pid() -> int:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


def test_a_killed_run_is_marked_interrupted_and_every_status_is_stored(any_store: Store) -> None:
    import socket

    from tracker import api
    from tracker.store.runs import RUN_STATUSES

    run_id = any_store.start_run("file", "games.pgn")
    any_store.update_run(run_id, message=f"running in process {_dead_pid()} on "
                       f"{socket.gethostname()}")
    (run,) = api.runs(db=any_store)  # before, on PostgreSQL: a DataError, every time
    assert (run.id, run.status) == (run_id, "interrupted")
    for status in RUN_STATUSES:
        any_store.update_run(run_id, status=status)
        assert queries.import_runs(any_store)[0].status == status
    with pytest.raises(ValueError, match="not an import run status"):
        any_store.update_run(run_id, status="stopped")


def test_an_import_of_every_perf_keeps_its_cursor(lichess: LichessServer, any_store: Store) -> None:
    from tracker.core.records import PERFS

    summary = import_user("indexinator", store=any_store,
                          options=fast(lichess.url, perf=",".join(PERFS)))
    assert (summary.status, summary.new) == ("complete", 2907)  # before, PostgreSQL: failed
    cursor = load_cursor(any_store, "indexinator", ",".join(sorted(PERFS)))
    assert cursor is not None and cursor.newest_ms is not None


def test_a_rating_history_series_with_a_name_no_perf_has_is_left_out() -> None:
    from tracker.sources.lichess import parse_rating_history

    errors: list[str] = []
    series = parse_rating_history([{"name": "Blitz", "points": [[2024, 0, 31, 1500]]},
                                   {"name": "x" * 40, "points": [[2024, 0, 31, 1500]]},
                                   {"name": "nul\x00", "points": [[2024, 0, 31, 1500]]}],
                                  errors=errors)
    assert list(series) == ["blitz"]
    assert len(errors) == 2 and "is not a perf's name" in errors[0]


def test_an_account_answered_for_another_name_is_an_error(any_store: Store) -> None:
    from tests.lichess_server import Account
    from tracker.sources.lichess import LichessError

    with LichessServer() as server:
        server.accounts["someone"] = Account("x" * 100)  # an id the store cannot hold
        with pytest.raises(LichessError, match="another account than 'someone'"):
            import_user("someone", store=any_store, options=fast(server.url))
    assert queries.import_runs(any_store) == []


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_migration_0007_widens_an_existing_database_and_goes_back(
    dialect: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from alembic import command
    from sqlalchemy import create_engine, event

    from tracker.store.engine import _sqlite_on_connect, alembic_config

    url = f"sqlite:///{tmp_path / 'old.db'}" if dialect == "sqlite" else (
        request.getfixturevalue("pg_url"))
    engine = create_engine(url)
    if dialect == "sqlite":
        event.listen(engine, "connect", _sqlite_on_connect)
    cfg = alembic_config()

    def migrate(step: Any, revision: str) -> None:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            step(cfg, revision)

    try:
        migrate(command.upgrade, "0006")
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO players (id, username, added_at_ms) "
                              "VALUES ('p', 'p', 1)"))
            conn.execute(text("INSERT INTO import_runs (source, target, started_at_ms, status, "
                              "read, new, updated, unchanged, skipped) "
                              "VALUES ('api', 'p', 1, 'running', 0, 0, 0, 0, '{}')"))
            conn.execute(text("INSERT INTO sync_cursors (player_id, perf_filter, "
                              "resume_until_ms) VALUES ('p', 'blitz', 5)"))
        migrate(command.upgrade, "0007")
        long_filter = "x" * 135
        with engine.begin() as conn:  # what 0006 refused on PostgreSQL
            conn.execute(text("UPDATE import_runs SET status = 'interrupted'"))
            conn.execute(text("INSERT INTO sync_cursors (player_id, perf_filter) "
                              f"VALUES ('p', '{long_filter}')"))
            assert conn.execute(text("SELECT perf_filter, resume_until_ms, resume_top_ms "
                                     "FROM sync_cursors ORDER BY perf_filter")).all() == [
                ("blitz", 5, None), (long_filter, None, None)]
        migrate(command.downgrade, "0006")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT status FROM import_runs")).scalar() == "partial"
            assert conn.execute(text("SELECT perf_filter FROM sync_cursors")).all() == [
                ("blitz",)]
    finally:
        if dialect == "postgresql":
            with engine.begin() as conn:
                conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        engine.dispose()


# -- 2. a --since in the future is refused ----------------------------------------------------


def test_a_since_in_the_future_is_refused_with_one_line_and_exit_2(
    lichess: LichessServer, tmp_path: Path
) -> None:
    import os
    import subprocess
    import sys
    from datetime import UTC, datetime, timedelta

    from tracker.sources.lichess import ImportArgumentError

    ahead = (datetime.now(UTC) + timedelta(days=30)).date().isoformat()
    db = tmp_path / "t.db"
    proc = subprocess.run(
        [sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "import", "indexinator",
         "--since", ahead, "--base-url", lichess.url],
        capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, timeout=120)
    assert proc.returncode == 2  # before: 0, and the cursor at that date
    assert proc.stderr.strip() == (f"error: since {ahead} is in the future: give a date up to "
                                   "today")
    assert lichess.requests == [] and not db.exists()
    with pytest.raises(ImportArgumentError, match="in the future"):
        import_user("indexinator", store=Store("sqlite://"),
                    options=LichessOptions(base_url=lichess.url, since=10**20))
    today = datetime.now(UTC).date().isoformat()
    with Store(str(db)) as store:  # today is allowed
        summary = import_user("indexinator", store=store, options=fast(lichess.url, since=today))
    assert summary.status == "complete"


# -- 5. a PGN game with a huge tag is one game too large, nothing of it stored ----------------


def _pgn(gid: str, white: str = "a", event: str = "Rated Blitz game") -> bytes:
    return (f'[Event "{event}"]\n[Site "https://lichess.org/{gid}"]\n[White "{white}"]\n'
            '[Black "b"]\n[Result "1-0"]\n[UTCDate "2024.01.01"]\n[UTCTime "10:00:00"]\n'
            '[WhiteElo "1500"]\n[BlackElo "1500"]\n[TimeControl "180+0"]\n\n'
            '1. e4 e5 2. Nf3 Nc6 1-0\n\n').encode()


@pytest.mark.parametrize("user", [None, "b"])
@pytest.mark.parametrize("tag", ["Event", "White"])
def test_a_pgn_game_with_a_5_mb_tag_is_one_game_too_large(
    any_store: Store, tmp_path: Path, tag: str, user: str | None
) -> None:
    huge = "x" * (5 << 20)  # over the 4 MB cap of one game
    middle = _pgn("aaaaaaa2", **{tag.lower(): huge})
    path = tmp_path / "tag.pgn"
    path.write_bytes(_pgn("aaaaaaa1") + middle + _pgn("aaaaaaa3"))
    summary = import_file(path, store=any_store, user=user)
    # before: read 4, new 3 ("aaaaaaa2" stored from its tags after the huge one; with a huge
    # White, a game without White), or the tail of the game stored under a content id
    assert (summary.read, summary.new, summary.skipped) == (3, 2, {"game too large": 1})
    assert _stored_ids(any_store) == {"aaaaaaa1", "aaaaaaa3"}
    one = tmp_path / "one.pgn"  # the file: that game alone
    one.write_bytes(middle)
    alone = import_file(one, store=any_store, user=user)
    assert (alone.read, alone.new, alone.skipped) == (1, 0, {"game too large": 1})
    assert queries.count_games(any_store) == 2


def test_a_file_whose_name_is_not_utf8_is_imported(any_store: Store, tmp_path: Path) -> None:
    import os

    from tracker.store.runs import storable_text

    name = os.fsdecode(b"caf\xe9.pgn")  # Latin-1 bytes: a surrogate escape in Python
    path = tmp_path / name
    path.write_bytes(SINGLE.read_bytes())
    summary = import_file(path, store=any_store)  # before: UnicodeEncodeError, 0 games
    assert (summary.status, summary.new) == ("complete", 1)
    (run,) = queries.import_runs(any_store)
    assert run.target.endswith("caf\ufffd.pgn")
    assert storable_text("jes\ud800108\x00") == "jes\ufffd\ufffd\ufffd108\ufffd"
    assert storable_text("plain é") == "plain é"


def test_a_run_starts_with_its_process_in_one_commit(any_store: Store) -> None:
    """The run's row and the "running in process …" message that lets a later run tell a
    killed one: one transaction, not two (a sync starts one run per player)."""
    from sqlalchemy import event

    from tracker.importing.run_liveness import running_message
    from tracker.importing.runner import ImportRecorder

    commits: list[int] = []

    def count(_conn: object) -> None:
        commits.append(1)

    event.listen(any_store.engine, "commit", count)
    try:
        recorder = ImportRecorder(any_store, "api", "someone", player="someone")
    finally:
        event.remove(any_store.engine, "commit", count)
    assert len(commits) == 1
    (run,) = queries.import_runs(any_store)
    assert (run.id, run.status, run.message) == (recorder.run_id, "running", running_message())
    with recorder:
        pass
    assert queries.import_runs(any_store)[0].status == "complete"
