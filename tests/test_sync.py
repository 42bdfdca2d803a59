"""``tracker sync``: a club roster against the local Lichess (real HTTP, real berserk):
everything imported and linked, a second run fetches nothing, a failing player does not stop
the others, 429s are waited out, two syncs at once and a killed sync lose and duplicate
nothing (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from tests.club_roster import Roster, fide_answers, make_roster, serve_roster
from tests.lichess_server import LichessServer
from tracker import api
from tracker.store import queries
from tracker.store.db import Store
from tracker.store.models import FidePlayerRow, Game, GameSide


@pytest.fixture(scope="module")
def roster() -> Roster:
    return make_roster(12, linked=10)


@pytest.fixture
def server(roster: Roster):
    with LichessServer() as s:
        serve_roster(s, roster)
        yield s


def _club(db: object, roster: Roster, tmp_path: Path) -> api.GroupAddResult:
    csv = tmp_path / "roster.csv"
    csv.write_text(roster.csv(malformed=11), encoding="utf-8")
    api.group_create("club", db=db)  # type: ignore[arg-type]
    return api.group_add("club", from_csv=csv, db=db)  # type: ignore[arg-type]


def _game_ids(store: Store) -> list[str]:
    with store.session() as s:
        return sorted(s.scalars(select(Game.id)))


def _served_ids(roster: Roster, players: int = 11) -> list[str]:
    return sorted(g["id"] for p in roster.players[:players] for g in p.games)


def _no_duplicate_sides(store: Store) -> None:
    with store.session() as s:
        per_game = s.execute(select(GameSide.game_pk, func.count()).group_by(GameSide.game_pk)
                             ).all()
    assert {n for _, n in per_game} == {2}


def test_roster_sync_then_nothing_to_fetch(server: LichessServer, roster: Roster,
                                          tmp_path: Path) -> None:
    db = str(tmp_path / "club.db")
    added = _club(db, roster, tmp_path)
    assert len(added.added) == 11
    assert added.bad == ["row 13: 'member12!' is not a Lichess username (2-30 letters, "
                         "digits, _ or -, starting with a letter or digit)"]
    seen: list[tuple[int, int, str]] = []
    first = api.sync("club", db=db, base_url=server.url,
                     on_player=lambda i, n, u: seen.append((i, n, u)))
    assert seen[0] == (1, 11, "member01") and len(seen) == 11
    assert [p.status for p in first.players] == ["synced"] * 11
    assert [p.new for p in first.players] == [96] * 11 and first.new == 1056
    assert [p.fide for p in first.players] == [f"linked {90_000_001 + i}" for i in range(10)
                                               ] + [""]
    with Store(db) as store:
        assert _game_ids(store) == _served_ids(roster)
        p3 = roster.players[2]
        assert api.fide_ratings("member03", db=store, through="2025-02")[-1] == (
            "2025-02", p3.fide_list["2025-02"])
    # one Lichess request at a time: no download ever overlapped another (the server would
    # have answered 429 "Please only run 1 request(s) at a time")
    assert all(r.status == 200 for r in server.requests)
    server.reset_log()
    second = api.sync("club", db=db, base_url=server.url)
    assert [(p.status, p.new, p.updated) for p in second.players] == [("synced", 0, 0)] * 11
    assert server.served_games == 0
    # the FIDE ratings were fetched by the first run today: not asked for again
    assert [p.fide for p in second.players] == ["fetched today"] * 10 + [""]
    assert server.fide_requests() == []
    # per already-synced player: the account, the games since the cursor, the
    # correspondence pass — nothing else
    assert len(server.requests) == 3 * 11


def _age_fide_fetches(store: Store, days: int) -> None:
    """Move every stored FIDE fetch ``days`` days back, as if synced on an earlier day."""
    with store.session() as s:
        for row in s.scalars(select(FidePlayerRow)):
            row.fetched_at_ms -= days * 86_400_000


def test_sync_refreshes_fide_once_a_day(server: LichessServer, roster: Roster,
                                        tmp_path: Path) -> None:
    db = str(tmp_path / "club.db")
    _club(db, roster, tmp_path)
    api.sync("club", db=db, base_url=server.url)
    # FIDE's last list changes after the first sync (as a new month's list would)
    p1 = roster.players[0]
    month = max(p1.fide_list)
    changed = p1.fide_list[month] + 17
    profile, lists = fide_answers(p1)
    lists["standard"][-1] = int(month[:4] + month[5:]) * 10_000 + changed
    server.add_fide_player(p1.fide_id or 0, profile, lists)
    server.reset_log()
    same_day = api.sync("club", db=db, base_url=server.url)
    assert server.fide_requests() == []
    assert api.fide_ratings("member01", db=db, through=month)[-1] == (
        month, p1.fide_list[month])
    with Store(db) as store:
        _age_fide_fetches(store, 1)
    server.reset_log()
    next_day = api.sync("club", db=db, base_url=server.url)
    assert [p.fide for p in next_day.players] == ["refreshed"] * 10 + [""]
    # the profile and the lists of each of the 10 linked members, once
    assert len(server.fide_requests()) == 2 * 10
    assert api.fide_ratings("member01", db=db, through=month)[-1] == (month, changed)
    assert [p.fide for p in same_day.players] == ["fetched today"] * 10 + [""]
    server.reset_log()
    api.sync("club", db=db, base_url=server.url)  # the same day again: nothing asked
    assert server.fide_requests() == []


def test_import_of_one_player_still_refreshes_fide(server: LichessServer, tmp_path: Path,
                                                   roster: Roster) -> None:
    db = str(tmp_path / "club.db")
    _club(db, roster, tmp_path)
    api.sync("club", db=db, base_url=server.url)
    server.reset_log()
    api.import_user("member01", db=db, base_url=server.url)
    assert len(server.fide_requests()) == 2  # the profile and its lists, as before


def test_sync_with_a_token_fetches_the_rating_history_only_for_new_games(
        server: LichessServer, roster: Roster, tmp_path: Path) -> None:
    def history(points: int) -> list[object]:
        return [{"name": "Blitz", "points": [[2024, m, 1, 1500 + m] for m in range(points)]}]

    for p in roster.players[:11]:
        server.add_user(p.username, [json.loads(json.dumps(g)) for g in p.games],
                        rating_history=history(3))
    db = str(tmp_path / "club.db")
    _club(db, roster, tmp_path)

    def history_requests() -> list[str]:
        return [r.path for r in server.requests if r.path.endswith("/rating-history")]

    api.sync("club", db=db, base_url=server.url, token="lip_test")
    assert len(history_requests()) == 11  # none stored yet: every member's
    server.reset_log()
    api.sync("club", db=db, base_url=server.url, token="lip_test")
    assert history_requests() == []  # no new game: the stored history is Lichess's
    # member02 plays a new game, and its rating history moves
    p2 = roster.players[1]
    last = max(p2.games, key=lambda g: g["createdAt"])
    game = json.loads(json.dumps(last)) | {"id": "zNewGam1", "createdAt": last["createdAt"]
                                           + 3_600_000, "lastMoveAt": last["lastMoveAt"]
                                           + 3_600_000}
    server.add_games(p2.username, [game])
    server.accounts[p2.username.lower()].rating_history = history(5)
    server.reset_log()
    third = api.sync("club", db=db, base_url=server.url, token="lip_test")
    assert [(p.username, p.new) for p in third.players if p.new] == [("member02", 1)]
    assert history_requests() == ["/api/user/member02/rating-history"]
    with Store(db) as store:
        assert [r for _, r in queries.rating_history(store, "member02", "blitz")] == [
            1500, 1501, 1502, 1503, 1504]


def test_a_failing_player_is_reported_and_the_others_go_on(server: LichessServer,
                                                           roster: Roster,
                                                           tmp_path: Path) -> None:
    db = str(tmp_path / "club.db")
    api.group_create("club", db=db)
    server.add_user("gone_away", disabled=True)
    api.group_add("club", ["member01", "gone_away", "no_such_user", "member02"],
                  fide={"member02": 99_999_999}, db=db)
    result = api.sync("club", db=db, base_url=server.url)
    by = {p.username: p for p in result.players}
    assert [p.username for p in result.failed] == ["gone_away", "no_such_user"]
    assert by["gone_away"].message == "the Lichess account 'gone_away' is closed"
    assert by["no_such_user"].message == (f"no Lichess account 'no_such_user' at {server.url} "
                                          "(unknown or closed)")
    assert (by["member01"].status, by["member01"].new) == ("synced", 96)
    # an unknown FIDE id is a warning: the games are synced
    assert (by["member02"].status, by["member02"].new, by["member02"].fide) == ("synced", 96,
                                                                                "")
    assert "FIDE id 99999999 not linked" in by["member02"].message


def test_429s_are_waited_out(server: LichessServer, roster: Roster, tmp_path: Path) -> None:
    db = str(tmp_path / "club.db")
    api.group_create("club", db=db)
    api.group_add("club", ["member01", "member02"], db=db)
    server.fail_429(times=2)  # the first download: 429 twice in a row, the import stops
    result = api.sync("club", db=db, base_url=server.url, retry_wait_429=0.01)
    assert [(p.status, p.new) for p in result.players] == [("synced", 96), ("synced", 96)]
    assert [r.status for r in server.game_requests()][:3] == [429, 429, 200]


def test_sync_without_a_group_takes_tracked_players_and_every_member(
        server: LichessServer, tmp_path: Path) -> None:
    db = str(tmp_path / "club.db")
    api.import_user("member05", db=db, base_url=server.url)
    api.group_create("club", db=db)
    api.group_add("club", ["member01"], db=db)
    result = api.sync(db=db, base_url=server.url)
    assert result.group is None
    # a member is tracked from the moment it is added: one list, by name
    assert [(p.username, p.new) for p in result.players] == [("member01", 96), ("member05", 0)]


def _two_at_once(db: object, url: str) -> list[api.SyncResult]:
    results: list[api.SyncResult] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(api.sync("club", db=db, base_url=url,  # type: ignore[arg-type]
                                    retry_wait_429=0.05))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    return results


def _each_synced_once_at_least(results: list[api.SyncResult]) -> None:
    """Every member synced by one of the two syncs at least. One of them may be reported
    failed: the server refuses a second download at once (HTTP 429, as Lichess does), and the
    tests wait 0.05 s, not Lichess's minute, so both tries of a player can meet the other
    sync's download; any failure must be that 429, and the other sync has the player."""
    assert len(results) == 2
    synced = [{p.username for p in r.players if p.status == "synced"} for r in results]
    assert synced[0] | synced[1] == {f"member{i:02d}" for i in range(1, 12)}
    assert [p.message for r in results for p in r.players if p.status != "synced"
            and "429" not in p.message] == []


