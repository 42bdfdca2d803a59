"""Import by username from the Lichess API (tracker.sources.lichess), against the local
Lichess-compatible server (tests/lichess_server.py): real HTTP on 127.0.0.1, real exports."""

from __future__ import annotations

import functools
import json
import logging
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
import requests
from typer.testing import CliRunner

from tests.conftest import ANALYSED, CASES, INDEXINATOR, INDEXINATOR_LATER
from tests.lichess_server import LichessServer, ndjson_lines
from tests.test_lichess_server import C08_THIRD
from tracker import api
from tracker.cli import commands as cli_module
from tracker.core.config import USER_AGENT
from tracker.importing import import_file
from tracker.importing import lichess as lichess_source
from tracker.importing.lichess import LichessOptions, import_user
from tracker.sources.lichess import (
    GameFetcher,
    ImportArgumentError,
    LichessClient,
    LichessSession,
    Segment,
    SegmentResult,
    TokenError,
    UnknownUserError,
    advance_cursor,
    epoch_ms,
    make_session,
    month_window,
    parse_perfs,
    parse_rating_history,
    plan_sync,
)
from tracker.sources.lichess import series_perf_key as perf_key
from tracker.store import queries
from tracker.store.db import Store
from tracker.store.sync import Cursor, load_cursor

LINES = ndjson_lines(INDEXINATOR)
LATER = ndjson_lines(INDEXINATOR_LATER)
NEWEST = json.loads(LINES[0])["createdAt"]
#: Short waits so that the whole file runs in seconds (production: 60 s, 2 s, (5, 30) s).
FAST: dict[str, Any] = {"retry_wait_429": 0.05, "retry_wait": 0.01, "timeout": (2.0, 0.4)}


@pytest.fixture
def lichess() -> Iterator[LichessServer]:
    """The local Lichess with indexinator's real export (2,907 games)."""
    with LichessServer() as server:
        server.add_user("indexinator", LINES)
        yield server


def run(server: LichessServer, store: Store, username: str = "indexinator",
        progress: Any = None, **kwargs: Any) -> Any:
    options = LichessOptions(base_url=server.url, **{**FAST, **kwargs})
    return import_user(username, store=store, options=options, progress=progress)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracker.cli.commands", *args], capture_output=True, text=True,
        env={**os.environ, "NO_COLOR": "1", **(env or {})}, timeout=120,
    )


def table_rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return sorted(conn.execute(sql).fetchall())


GAME_COLUMNS = (
    "id, created_at_ms, last_move_at_ms, ended_at_ms, rated, variant, speed, perf, status, "
    "result, plies, clock_initial, clock_increment, days_per_turn, initial_fen, eco, "
    "opening_name, tournament_id, digest"
)

#: Every side with its game's Lichess id (the surrogate key ``game_pk`` is numbered per
#: database, in the order its games were first stored).
SIDES_BY_GAME_ID = (
    "SELECT g.id, s.color, s.user_id, s.name, s.title, s.rating, s.rating_diff, s.provisional, "
    "s.ai_level FROM game_sides s JOIN games g ON g.pk = s.game_pk"
)


# -- the tests ------------------------------------------------------------------------


