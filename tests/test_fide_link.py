"""The real FIDE rating: decoding Lichess's FIDE answers, storing them, linking a player."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text

from tests.conftest import INDEXINATOR_LATER, LICHESS
from tests.lichess_server import LichessServer, ndjson_lines
from tracker import api
from tracker.core.config import USER_AGENT
from tracker.core.errors import ArgumentError
from tracker.importing import import_file
from tracker.importing.real_fide import ms_month
from tracker.sources.fide import (
    FideError,
    FideIdError,
    FidePlayerData,
    ListEntry,
    UnknownFideIdError,
    decode_entry,
    decode_list,
    parse_fide_id,
    parse_profile,
    parse_rating_lists,
)
from tracker.sources.fide_api import fetch_fide_player
from tracker.sources.lichess import make_session
from tracker.store.db import Store, alembic_config
from tracker.store.fide import (
    linked_fide_id,
    load_fide_link,
    months_in_force,
    rating_list,
    save_fide_player,
)

EXAMPLES = LICHESS / "api-examples"
PROFILE_JSON = json.loads((EXAMPLES / "api-fide-player_35009192.json").read_text())
RATINGS_JSON = json.loads((EXAMPLES / "api-fide-player_35009192_ratings.json").read_text())
ARJUN = 35009192


def real_data() -> FidePlayerData:
    errors: list[str] = []
    data = FidePlayerData(parse_profile(PROFILE_JSON, errors),
                          parse_rating_lists(RATINGS_JSON, errors), errors)
    assert errors == []
    return data


# -- decoding --------------------------------------------------------------------------------


def test_entry_2011091584_is_september_2011_rating_1584() -> None:
    assert decode_entry(2011091584) == ListEntry("2011-09", 1584)


@pytest.mark.parametrize("entry,reason", [
    (2011131584, "month 13"),
    (2011001584, "month 0"),
    (2011090000, "rating 0"),
    (201109158, "year 201"),
    ("2011091584", "not an integer"),
    (True, "not an integer"),
    (None, "not an integer"),
    (-2011091584, "negative"),
    (2011091584.0, "not an integer"),
])
def test_malformed_entries_are_refused_with_a_reason(entry: object, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        decode_entry(entry)


def test_a_list_skips_bad_entries_with_reasons_and_keeps_the_rest_in_month_order() -> None:
    errors: list[str] = []
    got = decode_list([2012011571, "x", 2011091584, 2011131584, 2011091584, 2011091600],
                      "standard", errors)
    assert got == [ListEntry("2011-09", 1584), ListEntry("2012-01", 1571)]
    assert len(errors) == 3
    assert errors[0] == "FIDE standard list: entry left out: not an integer YYYYMMRRRR: 'x'"
    assert "month 13" in errors[1]
    assert errors[2] == ("FIDE standard list: 2011-09 given twice (1584, then 1600); kept 1584")


def test_lists_that_are_not_lists_or_absent_are_empty_never_a_crash() -> None:
    errors: list[str] = []
    lists = parse_rating_lists({"standard": "nope", "blitz": [2020011500]}, errors)
    assert lists == {"standard": [], "rapid": [], "blitz": [ListEntry("2020-01", 1500)]}
    assert errors == ["FIDE standard list: not a list of entries (str)"]
    errors.clear()
    assert parse_rating_lists(["x"], errors) == {"standard": [], "rapid": [], "blitz": []}
    assert errors == ["FIDE ratings: not an object (list)"]


def test_the_real_answers_decode_whole() -> None:
    data = real_data()
    p = data.profile
    assert (p.fide_id, p.name, p.federation, p.birth_year, p.title) == (
        ARJUN, "Erigaisi Arjun", "IND", 2003, "GM")
    assert (p.standard, p.rapid, p.blitz) == (2782, 2708, 2738)
    std = data.lists["standard"]
    assert (len(std), len(data.lists["rapid"]), len(data.lists["blitz"])) == (143, 42, 58)
    assert std[0] == ListEntry("2011-09", 1584)
    assert std[-1] == ListEntry("2026-06", 2761)


def test_a_profile_without_ratings_or_title_has_none_there() -> None:
    errors: list[str] = []
    p = parse_profile({"id": 1, "name": "Someone", "federation": "FID", "year": 1990,
                       "standard": "high"}, errors)
    assert (p.title, p.standard, p.rapid, p.blitz) == (None, None, None, None)
    assert errors == ["FIDE profile: standard left out: 'high' is not a positive integer"]
    with pytest.raises(ValueError, match="valid id"):
        parse_profile({"name": "x"})


@pytest.mark.parametrize("text", ["", "abc", "-5", "0", "12345678901", "3.5", "٣٥"])
def test_a_fide_id_is_a_positive_number(text: str) -> None:
    with pytest.raises(FideIdError) as info:
        parse_fide_id(text)
    assert info.value.exit_code == 2


def test_months_in_force_carry_a_rating_until_the_next_entry() -> None:
    entries = [ListEntry("2011-11", 1584), ListEntry("2012-01", 1571)]
    assert months_in_force(entries, "2012-03") == [
        ("2011-11", 1584), ("2011-12", 1584), ("2012-01", 1571), ("2012-02", 1571),
        ("2012-03", 1571),
    ]
    assert months_in_force(entries) == [("2011-11", 1584), ("2011-12", 1584),
                                        ("2012-01", 1571)]
    assert months_in_force([], "2020-01") == []


def test_standard_2761_is_in_force_from_2026_06() -> None:
    force = dict(months_in_force(real_data().lists["standard"], "2026-12"))
    assert force["2026-05"] == 2751  # the 2026-04 list, still in force
    assert [force[f"2026-{m:02d}"] for m in range(6, 13)] == [2761] * 7
    assert force["2011-10"] == 1584  # a missing month keeps the previous list's rating


# -- the store -------------------------------------------------------------------------------


def test_saving_stores_the_profile_and_every_list_and_links_the_player(store: Store) -> None:
    counts = save_fide_player(store, real_data(), player_id="Someone", fetched_at_ms=1)
    assert (counts.new, counts.updated, counts.unchanged) == (243, 0, 0)
    assert linked_fide_id(store, "someone") == ARJUN
    link = load_fide_link(store, "SOMEONE")
    assert link is not None
    assert link.profile == real_data().profile
    assert link.lists == real_data().lists
    assert (link.linked_at_ms, link.fetched_at_ms) == (1, 1)


def test_saving_twice_stores_each_row_once_and_updates_what_changed(store: Store) -> None:
    save_fide_player(store, real_data(), player_id="someone", fetched_at_ms=1)
    again = save_fide_player(store, real_data(), player_id="someone", fetched_at_ms=2)
    assert (again.new, again.updated, again.unchanged) == (0, 0, 243)
    data = real_data()
    data.lists["standard"][-1] = ListEntry("2026-06", 2765)
    data.lists["standard"].append(ListEntry("2026-07", 2770))
    del data.lists["blitz"][:10]  # an answer lacking rows never deletes what is stored
    third = save_fide_player(store, data, player_id="someone", fetched_at_ms=3)
    assert (third.new, third.updated, third.unchanged) == (1, 1, 232)
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM fide_ratings")).scalar() == 244
        assert conn.execute(text("SELECT count(*) FROM fide_players")).scalar() == 1
        assert conn.execute(text("SELECT count(*) FROM fide_links")).scalar() == 1
    assert rating_list(store, ARJUN, "standard")[-2:] == [ListEntry("2026-06", 2765),
                                                          ListEntry("2026-07", 2770)]
    link = load_fide_link(store, "someone")
    assert link is not None and (link.linked_at_ms, link.fetched_at_ms) == (1, 3)


def test_unlinked_player_has_no_link(store: Store) -> None:
    assert linked_fide_id(store, "nobody") is None
    assert load_fide_link(store, "nobody") is None


def test_migrating_from_0002_keeps_data_and_adds_the_fide_tables(db_path: Path) -> None:
    url = f"sqlite:///{db_path}"
    engine = create_engine(url)
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0002")
        conn.execute(text("INSERT INTO players (id, username, added_at_ms) "
                          "VALUES ('someone', 'Someone', 5)"))
    assert "fide_players" not in inspect(engine).get_table_names()
    engine.dispose()
    with Store(url) as s:
        names = set(inspect(s.engine).get_table_names())
        assert {"fide_players", "fide_ratings", "fide_links"} <= names
        with s.engine.connect() as conn:
            # 0003 applied (later migrations, e.g. 0004's player settings, may follow it)
            assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() >= "0003"
            assert conn.execute(text("SELECT username FROM players")).scalar() == "Someone"
        save_fide_player(s, real_data(), player_id="someone")
        assert linked_fide_id(s, "someone") == ARJUN


# -- fetch, link, show, refresh through the local Lichess ------------------------------------


LATER_LINES = ndjson_lines(INDEXINATOR_LATER)  # indexinator's 10 later games: a tracked player


@pytest.fixture
def lichess() -> Iterator[LichessServer]:
    with LichessServer() as server:
        server.add_user("indexinator", LATER_LINES)
        yield server


@pytest.fixture
def tracked(db_path: Path) -> Path:
    """A database file where indexinator is tracked (10 games)."""
    with Store(str(db_path)) as s:
        assert import_file(INDEXINATOR_LATER, store=s, user="indexinator").new == 10
    return db_path


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracker.cli.commands", *args], capture_output=True, text=True,
        env={**os.environ, "NO_COLOR": "1"}, timeout=120,
    )


def fide_rows(db: Path | str) -> dict[str, int]:
    with Store(str(db)) as s, s.engine.connect() as conn:
        return {t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one()
                for t in ("fide_players", "fide_ratings", "fide_links")}


def test_fetch_decodes_the_real_answers_through_our_session(lichess: LichessServer) -> None:
    data = fetch_fide_player(make_session(), lichess.url, ARJUN)
    assert data == real_data()
    assert [r.path for r in lichess.requests] == [f"/api/fide/player/{ARJUN}",
                                                  f"/api/fide/player/{ARJUN}/ratings"]
    assert {r.user_agent for r in lichess.requests} == {USER_AGENT}


def test_link_stores_profile_and_lists_and_relinking_duplicates_nothing(
    lichess: LichessServer, tracked: Path
) -> None:
    first = api.fide_link("Indexinator", str(ARJUN), db=str(tracked), base_url=lichess.url)
    assert (first.counts.new, first.counts.updated, first.counts.unchanged) == (243, 0, 0)
    assert first.warnings == []
    assert first.link.player_id == "indexinator"
    assert first.link.profile == real_data().profile
    assert fide_rows(tracked) == {"fide_players": 1, "fide_ratings": 243, "fide_links": 1}
    again = api.fide_link("indexinator", ARJUN, db=str(tracked), base_url=lichess.url)
    assert (again.counts.new, again.counts.updated, again.counts.unchanged) == (0, 0, 243)
    assert fide_rows(tracked) == {"fide_players": 1, "fide_ratings": 243, "fide_links": 1}
    shown = api.fide_show("INDEXINATOR", db=str(tracked))
    assert shown.lists == real_data().lists
    assert shown.lists["standard"][0] == ListEntry("2011-09", 1584)


def test_fide_ratings_in_force_for_the_report(lichess: LichessServer, tracked: Path) -> None:
    api.fide_link("indexinator", ARJUN, db=str(tracked), base_url=lichess.url)
    std = api.fide_ratings("indexinator", "standard", db=str(tracked), through="2026-09")
    assert std[0] == ("2011-09", 1584)
    assert std[1] == ("2011-10", 1584)  # no October list: September's rating in force
    assert std[-4:] == [("2026-06", 2761), ("2026-07", 2761), ("2026-08", 2761),
                        ("2026-09", 2761)]
    assert std[-5] == ("2026-05", 2751)
    assert all(isinstance(m, str) and isinstance(r, int) for m, r in std)
    months = [m for m, _ in std]
    assert months == sorted(set(months)) and len(months) == 12 * 15 + 1  # 2011-09..2026-09
    blitz = api.fide_ratings("indexinator", "Blitz", db=str(tracked), through="2026-06")
    assert blitz[0] == ("2013-01", 1734) and blitz[-1] == ("2026-06", 2776)
    with pytest.raises(ArgumentError, match="one of standard, rapid, blitz"):
        api.fide_ratings("indexinator", "bullet", db=str(tracked))
    with pytest.raises(ArgumentError, match="YYYY-MM"):
        api.fide_ratings("indexinator", db=str(tracked), through="2026-13")


def test_the_last_rating_stays_in_force_through_the_month_of_the_last_refresh(
    lichess: LichessServer, tracked: Path
) -> None:
    result = api.fide_link("indexinator", ARJUN, db=str(tracked), base_url=lichess.url)
    fetched = ms_month(result.link.fetched_at_ms)
    assert fetched >= "2026-06"
    std = api.fide_ratings("indexinator", db=str(tracked))
    assert std[-1] == (fetched, 2761)
    assert dict(std)["2026-06"] == 2761


def test_fide_ratings_without_a_link_is_empty(tracked: Path) -> None:
    assert api.fide_ratings("indexinator", db=str(tracked)) == []


def test_cli_link_and_show_print_the_profile_and_the_lists(
    lichess: LichessServer, tracked: Path
) -> None:
    proc = cli("--db", str(tracked), "fide", "link", "indexinator", str(ARJUN),
               "--base-url", lichess.url)
    assert proc.returncode == 0, proc.stderr
    # fide link: one clear line (who, federation, the three ratings now, what was stored)
    assert proc.stdout == ("linked indexinator to FIDE 35009192 Erigaisi Arjun (GM, IND, born "
                           "2003): standard 2782, rapid 2708, blitz 2738 now; 243 list months "
                           "stored (243 new, 0 updated, 0 unchanged)\n")
    shown = cli("--db", str(tracked), "fide", "show", "indexinator")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == (
        "indexinator → FIDE 35009192 Erigaisi Arjun (GM, IND, born 2003)")
    assert any(line.split()[:7] == ["standard", "2782", "143", "2011-09", "1584", "2026-06",
                                    "2761"] for line in shown.stdout.splitlines())
    assert any(line.split()[:7] == ["blitz", "2738", "58", "2013-01", "1734", "2026-06",
                                    "2776"] for line in shown.stdout.splitlines())
    as_json = cli("--db", str(tracked), "fide", "show", "indexinator", "--json")
    data = json.loads(as_json.stdout)
    assert (data["player"], data["fide_id"], data["name"], data["title"]) == (
        "indexinator", ARJUN, "Erigaisi Arjun", "GM")
    assert data["ratings"] == {"standard": 2782, "rapid": 2708, "blitz": 2738}
    assert data["lists"]["standard"][0] == {"month": "2011-09", "rating": 1584}
    assert data["lists"]["standard"][-1] == {"month": "2026-06", "rating": 2761}
    assert [len(data["lists"][k]) for k in ("standard", "rapid", "blitz")] == [143, 42, 58]


def test_unknown_fide_id_exits_1_with_one_line_and_stores_nothing(
    lichess: LichessServer, tracked: Path
) -> None:
    before = fide_rows(tracked)
    proc = cli("--db", str(tracked), "fide", "link", "indexinator", "12345",
               "--base-url", lichess.url)
    assert proc.returncode == 1  # unknown, as an unknown player (README's one rule)
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ")
    assert "12345" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""
    assert fide_rows(tracked) == before == {"fide_players": 0, "fide_ratings": 0,
                                            "fide_links": 0}
    with pytest.raises(UnknownFideIdError) as info:
        api.fide_link("indexinator", 12345, db=str(tracked), base_url=lichess.url)
    assert info.value.exit_code == 1


@pytest.mark.parametrize("args,code,words", [
    (("link", "indexinator", "abc"), 2, "'abc' is not a FIDE id"),
    (("link", "nobody_here", str(ARJUN)), 1, "no games of 'nobody_here'"),
    (("show", "indexinator"), 1, "indexinator has no FIDE id linked"),
])
def test_bad_input_is_one_line(lichess: LichessServer, tracked: Path,
                               args: tuple[str, ...], code: int, words: str) -> None:
    proc = cli("--db", str(tracked), "fide", *args, "--base-url", lichess.url
               ) if args[0] == "link" else cli("--db", str(tracked), "fide", *args)
    assert proc.returncode == code
    assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr
    assert fide_rows(tracked)["fide_ratings"] == 0
    assert not lichess.fide_requests()


def test_import_refreshes_a_linked_fide_id_and_leaves_unlinked_players_alone(
    lichess: LichessServer, tracked: Path
) -> None:
    api.import_user("indexinator", db=str(tracked), base_url=lichess.url)
    assert not lichess.fide_requests()  # not linked: no FIDE request
    api.fide_link("indexinator", ARJUN, db=str(tracked), base_url=lichess.url)
    later = {**RATINGS_JSON, "standard": [*RATINGS_JSON["standard"], 2026072770]}
    lichess.add_fide_player(ARJUN, {**PROFILE_JSON, "standard": 2770}, later)
    lichess.reset_log()
    summary = api.import_user("indexinator", db=str(tracked), base_url=lichess.url)
    assert summary.status == "complete" and summary.warnings == []
    assert len(lichess.fide_requests()) == 2
    link = api.fide_show("indexinator", db=str(tracked))
    assert link.profile.standard == 2770
    assert link.lists["standard"][-1] == ListEntry("2026-07", 2770)
    assert fide_rows(tracked) == {"fide_players": 1, "fide_ratings": 244, "fide_links": 1}


def test_the_refresh_goes_through_the_import_session_with_its_token(tracked: Path) -> None:
    with LichessServer(tokens=["lip_fidelink"]) as server:
        server.add_user("indexinator", LATER_LINES)
        api.fide_link("indexinator", ARJUN, db=str(tracked), base_url=server.url)
        server.reset_log()
        summary = api.import_user("indexinator", db=str(tracked), base_url=server.url,
                                  token="lip_fidelink")
        assert summary.status == "complete" and summary.warnings == []
        fide = server.fide_requests()
        assert [r.path for r in fide] == [f"/api/fide/player/{ARJUN}",
                                          f"/api/fide/player/{ARJUN}/ratings"]
        assert {(r.user_agent, r.authorization) for r in fide} == {
            (USER_AGENT, "Bearer lip_fidelink")}


def test_a_failed_refresh_is_a_warning_not_a_failed_import(
    lichess: LichessServer, tracked: Path
) -> None:
    api.fide_link("indexinator", ARJUN, db=str(tracked), base_url=lichess.url)
    del lichess.fide_players[str(ARJUN)]
    summary = api.import_user("indexinator", db=str(tracked), base_url=lichess.url)
    assert summary.status == "complete"
    assert summary.warnings == [
        f"FIDE rating not refreshed: no FIDE player with id {ARJUN} at {lichess.url}"]
    assert fide_rows(tracked) == {"fide_players": 1, "fide_ratings": 243, "fide_links": 1}


def test_malformed_entries_from_the_server_are_warnings_and_the_rest_is_stored(
    lichess: LichessServer, tracked: Path
) -> None:
    lichess.add_fide_player(7, {"id": 7, "name": "Test Player", "year": 1990},
                            {"standard": [2020011500, 2020131500, "2020021510", 2020031520],
                             "blitz": None})
    result = api.fide_link("indexinator", 7, db=str(tracked), base_url=lichess.url)
    assert result.link.lists == {"standard": [ListEntry("2020-01", 1500),
                                              ListEntry("2020-03", 1520)],
                                 "rapid": [], "blitz": []}
    assert result.warnings == [
        "FIDE standard list: entry left out: month 13 out of range in 2020131500",
        "FIDE standard list: entry left out: not an integer YYYYMMRRRR: '2020021510'",
    ]
    p = result.link.profile
    assert (p.title, p.federation, p.standard) == (None, None, None)


def test_one_429_is_waited_out_a_second_is_one_line(lichess: LichessServer) -> None:
    waits: list[float] = []
    lichess.fail_fide(429, times=1)
    data = fetch_fide_player(make_session(), lichess.url, ARJUN, retry_wait_429=7.0,
                             sleep=waits.append)
    assert waits == [7.0] and data.profile.fide_id == ARJUN
    lichess.fail_fide(429, times=2)
    with pytest.raises(FideError) as info:
        fetch_fide_player(make_session(), lichess.url, ARJUN, sleep=waits.append)
    assert str(info.value) == "Lichess answered HTTP 429 for the profile of FIDE player 35009192"
    lichess.fail_fide(500, times=1)
    with pytest.raises(FideError, match="HTTP 500"):
        fetch_fide_player(make_session(), lichess.url, ARJUN, sleep=waits.append)


def test_an_unreachable_server_is_one_line_and_stores_nothing(tracked: Path) -> None:
    with LichessServer() as server:
        url = server.url  # stopped on exit: nothing listens there any more
    with pytest.raises(FideError) as info:
        api.fide_link("indexinator", ARJUN, db=str(tracked), base_url=url,
                      timeout=(1.0, 1.0))
    assert str(info.value) == f"cannot reach {url} (connection error)"
    assert fide_rows(tracked)["fide_players"] == 0


def test_linking_another_id_replaces_the_link(lichess: LichessServer, tracked: Path) -> None:
    api.fide_link("indexinator", ARJUN, db=str(tracked), base_url=lichess.url)
    lichess.add_fide_player(7, {"id": 7, "name": "Test Player"}, {"standard": [2020011500]})
    api.fide_link("indexinator", 7, db=str(tracked), base_url=lichess.url)
    assert api.fide_show("indexinator", db=str(tracked)).profile.fide_id == 7
    assert fide_rows(tracked)["fide_links"] == 1


def test_postgres_stores_the_same_link(lichess: LichessServer, pg_url: str,
                                       tracked: Path) -> None:
    pg = Store(pg_url)
    try:
        assert import_file(INDEXINATOR_LATER, store=pg, user="indexinator").new == 10
        first = api.fide_link("indexinator", ARJUN, db=pg, base_url=lichess.url)
        again = api.fide_link("indexinator", ARJUN, db=pg, base_url=lichess.url)
        assert (first.counts.new, again.counts.new, again.counts.unchanged) == (243, 0, 243)
        assert fide_rows(pg_url) == {"fide_players": 1, "fide_ratings": 243, "fide_links": 1}
        api.fide_link("indexinator", ARJUN, db=str(tracked), base_url=lichess.url)
        pg_link = api.fide_show("indexinator", db=pg)
        lite_link = api.fide_show("indexinator", db=str(tracked))
        assert (pg_link.profile, pg_link.lists) == (lite_link.profile, lite_link.lists)
        assert api.fide_ratings("indexinator", db=pg, through="2026-08") == api.fide_ratings(
            "indexinator", db=str(tracked), through="2026-08")
    finally:
        with pg.engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        pg.close()