def test_two_syncs_at_once_never_store_a_game_twice(roster: Roster, tmp_path: Path) -> None:
    with LichessServer(throttle=3000) as server:
        serve_roster(server, roster)
        db = str(tmp_path / "club.db")
        _club(db, roster, tmp_path)
        results = _two_at_once(db, server.url)
    _each_synced_once_at_least(results)
    # each game was new to exactly one of the two syncs
    assert sum(r.new for r in results) == 1056
    with Store(db) as store:
        assert _game_ids(store) == _served_ids(roster)
        _no_duplicate_sides(store)


def _tracker(db: str, url: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "LICHESS_BASE_URL": url}
    return subprocess.Popen([sys.executable, "-m", "tracker.cli.commands", "--db", db, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_a_killed_sync_rerun_loses_and_duplicates_nothing(roster: Roster,
                                                          tmp_path: Path) -> None:
    db = str(tmp_path / "club.db")
    _club(db, roster, tmp_path)
    with LichessServer(throttle=150) as server:  # ~7 s for the club: killed on the way
        serve_roster(server, roster)
        proc = _tracker(db, server.url, "sync", "--group", "club")
        deadline = time.monotonic() + 60
        stored = 0
        while time.monotonic() < deadline:
            time.sleep(0.2)
            with Store(db) as store:
                stored = queries.count_games(store)
            if stored >= 300:
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert 300 <= stored < 1056
        server.throttle = None
        again = _tracker(db, server.url, "sync", "--group", "club")
        out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert err == ""  # not a terminal: no progress
    assert "11 synced, 0 failed" in out
    with Store(db) as store:
        assert _game_ids(store) == _served_ids(roster)
        _no_duplicate_sides(store)


def test_cli_sync_exit_code_1_when_a_player_fails(server: LichessServer,
                                                  tmp_path: Path) -> None:
    db = str(tmp_path / "club.db")
    api.group_create("club", db=db)
    api.group_add("club", ["member01", "no_such_user"], db=db)
    proc = _tracker(db, server.url, "sync", "--group", "club")
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "1 synced, 1 failed, 96 new games" in out
    assert "no_such_user" in out and "failed" in out
    as_json = _tracker(db, server.url, "sync", "--group", "club", "--json")
    out, err = as_json.communicate(timeout=60)
    assert (as_json.returncode, err) == (1, "")
    rows = json.loads(out)["players"]
    assert [(r["username"], r["status"], r["new"]) for r in rows] == [
        ("member01", "synced", 0), ("no_such_user", "failed", 0)]


def test_two_syncs_at_once_on_postgres(roster: Roster, pg_url: str, tmp_path: Path) -> None:
    store = Store(pg_url)
    try:
        with LichessServer(throttle=3000) as server:
            serve_roster(server, roster)
            _club(store, roster, tmp_path)
            results = _two_at_once(pg_url, server.url)
        _each_synced_once_at_least(results)
        assert sum(r.new for r in results) == 1056
        assert _game_ids(store) == _served_ids(roster)
        _no_duplicate_sides(store)
    finally:
        with store.engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        store.close()