def test_cli_import_stores_2907_games_same_rows_as_import_file_and_sends_our_user_agent(
    lichess: LichessServer, tmp_path: Path
) -> None:
    db = tmp_path / "api.db"
    proc = cli("--db", str(db), "import", "indexinator", "--base-url", lichess.url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith("indexinator: read 2907, new 2907, updated 0")
    assert proc.stdout.strip().endswith("complete")

    file_db = tmp_path / "file.db"
    with Store(str(file_db)) as s:
        assert import_file(INDEXINATOR, store=s).new == 2907
    api_games = table_rows(db, f"SELECT {GAME_COLUMNS} FROM games")
    assert len(api_games) == 2907
    assert api_games == table_rows(file_db, f"SELECT {GAME_COLUMNS} FROM games")
    assert table_rows(db, SIDES_BY_GAME_ID) == table_rows(file_db, SIDES_BY_GAME_ID)
    assert table_rows(db, "SELECT DISTINCT source FROM games") == [("api",)]

    agents = {r.user_agent for r in lichess.requests}
    assert agents == {USER_AGENT}
    assert USER_AGENT.startswith("tracker/") and "(+https://" in USER_AGENT
    assert not any("python-requests" in (r.user_agent or "") for r in lichess.requests)


def test_next_import_fetches_only_the_10_later_games(
    lichess: LichessServer, store: Store
) -> None:
    assert run(lichess, store).new == 2907
    lichess.add_games("indexinator", LATER)
    lichess.reset_log()
    summary = run(lichess, store)
    assert (summary.read, summary.new, summary.status) == (10, 10, "complete")
    assert lichess.served_games == 10
    assert queries.count_games(store) == 2917
    new_games = lichess.game_requests()[0]
    assert new_games.query["since"] == str(NEWEST + 1)


@pytest.mark.parametrize(
    "fault",
    ["429 once", "cut after 1000", "stall", "truncated line", "cut twice, then 429 once"],
)
def test_faults_still_end_with_2907_unique_games(
    lichess: LichessServer, store: Store, fault: str
) -> None:
    if fault == "429 once":
        lichess.fail_429()
    elif fault == "cut after 1000":
        lichess.cut_after(1000)
    elif fault == "stall":
        lichess.stall_after(700, seconds=5)  # the read timeout is 0.4 s
    elif fault == "truncated line":
        lichess.truncate_after(1500)
    else:
        lichess.cut_after(400, times=2)
        lichess.fail_429(skip=1)
    summary = run(lichess, store)
    assert summary.status == "complete", summary.message
    assert (summary.read, summary.new, summary.unchanged) == (2907, 2907, 0)  # no game twice
    assert queries.count_games(store) == 2907
    downloads = lichess.game_requests()
    assert len(downloads) >= 2
    if fault != "429 once":  # a resumed download starts at the oldest game received
        whole = downloads[0].games - (fault == "truncated line")  # the half line is no game
        oldest_received = json.loads(LINES[whole - 1])["createdAt"]
        assert downloads[1].query["until"] == str(oldest_received + 1)
        assert sum(r.games for r in downloads) <= 2907 + len(downloads)


def test_429_twice_in_a_row_stops_as_partial_and_a_later_run_completes(
    lichess: LichessServer, store: Store
) -> None:
    lichess.cut_after(1000)
    lichess.fail_429(times=2, skip=1)
    waits: list[float] = []
    summary = run(lichess, store, sleep=waits.append, retry_wait_429=60.0)
    assert summary.status == "partial"
    assert "429" in summary.message and "twice in a row" in summary.message
    assert "1000 games read and kept" in summary.message
    assert 60.0 in waits  # the full minute, as Lichess asks
    assert queries.count_games(store) == 1000
    assert queries.import_runs(store)[0].status == "partial"
    cursor = load_cursor(store, "indexinator")
    assert cursor is not None and cursor.resume_until_ms == json.loads(LINES[999])["createdAt"]

    lichess.reset_log()
    later = run(lichess, store)
    assert later.status == "complete"
    assert queries.count_games(store) == 2907
    gap = lichess.game_requests()[0]
    assert gap.query["until"] == str(cursor.resume_until_ms + 1)  # resumed, not restarted
    assert lichess.served_games <= 1907 + 1
    assert load_cursor(store, "indexinator").resume_until_ms is None  # type: ignore[union-attr]


def test_cli_partial_import_exits_1_with_the_message(
    lichess: LichessServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lichess.cut_after(0, times=None)  # every download breaks before its first game
    monkeypatch.setattr(api, "import_user", functools.partial(api.import_user, **FAST))
    result = CliRunner().invoke(cli_module.app, [
        "--db", str(tmp_path / "t.db"), "import", "indexinator", "--base-url", lichess.url])
    assert result.exit_code == 1
    assert "partial: the download broke 6 times in a row (connection cut)" in result.output
    assert "run the import again to resume" in result.output


def test_unknown_user_exits_1_with_one_line_and_the_database_unchanged(
    lichess: LichessServer, tmp_path: Path
) -> None:
    db = tmp_path / "t.db"
    with Store(str(db)) as s:
        run(lichess, s)
    lichess.add_user("closed_one", LINES[:5], disabled=True)
    before = (db.read_bytes(), table_rows(db, "SELECT id, status FROM import_runs"))
    for name in ("no_such_player", "closed_one"):
        proc = cli("--db", str(db), "import", name, "--base-url", lichess.url)
        assert proc.returncode == 1  # as an unknown local player: one rule (README)
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ")
        assert name in proc.stderr and "Traceback" not in proc.stderr
        assert proc.stdout == ""
    assert (db.read_bytes(), table_rows(db, "SELECT id, status FROM import_runs")) == before
    with pytest.raises(UnknownUserError) as info:
        api.import_user("no_such_player", db=str(db), base_url=lichess.url)
    assert info.value.exit_code == 1


def test_unknown_user_does_not_even_create_the_database(
    lichess: LichessServer, tmp_path: Path
) -> None:
    db = tmp_path / "never.db"
    with pytest.raises(UnknownUserError):
        api.import_user("no_such_player", db=str(db), base_url=lichess.url)
    assert not db.exists()


def test_token_never_appears_in_output_logs_or_database(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    token = "lip_S3cr3tT0k3nNeverPrinted"
    history = json.loads((CASES / "C01.json").read_text())
    db = tmp_path / "t.db"
    with LichessServer(tokens=[token]) as server:
        server.add_user("indexinator", LINES, rating_history=history)
        server.cut_after(300)  # errors and retries are logged too
        with caplog.at_level(logging.DEBUG):
            summary = api.import_user("indexinator", db=str(db), base_url=server.url,
                                      token=token, **FAST)
        assert summary.status == "complete"
        server.add_games("indexinator", LATER)
        token_file = tmp_path / "token.txt"
        token_file.write_text(token + "\n")
        by_env = cli("--db", str(db), "import", "indexinator", "--base-url", server.url,
                     env={"LICHESS_TOKEN": token})
        by_file = cli("--db", str(db), "import", "indexinator", "--base-url", server.url,
                      "--token-file", str(token_file))
        json_out = cli("--db", str(db), "import", "indexinator", "--json", "--base-url",
                       server.url, env={"LICHESS_TOKEN": token})
        requests_seen = list(server.requests)
    assert by_env.returncode == by_file.returncode == json_out.returncode == 0, by_env.stderr
    assert {r.authorization for r in requests_seen} == {f"Bearer {token}"}
    assert {r.user_agent for r in requests_seen} == {USER_AGENT}
    assert any(r.path.endswith("/rating-history") for r in requests_seen)
    texts = [caplog.text, summary.line(), repr(summary), json.dumps(api.summary_dict(summary))]
    for proc in (by_env, by_file, json_out):
        texts += [proc.stdout, proc.stderr]
    assert caplog.records  # there was something to search
    for text in texts:
        assert token not in text
    for path in tmp_path.glob("t.db*"):
        assert token.encode() not in path.read_bytes()
    assert repr(make_session(token)) == "<LichessTokenSession>"


def test_bad_token_and_unreadable_token_file_are_one_line_errors(tmp_path: Path) -> None:
    with LichessServer(tokens=["lip_good"]) as server:
        server.add_user("indexinator", LINES[:5])
        with pytest.raises(TokenError, match="refused the API token"):
            api.import_user("indexinator", db=str(tmp_path / "t.db"), base_url=server.url,
                            token="lip_bad")
        with pytest.raises(TokenError, match="cannot read the token file"):
            api.import_user("indexinator", db=str(tmp_path / "t.db"), base_url=server.url,
                            token_file=tmp_path / "missing.txt")
    assert not (tmp_path / "t.db").exists()


# -- rating history (case C01) ----------------------------------------------------------------


def test_c01_rating_history_months_are_0_based() -> None:
    data = json.loads((CASES / "C01.json").read_text())
    series = parse_rating_history(data)
    assert series == {"blitz": [
        (date(2024, 1, 31), 1500), (date(2024, 2, 29), 1512),
        (date(2024, 11, 30), 1521), (date(2024, 12, 31), 1530),
    ]}
    assert "bullet" not in series  # an empty points list is no series, and no error


def test_c01_through_the_rating_history_path_with_a_token(store: Store) -> None:
    history = json.loads((CASES / "C01.json").read_text())
    with LichessServer() as server:
        server.add_user("indexinator", LINES, rating_history=history)
        summary = run(server, store, token="lip_test")
    assert summary.status == "complete"
    assert summary.message == "rating history stored: 1 perfs, 4 days"
    blitz = queries.rating_history(store, "indexinator", "blitz")
    assert blitz[0] == (date(2024, 1, 31), 1500)
    assert blitz[1] == (date(2024, 2, 29), 1512)
    assert blitz[-1] == (date(2024, 12, 31), 1530)
    assert queries.rating_history(store, "indexinator", "bullet") == []


def test_without_a_token_the_rating_history_is_skipped_quietly(
    lichess: LichessServer, store: Store
) -> None:
    summary = run(lichess, store)
    assert summary.message is None and summary.warnings == []
    assert not any(r.path.endswith("rating-history") for r in lichess.requests)


def test_rating_history_names_and_bad_points() -> None:
    mary = json.loads((INDEXINATOR.parent / "api-examples" /
                       "api-user-rating-history_mary_LOCAL-DEV-LILA.json").read_text())
    keys = set(parse_rating_history(mary))
    assert {"ultraBullet", "kingOfTheHill", "threeCheck", "racingKings", "puzzle"} & keys
    assert "ultraBullet" not in keys  # mary's UltraBullet series is empty
    assert perf_key("King of the Hill") == "kingOfTheHill" and perf_key("Three-Check") == (
        "threeCheck")
    doc = json.loads((INDEXINATOR.parent / "rating-history-doc-example.json").read_text())
    assert parse_rating_history(doc)["bullet"][0] == (date(2011, 1, 8), 1472)
    errors: list[str] = []
    bad = [{"name": "Blitz", "points": [[2024, 12, 1, 1500], [2024, 0, 1, 1490], [1, 2]]}]
    assert parse_rating_history(bad, errors) == {"blitz": [(date(2024, 1, 1), 1490)]}
    assert len(errors) == 2  # month 12 is the 13th month; a point needs 4 numbers


# -- time windows (case C02) ------------------------------------------------------------------


@pytest.fixture
def berlin() -> Iterator[None]:
    """The host's zone is Europe/Berlin for the test (C02's trap)."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Berlin"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def test_c02_month_window_is_integer_utc_ms_whatever_the_host_zone(berlin: None) -> None:
    case = json.loads((CASES / "C02.json").read_text())
    assert time.localtime(0).tm_gmtoff == 3600  # the zone took effect
    since, until = month_window(case["period"])
    assert (since, until) == (case["candidate_since_values"]["correct_utc_ms"],
                              case["correct_until_exclusive_utc_ms"])
    assert (since, until) == (1704067200000, 1706745600000)
    assert type(since) is int and type(until) is int
    assert month_window("2024-12") == (1733011200000, 1735689600000)
    assert epoch_ms("2024-01-01") == since == epoch_ms(date(2024, 1, 1))
    assert epoch_ms(case["candidate_since_values"]["float_ms"]) == since
    with pytest.raises(ImportArgumentError, match="seconds"):
        epoch_ms(case["candidate_since_values"]["seconds_not_ms"])
    with pytest.raises(ImportArgumentError, match="naive"):
        epoch_ms(datetime(2024, 1, 1))
    with pytest.raises(ImportArgumentError, match="whole milliseconds"):
        epoch_ms(1704067200000.5)
    with pytest.raises(ImportArgumentError):
        month_window("2024-13")


def test_c02_late_january_game_is_in_the_january_window_from_the_server(berlin: None) -> None:
    case = json.loads((CASES / "C02.json").read_text())
    player = {"user": {"name": case["username"], "id": case["username"]}, "rating": 1500}
    other = {"user": {"name": "someone", "id": "someone"}, "rating": 1500}

    def game(gid: str, created: int) -> dict[str, Any]:
        return {"id": gid, "rated": True, "variant": "standard", "speed": "blitz",
                "perf": "blitz", "createdAt": created, "lastMoveAt": created + 480_000,
                "status": "draw", "players": {"white": player, "black": other}}

    window = case["game_in_window"]
    games = [game(window["id"], window["createdAt"]),
             game("Feb1UTC0", 1706745600000),      # 1 Feb 00:00 UTC: February
             game("Dec31Ber", 1704063600000)]      # 1 Jan 00:00 in Berlin: still 2023 in UTC
    since, until = month_window(case["period"])
    with LichessServer() as server:
        server.add_user(case["username"], games)
        client = LichessClient(server.url, make_session())
        fetcher = GameFetcher(client, case["username"])
        got: list[str] = []
        result = fetcher.stream(Segment("all", since, until), lambda g: got.append(g["id"]))
        assert result.complete and got == ["LateJan01"]
        (request,) = server.game_requests()
        assert request.query["since"] == "1704067200000"
        assert request.query["until"] == "1706745600000"


# -- incremental sync, correspondence, filters --------------------------------------------------


def test_correspondence_game_ongoing_at_the_last_sync_is_imported_when_it_ends(
    lichess: LichessServer, store: Store
) -> None:
    started = 1_755_000_000_000  # Aug 2025: older than the newest game (Oct 2025)
    corr = {"id": "corrGame", "rated": True, "variant": "standard", "speed": "correspondence",
            "perf": "correspondence", "createdAt": started, "lastMoveAt": started + 86_400_000,
            "status": "started", "daysPerTurn": 3, "moves": "e4 e5",
            "players": {"white": {"user": {"name": "indexinator", "id": "indexinator"},
                                  "rating": 1500},
                        "black": {"user": {"name": "slowpoke", "id": "slowpoke"},
                                  "rating": 1500}}}
    lichess.add_games("indexinator", [corr])
    first = run(lichess, store)
    assert (first.new, first.skipped) == (2907, {lichess_source.SKIP_ONGOING: 1})
    assert load_cursor(store, "indexinator").newest_ms == NEWEST  # type: ignore[union-attr]

    ended = int(time.time() * 1000)
    lichess.update_game("indexinator", "corrGame", status="mate", winner="white",
                        lastMoveAt=ended, moves="f3 e5 g4 Qh4#")
    lichess.reset_log()
    second = run(lichess, store)
    assert (second.new, second.read, second.status) == (1, 1, "complete")
    assert queries.count_games(store) == 2908
    assert lichess.served_games == 1
    corr_pass = lichess.game_requests()[-1]
    assert corr_pass.query["perfType"] == "correspondence" and corr_pass.games == 1


def test_real_time_game_still_playing_keeps_the_cursor_before_it(
    lichess: LichessServer, store: Store
) -> None:
    playing = {**json.loads(LINES[0]), "id": "playing1", "status": "started",
               "createdAt": NEWEST - 60_000}
    playing.pop("winner", None)
    lichess.add_games("indexinator", [playing])
    run(lichess, store)
    assert load_cursor(store, "indexinator").newest_ms == NEWEST - 60_001  # type: ignore[union-attr]
    lichess.update_game("indexinator", "playing1", status="resign", winner="black")
    summary = run(lichess, store)
    assert (summary.new, summary.unchanged) == (1, 1)  # it, and the newest game again
    assert queries.count_games(store) == 2908


def test_perf_filter_windows_by_last_move_with_an_overlap(
    lichess: LichessServer, store: Store
) -> None:
    first = run(lichess, store, perf="bullet")
    assert (first.new, first.status) == (16, "complete")
    assert lichess.game_requests()[0].query["perfType"] == "bullet"
    cursor = load_cursor(store, "indexinator", "bullet")
    newest_bullet = max(json.loads(x)["lastMoveAt"] for x in LINES if '"perf":"bullet"' in x)
    assert cursor == Cursor(newest_bullet, None, cursor.last_sync_at_ms)  # type: ignore[union-attr]
    lichess.reset_log()
    again = run(lichess, store, perf="Bullet")
    (request,) = lichess.game_requests()  # no correspondence pass: lastMoveAt catches them
    assert request.query["since"] == str(newest_bullet - lichess_source.SEARCH_INDEX_LAG_MS)
    assert (again.new, again.unchanged) == (0, again.read)
    assert load_cursor(store, "indexinator") is None  # the unfiltered cursor is another one


def test_since_is_a_floor_and_full_reads_everything_again(
    lichess: LichessServer, store: Store
) -> None:
    floor = epoch_ms("2025-01-01")
    expected = sum(1 for x in LINES if json.loads(x)["createdAt"] >= floor)
    first = run(lichess, store, since="2025-01-01")
    assert first.new == expected and 0 < expected < 2907
    lichess.reset_log()
    full = run(lichess, store, full=True)
    assert (full.new, full.unchanged) == (2907 - expected, expected)
    assert "since" not in lichess.game_requests()[0].query


def test_progress_has_the_total_from_the_profile(lichess: LichessServer, store: Store) -> None:
    calls: list[tuple[int, int, int | None]] = []
    run(lichess, store, progress=lambda *a: calls.append(a))
    assert calls[0] == (0, 0, 2907) and calls[-1] == (2907, 2907, 2907)
    lichess.add_games("indexinator", LATER)
    calls.clear()
    run(lichess, store, progress=lambda *a: calls.append(a))
    assert calls[0] == (0, 0, 10) and calls[-1] == (10, 10, 10)  # count.all − stored


def test_interrupted_import_is_partial_and_the_next_run_resumes(
    lichess: LichessServer, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lichess_source, "PROGRESS_INTERVAL_S", 0.0)  # a report per game

    def stop_at_1200(read: int, done: int, total: int | None) -> None:
        if read >= 1200:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(lichess, store, progress=stop_at_1200)
    (last_run,) = queries.import_runs(store, limit=1)
    assert last_run.status == "partial" and "interrupted" in (last_run.message or "")
    assert queries.count_games(store) == 1200  # every game read before Ctrl+C is kept
    lichess.reset_log()
    assert run(lichess, store).status == "complete"
    assert queries.count_games(store) == 2907
    assert "until" in lichess.game_requests()[0].query


def test_c08_truncated_stream_is_partial_then_next_run_ends_with_3_unique_games(
    store: Store,
) -> None:
    c08 = (CASES / "C08.ndjson").read_bytes().split(b"\n")
    with LichessServer() as server:
        server.add_user("stream_sally", [*(x.decode() for x in c08[:2]), C08_THIRD])
        # the server breaks on the third game on every attempt, as in the case
        server.truncate_after(2, keep=len(c08[2]), times=None, game_id="Strm0001")
        first = run(server, store, "stream_sally", max_retries=3)
        assert first.status == "partial"
        assert "broke 4 times in a row (a truncated line)" in (first.message or "")
        assert queries.count_games(store) == 2 and first.new == 2
        assert queries.import_runs(store)[0].status == "partial"
        server.faults.clear()
        second = run(server, store, "stream_sally")
    assert second.status == "complete" and (second.new, second.unchanged) == (1, 1)
    assert queries.count_games(store) == 3
    ids = [g.id for g in queries.player_games(store, "stream_sally")]
    assert sorted(ids) == ["Strm0001", "Strm0002", "Strm0003"]


# -- pieces -----------------------------------------------------------------------------------


def test_session_sets_our_user_agent_and_a_timeout_on_every_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[tuple[str, Any]] = []

    def fake_send(self: Any, request: requests.PreparedRequest, **kwargs: Any) -> Any:
        sent.append((request.headers["User-Agent"], kwargs["timeout"]))
        raise requests.ConnectionError("offline")

    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send", fake_send)
    for session in (make_session(None, (3.0, 7.0)), make_session("lip_x", (3.0, 7.0))):
        with pytest.raises(requests.ConnectionError):
            session.get("http://127.0.0.1:9/api/user/x")
    assert sent == [(USER_AGENT, (3.0, 7.0))] * 2
    assert LichessSession().timeout == lichess_source.DEFAULT_TIMEOUT


def test_unreachable_server_is_a_one_line_error(tmp_path: Path) -> None:
    proc = cli("--db", str(tmp_path / "t.db"), "import", "indexinator", "--base-url",
               "http://127.0.0.1:9")
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: cannot reach http://127.0.0.1:9")
    assert proc.stderr.count("\n") == 1
    assert not (tmp_path / "t.db").exists()


def test_bad_arguments_are_refused_before_any_request(lichess: LichessServer) -> None:
    with pytest.raises(ImportArgumentError, match="unknown perf"):
        api.import_user("indexinator", perf="blits", base_url=lichess.url)
    with pytest.raises(ImportArgumentError, match="not a Lichess username"):
        api.import_user("../etc/passwd", base_url=lichess.url)
    for name in ("-2-3", "_x", "-indexinator"):  # Lichess names start with a letter or digit
        with pytest.raises(ImportArgumentError, match="starting with a letter or digit"):
            api.import_user(name, base_url=lichess.url)
    with pytest.raises(ImportArgumentError, match="YYYY-MM-DD"):
        api.import_user("indexinator", since="yesterday", base_url=lichess.url)
    assert lichess.requests == []
    assert parse_perfs("Blitz, rapid,blitz") == ("blitz", "rapid")


def test_plan_and_cursor_for_a_first_run_a_gap_and_new_games() -> None:
    assert plan_sync(None) == [Segment("all", None, None, None, True)]
    plan = plan_sync(Cursor(1_000_000_000_000, 1_100_000_000_000, 1_200_000_000_000,
                            resume_top_ms=1_150_000_000_000))
    assert [(s.kind, s.since_ms, s.until_ms) for s in plan] == [
        ("gap", 1_000_000_000_001, 1_100_000_000_001),
        ("new", 1_150_000_000_001, None),
        ("correspondence", 1_200_000_000_000 - 86_400_000, None),
    ]
    old = Cursor(1_000_000_000_000, 1_100_000_000_000, 1_200_000_000_000, 1_150_000_000_000)
    done = [SegmentResult(complete=True, newest_ms=1_160_000_000_000) for _ in plan]
    assert advance_cursor(old, plan, done, started_ms=1_300_000_000_000) == Cursor(
        1_160_000_000_000, None, 1_300_000_000_000)
    # the new games stopped half-way: the old gap is closed, a new one opens above the top
    half = [done[0], SegmentResult(oldest_ms=1_155_000_000_000, newest_ms=1_170_000_000_000)]
    assert advance_cursor(old, plan, half, started_ms=1_300_000_000_000) == Cursor(
        1_150_000_000_000, 1_155_000_000_000, 1_200_000_000_000, 1_170_000_000_000)
    # the gap itself stopped: it only shrinks, nothing else moves
    assert advance_cursor(old, plan, [SegmentResult(oldest_ms=1_050_000_000_000)],
                          started_ms=1) == Cursor(1_000_000_000_000, 1_050_000_000_000,
                                                  1_200_000_000_000, 1_150_000_000_000)
    # a first run that stopped with nothing received leaves no cursor
    assert advance_cursor(None, plan_sync(None), [SegmentResult()], started_ms=1) is None


def test_api_import_user_is_the_cli_twin(lichess: LichessServer, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    summary = api.import_user("IndexInator", db=str(db), base_url=lichess.url, **FAST)
    assert (summary.player, summary.new) == ("indexinator", 2907)
    (player,) = api.players(db=str(db))
    assert (player.id, player.username, player.games) == ("indexinator", "indexinator", 2907)
    assert datetime.fromtimestamp(NEWEST / 1000, UTC).year == 2025


def test_a_store_failure_fails_the_run_without_moving_the_cursor_past_lost_games(
    lichess: LichessServer, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = store.write_prepared
    calls = 0

    def flaky_write(*args: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls >= 3:
            raise OSError("disk full")
        return real_write(*args)

    monkeypatch.setattr(store, "write_prepared", flaky_write)
    with pytest.raises(OSError, match="disk full"):
        run(lichess, store)
    assert queries.import_runs(store)[0].status == "failed"
    assert queries.count_games(store) == 1000  # two batches of 500
    assert load_cursor(store, "indexinator") is None  # nothing claims the lost batch
    monkeypatch.setattr(store, "write_prepared", real_write)
    assert run(lichess, store).new == 1907
    assert queries.count_games(store) == 2907


def test_games_of_another_player_are_skipped_and_counted(any_store: Store) -> None:
    # A server that answers indexinator's download with reda46's games too (41, none of
    # which indexinator played): only indexinator's are stored, the others counted.
    mine = ndjson_lines(INDEXINATOR)[:30]
    others = ndjson_lines(ANALYSED)
    with LichessServer() as server:
        server.add_user("indexinator", mine + others)
        summary = api.import_user("indexinator", db=any_store, base_url=server.url, **FAST)
    assert summary.status == "complete"
    assert (summary.read, summary.new) == (71, 30)
    assert summary.skipped == {"not the player's game": 41}
    assert "skipped 41 (41 not the player's game)" in summary.line()
    assert summary.warnings[0].endswith("not a game of indexinator (the server sent another "
                                        "player's game): skipped")
    assert [p.id for p in api.players(db=any_store)] == ["indexinator"]
    assert sum(p.games for p in api.players(db=any_store)[0].perfs) == 30


def test_the_options_are_one_frozen_object_that_never_shows_the_token() -> None:
    import dataclasses

    options = LichessOptions(perf="blitz", base_url="http://127.0.0.1:9", token="lip_secret")
    assert "lip_secret" not in repr(options) and "lip_secret" not in str(options)
    assert repr(options).startswith("LichessOptions(perf='blitz', since=None, full=False, "
                                    "base_url='http://127.0.0.1:9', retry_wait_429=60.0, ")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.token = "lip_other"  # type: ignore[misc]  # the test: it is frozen
    assert (options.retry_wait, options.timeout, options.max_retries) == (2.0, (5.0, 30.0), 5)
