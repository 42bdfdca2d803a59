"""The group table (``tracker group show``, :func:`tracker.api.group_table`) on real exports:
indexinator's NDJSON history, cmrade's PGN download and sebastian44's three games of the
Lichess open database, one member never imported, and a real FIDE profile linked through the
local Lichess-compatible server."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.conftest import CMRADE, LICHESS
from tests.lichess_server import LichessServer
from tracker import api
from tracker.core.errors import ReadOnlyError
from tracker.report import replay as report

OPEN_DB = LICHESS / "lichess_db_standard_rated_2013-01-first50.pgn"
FIDE_RATINGS = LICHESS / "api-examples" / "api-fide-player_35009192_ratings.json"
NOW = date(2025, 10, 31)  # the end of indexinator's history: the table "as of" that day
NOW_MS = int(datetime(2025, 10, 31, 23, 59, 59, tzinfo=UTC).timestamp() * 1000)


@pytest.fixture
def club_db(indexinator_db: Path, tmp_path: Path) -> Path:
    """indexinator, cmrade and sebastian44 imported; the group ``club`` holds them and
    ``nobodyhere`` (no games)."""
    path = tmp_path / "club.db"
    with sqlite3.connect(indexinator_db) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    assert api.import_file(CMRADE, db=path, user="cmrade").new == 474
    assert api.import_file(OPEN_DB, db=path, user="sebastian44").new == 3
    api.group_create("club", db=path)
    added = api.group_add("club", ["indexinator", "cmrade", "sebastian44", "nobodyhere"],
                          db=path)
    assert len(added.added) == 4
    return path


def _recent_blitz_games() -> int:
    """indexinator's rated blitz games that ended in the 30 days up to NOW, counted from the
    export itself."""
    start = NOW_MS - 30 * 86_400_000
    n = 0
    with (LICHESS / "indexinator-2023-04_2025-10.ndjson").open(encoding="utf-8") as f:
        for line in f:
            g = json.loads(line)
            if g.get("perf") == "blitz" and g.get("rated") and start < g["lastMoveAt"] <= NOW_MS:
                n += 1
    return n


def _snapshots(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM cache_entries WHERE kind = 'group'"
                                ).fetchone()[0])


def test_the_table_holds_each_members_real_figures(club_db: Path) -> None:
    table = api.group_table("club", "blitz", db=club_db, now=NOW)
    assert (table.group, table.perf, table.models) == ("club", "blitz",
                                                        ("lebowitz", "mathtuition"))
    rows = {r.user_id: r for r in table.rows}
    assert list(rows) == ["cmrade", "indexinator", "nobodyhere", "sebastian44"]
    ix = rows["indexinator"]
    # The README's figures: median 1499 of lebowitz 1453 and mathtuition 1545; Lichess 1408.
    assert (ix.fide, ix.fide_low, ix.fide_high, ix.lichess) == (1499, 1453, 1545, 1408)
    assert ix.recent_games == _recent_blitz_games() == 14
    # The change over three months: the median now minus the median in force after 2025-07,
    # as the replay on all models gives them.
    replay = api.replay("indexinator", "blitz", db=club_db, scale="all")
    by_month = {p.period: p.band.median for p in replay.periods if p.band is not None}
    assert ix.change == by_month["2025-10"] - by_month["2025-07"] == 1499 - 1651
    assert (ix.games, ix.counted) == (2891, 2861)
    assert ix.level is None and ix.note is None
    cm = rows["cmrade"]  # last game in 2020: rated, nothing recent, no change since
    assert (cm.fide, cm.fide_low, cm.fide_high, cm.lichess) == (1663, 1621, 1705, 1543)
    assert (cm.recent_games, cm.change) == (0, 0)
    # ... which is no games, not a stable form: the table says "no games" (issue 30, item 4)
    assert cm.games_3m == 0 < ix.games_3m
    # Players without figures say why.
    assert rows["sebastian44"].fide is None
    assert rows["sebastian44"].note == "sebastian44 has no blitz games"
    assert rows["nobodyhere"].note == ("no games imported yet (tracker sync --group imports "
                                       "them)")
    # Sorted by the hypothetical rating, rows without one last in the group's order.
    assert [r.user_id for r in api.sort_rows(table.rows, "fide")] == [
        "cmrade", "indexinator", "nobodyhere", "sebastian44"]
    assert [r.user_id for r in api.sort_rows(table.rows, "change", descending=False)][:2] == [
        "indexinator", "cmrade"]


def test_a_player_with_too_few_games_is_unrated_and_says_why(club_db: Path) -> None:
    rows = {r.user_id: r for r in api.group_table("club", "rapid", db=club_db,
                                                  now=NOW).rows}
    s44 = rows["sebastian44"]  # three rapid games of 2012-12-31, two of them counted
    assert (s44.games, s44.counted, s44.fide) == (3, 2, None)
    assert s44.note == "unrated: 2 games in pool (5 needed)"


def test_the_real_fide_rating_and_the_gap(club_db: Path) -> None:
    ratings = json.loads(FIDE_RATINGS.read_text())["standard"]
    # The standard list in force in 2025-10: the last entry (YYYYMMRRRR) of a month up to it.
    in_force = [e % 10_000 for e in ratings if e // 10_000 <= 202510][-1]
    with LichessServer() as server:
        api.fide_link("indexinator", 35009192, db=club_db, base_url=server.url)
    ix = next(r for r in api.group_table("club", db=club_db, now=NOW).rows
              if r.user_id == "indexinator")
    assert ix.real_fide == in_force
    assert ix.gap == 1499 - in_force


def test_json_and_csv_shapes(club_db: Path) -> None:
    table = api.group_table("club", "blitz", db=club_db, now=NOW)
    data = json.loads(api.dumps(api.group_table_json(table, sort="fide")), parse_float=Decimal)
    assert list(data) == ["group", "perf", "as_of", "models", "club_model", "fide_list",
                          "players"]
    assert data["club_model"] is None
    assert (data["as_of"], data["fide_list"]) == ("2025-10-31", "standard")
    assert all(tuple(p) == api.GROUP_KEYS for p in data["players"])
    first = data["players"][0]
    assert first == {
        "username": "cmrade", "fide": 1663, "fide_min": 1621, "fide_max": 1705, "club": None,
        "real_fide": None, "gap": None, "lichess": 1543, "games_30d": 0, "change_3m": 0,
        "games_3m": 0, "level": "not analysed", "games": 34, "counted": 21, "fide_id": None,
        "note": None}
    rows = list(csv.reader(io.StringIO(api.group_table_csv(table, sort="fide"))))
    assert tuple(rows[0]) == api.GROUP_KEYS
    assert rows[2][:10] == ["indexinator", "1499", "1453", "1545", "", "", "", "1408", "14",
                            "-152"]
    assert rows[4][0] == "sebastian44" and rows[4][-1] == "sebastian44 has no blitz games"


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "group",
                           "show", "club", *args], capture_output=True, text=True, timeout=120)


def test_the_cli_prints_the_table_json_and_csv(club_db: Path) -> None:
    done = _cli(club_db, "--json", "--sort", "name", "--perf", "blitz")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    assert [p["username"] for p in data["players"]] == [
        "cmrade", "indexinator", "nobodyhere", "sebastian44"]
    done = _cli(club_db, "--csv")
    assert done.stdout.splitlines()[0] == ",".join(api.GROUP_KEYS)
    done = _cli(club_db)
    assert done.returncode == 0 and "not analysed" in done.stdout
    cmrade = next(line for line in done.stdout.splitlines() if "cmrade" in line)
    assert "no games" in cmrade  # last game in 2020: no games in 3 months, not "0"
    assert api.HALF_NOTE in done.stdout  # how a median's half is shown, said once
    assert "sebastian44 has no blitz games" in done.stdout
    bad = _cli(club_db, "--sort", "elo")
    assert bad.returncode == 2
    assert bad.stderr == ("error: unknown sort key 'elo': use one of fide, club, real, gap, "
                          "lichess, games, change, name\n")
    both = _cli(club_db, "--json", "--csv")
    assert both.returncode == 2 and both.stderr == "error: --json and --csv: give one\n"


def test_summaries_are_saved_and_read_back_until_a_write(
        club_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = api.group_table("club", db=club_db, now=NOW)
    # indexinator, cmrade, and sebastian44's "no blitz games" (nobodyhere has no games at all)
    assert _snapshots(club_db) == 3

    def no_replay(*args: object, **kwargs: object) -> None:
        raise AssertionError("replayed although a summary is saved")

    monkeypatch.setattr(report, "build_report", no_replay)
    again = api.group_table("club", db=club_db, now=NOW)
    assert [api.row_json(r) for r in again.rows] == [api.row_json(r) for r in first.rows]
    # Read-only: the table reads the saved rows; a refresh (a write) is refused.
    store = api.open_store(club_db, read_only=True)
    assert api.group_table("club", db=store, now=NOW).rows[1].fide == 1499
    with pytest.raises(ReadOnlyError, match=r"^saving the group table is not allowed"):
        api.group_refresh("club", db=store)
    store.close()
    monkeypatch.undo()
    # A write makes them stale; a refresh computes them again, and the table is the same.
    assert api.import_file(LICHESS / "indexinator-2025-10-later.ndjson", db=club_db).new == 10
    assert api.group_refresh("club", ["blitz"], db=club_db) == 3
    assert api.group_refresh("club", ["blitz"], db=club_db) == 0
    later = {r.user_id: r for r in api.group_table("club", db=club_db, now=NOW).rows}
    # The ten later games are of October 2025: the row moves with them, as the replay does.
    replay = api.replay("indexinator", "blitz", db=club_db, scale="all")
    assert replay.current_band is not None
    ix = later["indexinator"]
    assert (ix.fide, ix.fide_low, ix.fide_high, ix.lichess, ix.games, ix.recent_games) == (
        replay.current_band.median, replay.current_band.min, replay.current_band.max,
        replay.current_lichess, 2901, 24)
    assert ix.fide == Decimal("1549.5")
    assert api.row_json(later["cmrade"]) == api.row_json(first.rows[0])


# --- the dashboard's Group page (AppTest) ----------------------------------------------------

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"


def _group_page(db: Path, monkeypatch: pytest.MonkeyPatch, **query: str) -> Any:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("TRACKER_DB", str(db))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params.update(query)
    at.run()
    at.switch_page("views/group.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_a_members_lone_rated_month_is_a_dot_on_the_group_chart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ganius (rated from 2022-11 only) and radmobile (unrated in 2022-10, rated in 2022-11),
    rapid players of the tests' 2,000-game sample: each line is one rated point, which a line
    alone draws as nothing: their legend entries stood over an empty chart."""
    import json

    sample = Path(__file__).parent / "fixtures" / "analysed" / \
        "lichess-rapid-analysed-first2000.ndjson.zst"
    db = tmp_path / "lone.db"
    for user in ("ganius", "radmobile"):
        api.import_file(sample, db=db, user=user)
    api.group_create("lone", db=db)
    api.group_add("lone", ["ganius", "radmobile"], db=db)
    lines = {r.user_id: [(p, m) for p, m, _, _ in r.line]
             for r in api.group_table("lone", "rapid", db=db).rows}
    assert lines == {"ganius": [("2022-11", 1690)], "radmobile": [("2022-10", None),
                                                                  ("2022-11", 1606)]}
    at = _group_page(db, monkeypatch, group="lone", perf="rapid")
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    traces = {t["name"].lower(): t for t in spec["data"]}  # shown as the player writes it
    assert sorted(traces) == ["ganius", "radmobile"], list(traces)
    assert traces["ganius"]["y"] == [1690] and traces["radmobile"]["y"] == [None, 1606]
    for name, sizes in (("ganius", [7]), ("radmobile", [0, 7])):
        assert "markers" in traces[name]["mode"] and traces[name]["marker"]["size"] == sizes


