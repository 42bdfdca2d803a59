"""The dashboard's pages, run with Streamlit's AppTest on databases holding the real sample.

Every number on a page is checked against what the CLI prints (``tracker replay --json``), so
the dashboard shows the same replay, not one of its own.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import shutil
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy.exc import OperationalError
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from dashboard import charts
from tests.conftest import CMRADE, INDEXINATOR, INDEXINATOR_LATER, LICHESS
from tests.lichess_server import LichessServer, ndjson_lines
from tracker import api
from tracker.core.errors import DashboardError, TrackerError
from tracker.report.presentation import PERIOD_KEYS, periods_csv
from tracker.store.db import Store

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
TIMEOUT = 60


def cli_json(db: Path, *args: str) -> dict[str, Any]:
    """``tracker --db DB ARGS --json``, run as the user runs it (decimals exact)."""
    out = subprocess.run(
        [sys.executable, "-m", "tracker.cli.commands", "--db", str(db), *args, "--json"],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout, parse_float=Decimal)


def open_app(db: Path | str, monkeypatch: pytest.MonkeyPatch, page: str | None = None,
             query: dict[str, str] | None = None) -> AppTest:
    """The app on ``db``, run once (on ``page`` if given; with the URL's ``query``)."""
    monkeypatch.setenv("TRACKER_DB", str(db))
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update(query or {})
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


#: The sample on the Lichess scale (the raw numbers): the URL that picks it.
LICHESS_SCALE = {"player": "indexinator", "perf": "blitz", "scale": "lichess"}


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def texts(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success")
             for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def chart_traces(at: AppTest) -> dict[str, dict[str, Any]]:
    charts_ = at.get("plotly_chart")
    assert len(charts_) == 1
    spec = json.loads(charts_[0].proto.spec)
    return {t["name"]: t for t in spec["data"]}


def values(v: Any) -> list[Any]:
    """A plotly array as plain values (plotly sends numpy arrays base64-encoded)."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).tolist()
    return list(v)


@pytest.fixture
def sample_db(tmp_path: Path) -> Path:
    """A writable database holding the bundled indexinator history."""
    path = tmp_path / "sample.db"
    summary = api.import_file(INDEXINATOR, db=path, user="indexinator")
    assert summary.new == 2907
    return path


@pytest.fixture
def shared_db(indexinator_db: Path, tmp_path: Path) -> Path:
    """A copy of the session's sample database (the original must not be written)."""
    path = tmp_path / "copy.db"
    with sqlite3.connect(indexinator_db) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    return path


# --- Overview -------------------------------------------------------------------------------

def test_overview_shows_both_series_and_the_unrated_state_of_the_cli(
        shared_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(shared_db, monkeypatch, query=LICHESS_SCALE)
    assert_clean(at)
    expected = cli_json(shared_db, "replay", "indexinator", "--perf", "blitz", "--scale",
                        "lichess")
    last = expected["periods"][-1]["rating_after"]
    assert last is None  # fell to 1361 in 2025-10: unrated from the next period
    shown = metrics(at)
    assert shown["FIDE-style rating now"] == "unrated"
    assert "fell to 1361, below 1400" in texts(at)
    assert shown["Lichess rating now"] == str(expected["periods"][-1]["lichess_rating"]) == "1408"
    assert shown["Games counted"] == f"{sum(p['games'] for p in expected['periods']):,}"
    assert shown["K next period"] == "—"
    assert "A Lichess 1500 is not a FIDE 1500" in texts(at)

    traces = chart_traces(at)
    lichess = traces[charts.LICHESS_NAME]
    fide = traces[charts.FIDE_NAME]
    assert len(values(lichess["y"])) == 2891 and values(lichess["y"])[-1] == 1408
    published = {p["rating_after"] for p in expected["periods"]} - {None}
    assert published <= set(values(fide["y"])) - {None}
    assert None in values(fide["y"])  # the gap after the fall
    perf = traces[charts.PERFORMANCE_NAME]
    assert values(perf["y"]) == [p["performance"] for p in expected["periods"]]
    assert sum(values(traces[charts.COUNTED_NAME]["y"])) == 2861
    assert charts.UNRATED_NAME in traces


def test_overview_rated_case_follows_saved_settings(
        shared_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    api.settings("indexinator", db=shared_db, start_rating=1800)
    at = open_app(shared_db, monkeypatch)
    at.selectbox(key="perf").set_value("bullet").run()
    assert_clean(at)
    expected = cli_json(shared_db, "replay", "indexinator", "--perf", "bullet")
    last = expected["periods"][-1]["rating_after"]
    assert isinstance(last, int)
    shown = metrics(at)
    assert shown["FIDE-style rating now"] == str(last)
    assert shown["K next period"] == "40"  # 16 games counted, fewer than 30
    assert "start from 1800" in texts(at)
    # bullet: lebowitz is the one model covering it, so "all" is that model, without a band
    label = "FIDE scale (lebowitz, the one model covering bullet)"
    assert expected["scale_label"] == label and "answer" not in expected
    fide = values(chart_traces(at)[charts.fide_name("FIDE scale (lebowitz)")]["y"])
    assert fide[0] == 1800 and fide[-1] == last


def test_overview_refreshes_when_an_import_lands(
        sample_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(sample_db, monkeypatch)
    before = metrics(at)["Games counted"]
    api.import_file(INDEXINATOR_LATER, db=sample_db, user="indexinator")
    at.run()
    assert_clean(at)
    expected = cli_json(sample_db, "replay", "indexinator", "--perf", "blitz")
    after = metrics(at)
    assert after["Games counted"] == f"{sum(p['games'] for p in expected['periods']):,}"
    assert after["Games counted"] != before
    rating_after = expected["periods"][-1]["rating_after"]
    # Whole, as FIDE prints it (issue 30, item 1): a median's 1549.5 reads 1550.
    assert after["FIDE-style rating now"] == api.rating_text(
        None if rating_after is None else Decimal(str(rating_after)), "unrated")
    assert "." not in after["FIDE-style rating now"]


def test_empty_database_says_import_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    db = tmp_path / "empty.db"
    Store(str(db)).close()
    for page in (None, "views/periods.py", "views/games.py", "views/settings.py"):
        at = open_app(db, monkeypatch, page)
        assert_clean(at)
        assert "import your games first" in texts(at)


def test_a_busy_database_is_a_message(shared_db: Path, monkeypatch: pytest.MonkeyPatch
                                      ) -> None:
    from tracker.store import queries

    def locked(store: Store) -> tuple[int, int, int]:
        raise OperationalError("SELECT count(*) FROM games", {},
                               sqlite3.OperationalError("database is locked"))

    monkeypatch.setattr(queries, "data_version", locked)
    at = open_app(shared_db, monkeypatch)
    assert not at.exception
    assert any("busy" in w.value for w in at.warning)


# --- Player and perf: the URL, standard perfs only ----------------------------------------

API_EXAMPLES = LICHESS / "api-examples"
LANCE_THREECHECK = API_EXAMPLES / "api-games-user_lance5500_max1_rated-threeCheck_2025-11.ndjson"
LANCE_BULLET = API_EXAMPLES / "api-games-user_lance5500_max1_casual-bullet_2026-07.ndjson"


@pytest.fixture
def players_db(shared_db: Path) -> Path:
    """indexinator (blitz, bullet), cmrade (five standard perfs) and Lance5500 (display name;
    one threeCheck game: variants only)."""
    api.import_file(CMRADE, db=shared_db, user="cmrade")
    api.import_file(LANCE_THREECHECK, db=shared_db, user="lance5500")
    return shared_db


def shown_pick(at: AppTest) -> tuple[str, str, dict[str, Any]]:
    """The pickers' values and the URL's query parameters after the run."""
    return at.selectbox(key="player").value, at.selectbox(key="perf").value, dict(at.query_params)


@pytest.mark.parametrize(("query", "player", "perf"), [
    ({"player": "indexinator", "perf": "blitz"}, "indexinator", "blitz"),  # the README's
    ({"player": "indexinator", "perf": "bullet"}, "indexinator", "bullet"),
    ({"player": "cmrade", "perf": "rapid"}, "cmrade", "rapid"),
    ({"player": "CMRADE", "perf": "Classical"}, "cmrade", "classical"),  # case-insensitive
    ({"player": "cmrade"}, "cmrade", "bullet"),  # cmrade's most played perf
    ({"perf": "bullet"}, "indexinator", "bullet"),
])
def test_url_parameters_are_the_stable_keys(players_db: Path, monkeypatch: pytest.MonkeyPatch,
                                            query: dict[str, str], player: str, perf: str
                                            ) -> None:
    at = open_app(players_db, monkeypatch, query=query)
    assert_clean(at)
    assert not at.warning
    assert shown_pick(at) == (player, perf, {"player": player, "perf": perf})
    assert at.header[0].value == f"{player} — {perf}"
    at.run()  # the URL written by the app keeps the pickers as they are
    assert shown_pick(at) == (player, perf, {"player": player, "perf": perf})


def test_picking_writes_keys_not_labels_to_the_url(players_db: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(players_db, monkeypatch, query={"player": "indexinator", "perf": "blitz"})
    at.selectbox(key="perf").set_value("bullet").run()  # shown as "bullet — 16 games"
    assert_clean(at)
    assert shown_pick(at) == ("indexinator", "bullet", {"player": "indexinator", "perf": "bullet"})
    at.selectbox(key="player").set_value("cmrade").run()  # no bullet… cmrade has: kept
    assert shown_pick(at) == ("cmrade", "bullet", {"player": "cmrade", "perf": "bullet"})
    at.selectbox(key="perf").set_value("rapid").run()
    assert shown_pick(at) == ("cmrade", "rapid", {"player": "cmrade", "perf": "rapid"})
    assert at.header[0].value == "cmrade — rapid"
    at.switch_page("views/periods.py").run()  # the pick follows to the other pages
    assert_clean(at)
    assert shown_pick(at) == ("cmrade", "rapid", {"player": "cmrade", "perf": "rapid"})


def test_a_display_name_in_the_url_selects_the_player(shared_db: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    api.import_file(LANCE_BULLET, db=shared_db, user="lance5500")
    for name in ("lance5500", "Lance5500", "LANCE5500"):
        at = open_app(shared_db, monkeypatch, query={"player": name})
        assert_clean(at)
        assert at.selectbox(key="player").value == "lance5500"
        assert dict(at.query_params) == {"player": "lance5500", "perf": "bullet"}


@pytest.mark.parametrize(("query", "message", "pick"), [
    ({"player": "nobody"}, "No player 'nobody'", ("indexinator", "blitz")),
    ({"player": "cmrade", "perf": "ultraBullet"}, "cmrade has no ultraBullet games",
     ("cmrade", "bullet")),
    ({"player": "cmrade", "perf": "chess960"}, "'chess960' is not a standard perf: FIDE rates "
     "standard chess only.", ("cmrade", "bullet")),
    # the CLI's words (it said "'blits' is not a standard perf: FIDE rates standard chess only")
    ({"player": "cmrade", "perf": "blits"}, "unknown perf 'blits': use one of ultraBullet, "
     "bullet, blitz, rapid, classical, correspondence", ("cmrade", "bullet")),
])
def test_a_url_naming_nothing_here_is_a_warning(players_db: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                query: dict[str, str], message: str,
                                                pick: tuple[str, str]) -> None:
    at = open_app(players_db, monkeypatch, query=query)
    assert_clean(at)
    assert any(message in w.value for w in at.warning), [w.value for w in at.warning]
    player, perf = pick
    assert shown_pick(at) == (player, perf, {"player": player, "perf": perf})


def test_only_standard_perfs_are_offered(shared_db: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    api.import_file(LANCE_THREECHECK, db=shared_db, user="lance5500")
    at = open_app(shared_db, monkeypatch, query={"player": "lance5500"})
    assert not at.exception and not at.error
    assert "FIDE rates standard chess only: this player's games are all variants" in texts(at)
    assert [s.key for s in at.selectbox] == ["player"]  # no perf to pick
    assert dict(at.query_params) == {"player": "lance5500"}

    api.import_file(LANCE_BULLET, db=shared_db, user="lance5500")  # a standard game too
    at.run()
    assert_clean(at)
    assert at.selectbox(key="perf").options == ["bullet — 1 game"]
    assert shown_pick(at) == ("lance5500", "bullet", {"player": "lance5500", "perf": "bullet"})
    assert "all variants" not in texts(at)


# --- Periods --------------------------------------------------------------------------------

def test_periods_table_and_csv_hold_every_json_key(
        shared_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served: dict[str, bytes] = {}
    add = MediaFileManager.add

    def record(self: MediaFileManager, data: bytes | str, mimetype: str, coordinates: str,
               file_name: str | None = None, **kw: Any) -> str:
        if file_name:
            served[file_name] = data  # type: ignore[assignment]
        return add(self, data, mimetype, coordinates, file_name=file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add", record)
    at = open_app(shared_db, monkeypatch, "views/periods.py", query=LICHESS_SCALE)
    assert_clean(at)
    expected = cli_json(shared_db, "replay", "indexinator", "--perf", "blitz", "--scale",
                        "lichess")["periods"]

    table = at.dataframe[0].value
    assert list(table.columns)[: len(PERIOD_KEYS)] == list(PERIOD_KEYS)
    # Newest first (issue 30, item 7): the month a player looks for is the last one.
    assert list(table["period"]) == [p["period"] for p in reversed(expected)]
    assert table["excluded"].iloc[-2] == "provisional opponent: 6"
    assert table["left_out"].iloc[-2] == 6

    rows = list(csv.DictReader(io.StringIO(served["indexinator-blitz-periods.csv"].decode())))
    assert len(rows) == len(expected) == 31
    assert list(rows[0]) == list(PERIOD_KEYS)
    for row, period in zip(rows, expected, strict=True):
        for key in PERIOD_KEYS:
            want = period[key]
            if key == "excluded":
                want = "; ".join(f"{r}: {n}" for r, n in want.items())
            assert row[key] == ("" if want is None else str(want)), (period["period"], key)
    assert rows[1]["change"] == "-123.78" and rows[-1]["rating_after"] == ""
    assert json.loads(served["indexinator-blitz-periods.json"], parse_float=Decimal)[
        "periods"] == expected


def test_periods_csv_helper_matches_the_json(indexinator_db: Path) -> None:
    report = api.replay("indexinator", "blitz", db=indexinator_db, scale="lichess")
    rows = list(csv.reader(io.StringIO(periods_csv(report))))
    assert rows[0] == list(PERIOD_KEYS)
    assert len(rows) == 1 + len(report.periods)
    assert rows[1] == ["2023-04", "24", "", "8.5", "", "", "", "", "1639", "1618", "1622"]


# --- Games ----------------------------------------------------------------------------------

def test_games_of_a_period_with_pd_delta_and_reasons(
        shared_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(shared_db, monkeypatch, "views/games.py", query=LICHESS_SCALE)
    assert_clean(at)
    at.selectbox(key="games_period").set_value("2023-05").run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert len(table) == 226  # 220 counted + 6 against provisional opponents
    left_out = table[~table["counted"]]
    assert set(left_out["reason"]) == {"provisional opponent"}
    assert left_out["expected"].isna().all()
    counted = table[table["counted"]]
    assert (counted["reason"] == "counted").all()
    # ΔR = score − PD for every counted game; K × ΣΔR is the period's change (K 3 in 2023-05).
    score = counted["result"].map({"1": 1.0, "½": 0.5, "0": 0.0})
    assert np.allclose(counted["delta"], score - counted["expected"])
    assert round(3 * counted["delta"].sum(), 2) == -123.78
    assert table["url"].str.startswith("https://lichess.org/").all()
    assert "K **3**" in texts(at)

    at.segmented_control(key="games_filter").set_value("left out").run()
    assert len(at.dataframe[0].value) == 6


def test_a_link_to_a_game_not_here_says_so(
        shared_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A ?game= that names no game of this player and perf was ignored without a word.
    at = open_app(shared_db, monkeypatch, "views/games.py",
                  query={**LICHESS_SCALE, "game": "zzzzzzzz"})
    assert_clean(at)
    assert [w.value for w in at.warning] == [
        "No game zzzzzzzz among indexinator's blitz games: the link names another player's "
        "game, another perf's, or one not imported here."]
    assert at.selectbox(key="games_period").value == "2025-10"  # the newest month, as without


# --- Calculator -----------------------------------------------------------------------------

def calculator(monkeypatch: pytest.MonkeyPatch, db: Path | str) -> AppTest:
    at = open_app(db, monkeypatch, "views/calculator.py")
    assert_clean(at)
    return at


def test_calculator_one_win_against_1700(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    # No database at all: the folder does not exist, the calculator still works.
    at = calculator(monkeypatch, tmp_path / "missing" / "nothing.db")
    at.number_input(key="calc_rating").set_value(1500)
    at.segmented_control(key="calc_k").set_value("20")
    at.number_input(key="calc_opp_0").set_value(1700)
    at.segmented_control(key="calc_res_0").set_value("1")
    at.run()
    assert_clean(at)
    shown = metrics(at)
    assert shown["Rating change"] == "+15.20"
    assert shown["New rating"] == "1515"
    assert shown["K used"] == "20"
    assert "0.24" in [m.value for m in at.markdown]


def test_calculator_700_rule_with_20_games(sample_db: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    at = calculator(monkeypatch, sample_db)
    at.segmented_control(key="calc_k").set_value("40").run()
    for _ in range(19):
        at.button(key="calc_add").click().run()
    assert_clean(at)
    assert len(at.number_input) == 21  # own rating + 20 opponents
    assert metrics(at)["K used"] == "35"
    assert "K 40 × 20 games = 800 > 700" in texts(at)
    first_row = at.session_state["calc_rows"][0]
    at.button(key=f"calc_del_{first_row}").click().run()
    assert metrics(at)["K used"] == "36"  # 700 // 19


def test_calculator_2650_exemption_and_formula(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    at = calculator(monkeypatch, tmp_path / "none.db")
    at.number_input(key="calc_rating").set_value(2700)
    at.segmented_control(key="calc_k").set_value("10")
    at.number_input(key="calc_opp_0").set_value(2200)
    at.run()
    assert metrics(at)["Rating change"] == "+0.40"
    assert "exempt under fide-2025-10" in texts(at)
    at.selectbox(key="calc_rules").set_value("fide-2024-03").run()
    assert metrics(at)["Rating change"] == "+0.80"

    at.number_input(key="calc_rating").set_value(1500)
    at.segmented_control(key="calc_k").set_value("other").run()
    at.number_input(key="calc_k_other").set_value(32)
    at.number_input(key="calc_opp_0").set_value(1600)
    at.radio(key="calc_method").set_value("formula").run()
    assert_clean(at)
    assert metrics(at)["Rating change"] == "+20.48"
    assert metrics(at)["New rating"] == "1520"


# --- Import ---------------------------------------------------------------------------------

def test_import_a_file_then_the_overview_shows_it(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "fresh.db"
    at = open_app(db, monkeypatch)
    assert "import your games first" in texts(at)
    at.switch_page("views/import_.py").run()
    assert_clean(at)
    assert at.text_input(key="import_token").proto.type == at.text_input(
        key="import_token").proto.PASSWORD
    at.file_uploader(key="import_files").set_value(
        (INDEXINATOR.name, INDEXINATOR.read_bytes(), "application/x-ndjson"))
    at.text_input(key="import_user").set_value("indexinator")
    at.button[-1].click().run()  # the file form's submit button
    assert_clean(at)
    assert any("read 2907, new 2907" in s.value for s in at.success)
    at.switch_page("views/overview.py").run()
    assert_clean(at)
    assert metrics(at)["Lichess rating now"] == "1408"


def test_import_from_lichess_without_a_username_is_a_message(
        sample_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(sample_db, monkeypatch, "views/import_.py")
    at.button[0].click().run()  # the Lichess form's submit button
    assert not at.exception
    assert any("username" in w.value for w in at.warning)


@pytest.fixture
def lichess(monkeypatch: pytest.MonkeyPatch) -> Iterator[LichessServer]:
    """The local Lichess (tests/lichess_server.py) with indexinator's real export, as the
    server ``tracker`` talks to ($LICHESS_BASE_URL)."""
    with LichessServer() as server:
        server.add_user("indexinator", ndjson_lines(INDEXINATOR))
        monkeypatch.setenv("LICHESS_BASE_URL", server.url)
        monkeypatch.delenv("LICHESS_TOKEN", raising=False)
        yield server


def test_import_from_lichess_with_a_token_that_is_never_stored(
        tmp_path: Path, lichess: LichessServer, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "api.db"
    at = open_app(db, monkeypatch, "views/import_.py")
    at.text_input(key="import_username").set_value("indexinator")
    at.text_input(key="import_token").set_value("lip_dashboardsecret")
    at.button[0].click().run()  # the Lichess form's submit button
    assert_clean(at)
    assert any("indexinator: read 2907, new 2907" in s.value for s in at.success)
    assert at.get("progress")  # the bar was there, and ends full
    downloads = [r for r in lichess.requests if r.path.startswith("/api/games/user/")]
    assert downloads and all(r.authorization == "Bearer lip_dashboardsecret" for r in downloads)
    with sqlite3.connect(db) as con:
        assert "lip_dashboardsecret" not in "\n".join(con.iterdump())
    at.switch_page("views/overview.py").run()
    assert_clean(at)
    assert metrics(at)["Lichess rating now"] == "1408"


def test_import_of_an_unknown_lichess_user_is_a_message(
        tmp_path: Path, lichess: LichessServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(tmp_path / "api.db", monkeypatch, "views/import_.py")
    at.text_input(key="import_username").set_value("nobody-here")
    at.button[0].click().run()
    assert not at.exception
    assert at.error and "nobody-here" in at.error[0].value


# --- Settings -------------------------------------------------------------------------------

def test_settings_saved_from_the_page_are_the_cli_settings(
        shared_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(shared_db, monkeypatch, "views/settings.py")
    assert_clean(at)
    at.radio(key="set_start_indexinator").set_value("rating").run()  # enables the rating
    at.number_input(key="set_rating_indexinator").set_value(1800)
    at.number_input(key="set_birth_indexinator").set_value(2010)
    at.selectbox(key="set_rules_indexinator").set_value("fide-2024-03")
    at.selectbox(key="set_expected_indexinator").set_value("formula")
    at.checkbox(key="set_prov_indexinator").check()
    at.button[0].click().run()
    assert_clean(at)
    assert at.success
    saved = api.settings("indexinator", db=shared_db)
    assert (saved.start_rating, saved.birth_year, saved.rules, saved.expected,
            saved.count_provisional) == (1800, 2010, "fide-2024-03", "formula", True)
    cli = cli_json(shared_db, "settings", "indexinator")
    assert cli["start_rating"] == 1800 and cli["rules"] == "fide-2024-03"

    at.switch_page("views/overview.py").run()
    assert_clean(at)
    expected = cli_json(shared_db, "replay", "indexinator", "--perf", "blitz")
    assert expected["rules"] == "fide-2024-03" and expected["expected"] == "formula"
    last = expected["periods"][-1]["rating_after"]
    assert metrics(at)["FIDE-style rating now"] == api.rating_text(
        None if last is None else Decimal(str(last)), "unrated")
    assert "start from 1800" in texts(at)


def test_wheel_layout_runs_the_same_app(tmp_path: Path, shared_db: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The wheel packs ``dashboard/`` as ``tracker/_dashboard``: the app must not depend on
    the folder's name or on the repository being importable."""
    copy = tmp_path / "tracker" / "_dashboard"
    shutil.copytree(APP.parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("ui", "charts"):  # forget the modules the other tests loaded
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(APP.parent)])
    monkeypatch.setenv("TRACKER_DB", str(shared_db))
    # Not ``pages/``: Streamlit would also run that folder as its old multipage app.
    assert (copy / "views" / "import_.py").is_file() and not (copy / "pages").exists()
    at = AppTest.from_file(str(copy / "app.py"), default_timeout=TIMEOUT).run()
    assert_clean(at)
    assert metrics(at)["FIDE-style rating now"] == "1499"  # the models' median
    at.switch_page("views/periods.py").run()
    assert_clean(at)
    assert at.header[0].value == "Rating periods — indexinator, blitz"


# --- tracker dashboard: the port ------------------------------------------------------------

def run_dashboard_cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands",
                           "--db", str(db), "dashboard",
                           *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("port", ["99999", "0", "-1"])
def test_a_port_out_of_range_is_one_line(tmp_path: Path, port: str) -> None:
    done = run_dashboard_cli(tmp_path / "t.db", "--port", port)
    assert done.returncode == 2  # a malformed value: a usage error (README, exit codes)
    assert done.stderr == f"error: port must be between 1 and 65535, not {port}\n"
    assert not done.stdout


def test_a_port_in_use_is_one_line_before_any_banner(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        done = run_dashboard_cli(tmp_path / "t.db", "--port", str(port))
        assert done.returncode == 1
        assert done.stderr == f"error: port {port} is in use: pick another with --port\n"
        assert "http://" not in done.stdout + done.stderr  # no URL announced
        # The API says the same, as a TrackerError, before starting anything.
        monkeypatch.setattr(subprocess, "call", lambda *a, **kw: pytest.fail("started"))
        with pytest.raises(DashboardError, match=f"port {port} is in use") as info:
            api.dashboard(db=tmp_path / "t.db", port=port)
        assert isinstance(info.value, TrackerError)
        with pytest.raises(DashboardError, match=f"port {port} is in use"):
            api.dashboard(db=tmp_path / "t.db", port=port, host="0.0.0.0", allow_writes=True)


def test_a_free_port_starts_streamlit_after_the_banner(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started: list[list[str]] = []
    monkeypatch.setattr(subprocess, "call", lambda cmd, **kw: started.append(cmd) or 0)
    assert api.dashboard(db=tmp_path / "t.db", port=port) == 0
    assert capsys.readouterr().err.startswith(f"tracker dashboard: http://127.0.0.1:{port}")
    assert started and started[0][started[0].index("--server.port") + 1] == str(port)
    assert started[0][started[0].index("--server.address") + 1] == "127.0.0.1"