def test_the_group_page_of_a_banded_perf_without_a_club_model_says_no_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blitz (two models: a band) and no club model: the page printed "Club model: None."
    (the club model's caption had become the else of the band's test)."""
    db = tmp_path / "b.db"
    api.import_file(api.demo_file(api.DEMO_ANALYSED_FILE), db=db, user="indexinator")
    api.group_create("solo", db=db)
    api.group_add("solo", ["indexinator"], db=db)
    table = api.group_table("solo", "blitz", db=db)
    assert table.banded and table.club is None
    at = _group_page(db, monkeypatch, group="solo", perf="blitz")
    captions = [c.value for c in at.caption]
    assert not [c for c in captions if "Club model" in c or "None" in c], captions
    assert "band" in at.dataframe[0].value.columns


def test_the_group_page_shows_the_table_and_overlays_the_picked_players(
        club_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _group_page(club_db, monkeypatch)
    frame = at.dataframe[0].value
    now = {r.user_id: r for r in api.group_table("club", "blitz", db=club_db).rows}
    by_player = frame.set_index("username")
    assert by_player.loc["indexinator", "fide"] == float(now["indexinator"].fide or 0) == 1499
    assert by_player.loc["indexinator", "band"] == "1453–1545"
    assert by_player.loc["cmrade", "lichess"] == 1543
    assert by_player.loc["sebastian44", "note"] == "sebastian44 has no blitz games"
    # A missing figure reads "—", as `tracker group show` prints it, never "None" (issue 30)
    assert at.dataframe[0].proto.placeholder == "—"
    assert pd.isna(by_player.loc["cmrade", "real_fide"])
    # cmrade's last game is of 2020: no change figure, and the note says no games
    assert pd.isna(by_player.loc["cmrade", "change_3m"])
    assert by_player.loc["cmrade", "note"] == "no games in the last 3 months"
    assert set(by_player["level"]) == {"not analysed"}
    assert at.multiselect[0].value == ["cmrade", "indexinator"]
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    lines = {t["name"]: t for t in spec["data"]}
    assert list(lines) == ["cmrade", "indexinator"]
    assert lines["indexinator"]["line"]["shape"] == "hv"
    # Picking one player draws one line; the perf comes from the URL.
    at.multiselect[0].set_value(["indexinator"]).run()
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert [t["name"] for t in spec["data"]] == ["indexinator"]


def test_the_group_page_opens_on_the_perf_picked_before_a_page_switch(
        club_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page switch in the browser clears the URL: the Group page then opens on the perf
    the Overview showed (bullet), not blitz; and its pick goes back to the Overview."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("TRACKER_DB", str(club_db))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params.update({"player": "indexinator", "perf": "bullet"})
    at.run()
    assert at.header[0].value.endswith("bullet")
    at.query_params.clear()  # what the browser's page switch does
    at.switch_page("views/group.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.header[0].value == "club — bullet"
    perf = next(s for s in at.sidebar.selectbox if s.label == "Perf")
    assert perf.value == "bullet"
    perf.set_value("blitz").run()
    assert at.header[0].value == "club — blitz"
    at.query_params.clear()
    at.switch_page("views/overview.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.header[0].value.endswith("blitz")


def test_the_group_page_without_groups_says_how_to_make_one(
        indexinator_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "copy.db"
    with sqlite3.connect(indexinator_db) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    at = _group_page(path, monkeypatch)
    assert at.info[0].value.startswith("No groups yet: create one with `tracker group create")


# --- the group's club model in the table (tracker group calibrate) ---------------------------

def _calibrated_club(tmp_path: Path) -> Path:
    """The 12-player test roster synced into a new database as the group ``club``, checked
    without a club model, then calibrated in blitz."""
    from tests.club_roster import make_roster, serve_roster

    roster = make_roster(12, linked=10)
    db = tmp_path / "roster.db"
    csv_file = tmp_path / "roster.csv"
    csv_file.write_text(roster.csv())
    api.group_create("club", db=db)
    api.group_add("club", from_csv=csv_file, db=db)
    with LichessServer() as server:
        serve_roster(server, roster)
        assert not api.sync("club", db=db, base_url=server.url).failed
    before = api.group_table("club", db=db)
    assert before.club is None and all(r.club is None for r in before.rows)
    calibration = api.group_calibrate("club", "blitz", db=db)
    assert calibration.club is not None
    return db


def test_a_calibrated_club_model_is_a_column_of_the_table(tmp_path: Path) -> None:
    db = _calibrated_club(tmp_path)
    table = api.group_table("club", db=db)
    assert table.club is not None and table.club.startswith("club")
    for r in table.rows:  # each member's rating now on the club model, as the replay gives it
        replay = api.replay(r.user_id, "blitz", db=db, scale="club:club")
        assert r.club == replay.current_rating
    assert sum(r.club is not None for r in table.rows) == 12
    data = api.group_table_json(table, "club")
    assert data["club_model"] == table.club
    assert [p["club"] for p in data["players"]] == sorted(
        (r.club for r in table.rows if r.club is not None), reverse=True)


def test_the_group_page_shows_the_club_model_column(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = _calibrated_club(tmp_path)
    at = _group_page(db, monkeypatch)
    frame = at.dataframe[0].value.set_index("username")
    table = {r.username: r for r in api.group_table("club", db=db).rows}
    assert list(frame["club"]) == [table[name].club for name in frame.index]
    assert any(c.value.startswith("Club model: club") for c in at.caption)


# --- PostgreSQL: the same table -------------------------------------------------------------

def test_the_table_on_postgres_equals_sqlite(club_db: Path) -> None:
    from sqlalchemy import text

    from tests.pg_server import postgres_url
    from tracker.store.db import Store

    with postgres_url() as (url, reason):
        if url is None:
            pytest.skip(reason)
        store = Store(url)
        try:
            assert api.import_file(LICHESS / "indexinator-2023-04_2025-10.ndjson", db=store,
                                   user="indexinator").new == 2907
            assert api.import_file(CMRADE, db=store, user="cmrade").new == 474
            assert api.import_file(OPEN_DB, db=store, user="sebastian44").new == 3
            api.group_create("club", db=store)
            api.group_add("club", ["indexinator", "cmrade", "sebastian44", "nobodyhere"],
                          db=store)
            pg = api.group_table_json(api.group_table("club", db=store, now=NOW))
            again = api.group_table_json(api.group_table("club", db=store, now=NOW))
            read_only = api.open_store(url, read_only=True)
            ro = api.group_table_json(api.group_table("club", db=read_only, now=NOW))
            read_only.close()
        finally:
            with store.engine.begin() as conn:
                conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
            store.close()
    lite = api.group_table_json(api.group_table("club", db=club_db, now=NOW))
    assert pg == again == ro == lite
    assert pg["players"][1]["fide"] == 1499


def test_a_sync_that_wrote_games_leaves_the_table_saved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.club_roster import make_roster, serve_roster

    roster = make_roster(4, linked=2)
    db = tmp_path / "four.db"
    api.group_create("four", db=db)
    api.group_add("four", [p.username for p in roster.players], db=db)
    with LichessServer() as server:
        serve_roster(server, roster)
        assert api.sync("four", db=db, base_url=server.url).new == 4 * 96

        def no_replay(*args: object, **kwargs: object) -> None:
            raise AssertionError("replayed although the sync saved the rows")

        with monkeypatch.context() as m:
            m.setattr(report, "build_report", no_replay)
            rows = api.group_table("four", db=db).rows
        assert all(r.fide is not None for r in rows)
        # A second sync writes nothing and computes nothing.
        with monkeypatch.context() as m:
            m.setattr(report, "build_report", no_replay)
            assert api.sync("four", db=db, base_url=server.url).new == 0


def test_the_level_column_is_the_level_the_last_analysed_games_show(tmp_path: Path) -> None:
    """A member with analysed games (Lichess's own evals, imported) gets the level their last
    20 analysed games show, as ``tracker strength`` gives it; a member without any says
    "not analysed" (``None``)."""
    path = tmp_path / "analysed.db"
    analysed = Path(__file__).parent / "fixtures" / "lichess" / "analysed-reda46-rapid.ndjson"
    assert api.import_file(analysed, db=path, user="reda46").new == 41
    assert api.import_file(CMRADE, db=path, user="cmrade").new == 474
    api.group_create("pair", db=path)
    api.group_add("pair", ["reda46", "cmrade"], db=path)
    rows = {r.user_id: r for r in api.group_table("pair", "rapid", db=path).rows}
    recent = api.strength("reda46", db=path, perf="rapid").recent.level
    assert recent is not None and recent.low < recent.estimate < recent.high
    assert rows["reda46"].level == f"{recent.estimate} ({recent.low}–{recent.high})"
    assert rows["cmrade"].level is None  # no move analysis stored


def test_a_level_from_uncalibrated_local_evals_says_so(tmp_path: Path) -> None:
    """A member whose recent games include one analysed at a budget no engine calibration
    covers (2,000 nodes: it reads 100-150 points high) had a level cell like any other."""
    from tests.test_strength_saved import _engine_evals, _games_without_evals
    from tracker.core.records import Analysis
    from tracker.store.analysis import write_engine_analysis
    from tracker.store.db import Store

    path = tmp_path / "local.db"
    api.import_file(api.demo_file(api.DEMO_ANALYSED_FILE), db=path, user="indexinator")
    api.group_create("one", db=path)
    api.group_add("one", ["indexinator"], db=path)
    lichess_only = api.group_table("one", "blitz", db=path).rows[0].level
    assert lichess_only == "1511 (1197–1773)"  # his 9 Lichess-analysed games
    with Store(str(path)) as store:
        ((pk, _, raw_moves),) = _games_without_evals(store)
        assert write_engine_analysis(store, pk, Analysis(
            _engine_evals(len(raw_moves.split()), 30), "engine", "Stockfish", "15.1", 2_000))
    level = api.group_table("one", "blitz", db=path).rows[0].level
    assert level is not None and level.endswith(", uncalibrated evals")
    recent = api.strength("indexinator", db=path, perf="blitz").recent.level
    assert recent is not None and recent.games == 10
    assert level == f"{recent.estimate} ({recent.low}–{recent.high}), uncalibrated evals"


def test_a_level_where_the_model_is_weak_says_so_in_its_cell(tmp_path: Path) -> None:
    """Issue 33 item 5: three rapid players of the tests' 2,000-game sample. nessi52's 2 games
    read 722, below the training ratings' range (804–2513); han80's 4 read 2448, in the
    model's weak sets band (above 2399); zarubello's 3 read 2265, neither. The cell said
    nothing of it (``tracker strength`` did)."""
    sample = Path(__file__).parent / "fixtures" / "analysed" / \
        "lichess-rapid-analysed-first2000.ndjson.zst"
    path = tmp_path / "strong.db"
    for user in ("han80", "nessi52", "zarubello"):
        api.import_file(sample, db=path, user=user)
    api.group_create("strong", db=path)
    api.group_add("strong", ["han80", "nessi52", "zarubello"], db=path)
    rows = {r.user_id: r.level for r in api.group_table("strong", "rapid", db=path).rows}
    assert rows == {"nessi52": "722 (460–863), outside the model's fitted range",
                    "han80": "2448 (2225–2760), where the model is weak",
                    "zarubello": "2265 (1981–2631)"}
    for user in rows:  # the same level as tracker strength's, whose note says why
        report = api.strength(user, db=path, perf="rapid")
        assert report.recent.level is not None
        assert rows[user].startswith(f"{report.recent.level.estimate} ("
                                     f"{report.recent.level.low}–{report.recent.level.high})")
        assert ("the model is weak here" in (report.recent.level.note or "")) == (
            user != "zarubello")


def test_an_empty_club_cell_says_why_and_the_table_fits_80_columns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """indexinator is rated by the published models (1499) but unrated on the club's line (his
    pool gives 1279): the club cell was "—" with no note. And at 80 columns the table was
    squeezed: the gap and club columns drawn empty, "member…", Lichess "24…"."""
    from types import SimpleNamespace

    from rich.console import Console

    from tests.conftest import INDEXINATOR
    from tracker.cli import group_show

    db = _calibrated_club(tmp_path)
    assert api.import_file(INDEXINATOR, db=db, user="indexinator").new == 2907
    api.group_add("club", ["indexinator"], db=db)
    table = api.group_table("club", db=db)
    rows = {r.username: r for r in table.rows}
    index = rows["indexinator"]
    assert (index.fide, index.club) == (1499, None)
    replay = api.replay("indexinator", "blitz", db=db, scale="club:club")
    assert replay.current_rating is None
    assert index.note == ("club model: unrated: pool of 14 games gives 1279, below 1400: "
                          "not published")
    assert all(r.note is None for r in table.rows if r.club is not None and r.real_fide)
    assert api.group_table("club", db=db).rows == table.rows  # read back saved: the same note

    terminal = Console(width=80, record=True, highlight=False, soft_wrap=True)
    monkeypatch.setattr(group_show, "out", terminal)
    ctx = SimpleNamespace(find_root=lambda: SimpleNamespace(params={"db": str(db)}))
    group_show.group_show_cmd(ctx, "club", perf="blitz", sort="fide", reverse=False,  # type: ignore[arg-type]  # a stand-in for typer's context
                              as_json=False, as_csv=False)
    lines = terminal.export_text().splitlines()
    table_lines = lines[1:lines.index(next(x for x in lines if x.startswith("FIDE-style:")))]
    assert "…" not in "\n".join(table_lines)
    assert max(len(line.rstrip()) for line in table_lines) <= 80
    assert table_lines[0].split() == ["player", "FIDE-style", "club", "real", "FIDE", "gap",
                                      "Lichess", "30", "days", "3", "months"]
    for r in table.rows:  # every figure whole, in its column
        line = next(x for x in table_lines if x.split()[:1] == [r.username]).split()
        assert line[1:6] == [api.rating_text(x, "—") for x in (r.fide, r.club, r.real_fide)
                             ] + [api.rating_text(r.gap, "—", signed=True), str(r.lichess)]
    assert ("indexinator: club model: unrated: pool of 14 games gives 1279, below 1400: not "
            "published") in lines
    assert lines[-1] == ("(the band and the level shown: widen the terminal, or use --json "
                         "/ --csv)")


def test_a_group_id_that_is_not_the_linked_one_reads_no_real_rating(tmp_path: Path) -> None:
    """member01's group id changed to member02's (90000002) while 90000001 stays linked
    (until the next sync): the table showed 90000001's rating and gap under the id 90000002,
    and the calibration fitted the club's line on it."""
    db = _calibrated_club(tmp_path)
    before = {r.user_id: r for r in api.group_table("club", db=db).rows}["member01"]
    assert before.real_fide is not None and before.fide_id == 90000001
    assert api.group_add("club", fide={"member01": 90000002}, db=db).bad == []
    row = {r.user_id: r for r in api.group_table("club", db=db).rows}["member01"]
    assert (row.fide_id, row.real_fide, row.gap) == (90000002, None, None)
    assert row.note == "FIDE 90000002: not the linked id (90000001): tracker sync links it"
    assert row.fide == before.fide  # the FIDE-style figures are the games': unchanged
    calibration = api.group_calibrate("club", "blitz", db=db, save=False)
    assert calibration.used == 9
    assert ("member01: FIDE id 90000002 given, 90000001 linked: tracker sync links the "
            "group's") in calibration.left_out
    assert all(m.user != "member01" for m in calibration.data)


def test_one_model_is_no_median_and_no_band(club_db: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Bullet has one model (lebowitz): the table said "the median and band of lebowitz"
    and showed a band "1489–1489" of one value, on the terminal and the Group page."""
    table = api.group_table("club", "bullet", db=club_db)
    assert table.models == ("lebowitz",) and not table.banded
    assert table.scale_words == "lebowitz, the one model covering bullet"
    done = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "--db", str(club_db),
                           "group", "show", "club", "--perf", "bullet"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith("(FIDE-style: lebowitz, the one model covering bullet)")
    header = next(line for line in lines if "FIDE-style" in line and "player" in line)
    assert "band" not in header and "real FIDE" in header
    indexinator = next(r for r in table.rows if r.user_id == "indexinator")
    assert indexinator.fide is not None and indexinator.fide_low == indexinator.fide_high
    at = _group_page(club_db, monkeypatch, perf="bullet")
    assert "band" not in at.dataframe[0].value.columns
    assert "lebowitz, the one model covering bullet" in at.caption[0].value
    assert "median" not in at.caption[0].value
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["yaxis"]["title"]["text"] == "FIDE-style rating"
    assert all("band" not in h for t in spec["data"] for h in t["hovertext"])
    assert at.caption[-1].value == ("Each line is a member's FIDE-style rating in force each "
                                    "month: lebowitz, the one model covering bullet. A gap: "
                                    "unrated then.")
    blitz = api.group_table("club", "blitz", db=club_db)
    assert blitz.banded and blitz.scale_words == "the median and band of lebowitz, mathtuition"
