"""The Periods, Games and Import pages in words, not keys: human headers with units and help,
results from the player's side, K × ΔR per game, a game's moves and final position, no raw
JSON. (AppTest: the pages' scripts run without a browser.)"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import chess
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import CMRADE
from tests.test_dashboard import assert_clean, open_app, texts
from tracker import api


@pytest.fixture
def shared_db(indexinator_db: Path, tmp_path: Path) -> Path:
    path = tmp_path / "copy.db"
    with sqlite3.connect(indexinator_db) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    return path


def columns(at: AppTest) -> dict[str, dict[str, object]]:
    """The first table's column configuration as shown: key → {label, help, …}."""
    config = json.loads(at.dataframe[0].proto.columns)
    return {key: value for key, value in config.items()}


# --- Periods -------------------------------------------------------------------------------

def test_periods_headers_are_words_with_units_and_help(shared_db: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(shared_db, monkeypatch, "views/periods.py")
    assert_clean(at)
    shown = columns(at)
    labels = {key: shown[key]["label"] for key in shown if "label" in shown[key]}
    assert labels["expected_score"] == "Expected" and labels["rating_before"] == "Before"
    assert labels["lichess_rating"] == "Lichess" and labels["left_out"] == "Left out"
    assert not [k for k, v in labels.items() if "_" in str(v)]  # no JSON key as a header
    assert "rating points" in str(shown["change"]["help"])
    # Numbers only, each column narrow, so that they all show at 1280 px; the notes are read
    # in full under the table (issue 30, item 7).
    order = list(at.dataframe[0].proto.column_order)
    assert "note" not in order and "excluded" not in order
    assert all(isinstance(shown[k].get("width"), int) and int(shown[k]["width"]) <= 70
               for k in order)


def test_periods_row_shows_its_note_in_full(shared_db: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(shared_db, monkeypatch, "views/periods.py")
    # Newest first: 2023-05 is the second oldest of indexinator's 31 months.
    at.session_state["periods_table"] = {"selection": {"rows": [29], "columns": [],
                                                        "cells": []}}
    at.run()
    assert_clean(at)
    assert ("**2023-05** — K 40 (fewer than 30 games); 700 rule: K 3 for 220 games  \n"
            "Left out: provisional opponent: 6") in texts(at)


# --- Games ---------------------------------------------------------------------------------

def games_page(db: Path, monkeypatch: pytest.MonkeyPatch, period: str) -> AppTest:
    """The Games page of the sample on the Lichess scale (the raw numbers)."""
    at = open_app(db, monkeypatch, "views/games.py",
                  query={"player": "indexinator", "perf": "blitz", "scale": "lichess"})
    at.selectbox(key="games_period").set_value(period).run()
    assert_clean(at)
    return at


def test_games_say_win_draw_loss_and_the_points_each_game_moved(
        shared_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = games_page(shared_db, monkeypatch, "2023-05")
    table = at.dataframe[0].value
    outcome = {"1": "Win", "½": "Draw", "0": "Loss"}
    assert (table["outcome"] == table["result"].map(outcome)).all()
    counted = table[table["counted"]]
    assert ((counted["points"] - 3 * counted["delta"]).abs() < 1e-9).all()  # K 3 in 2023-05
    assert round(counted["points"].sum(), 2) == -123.78
    labels = {k: v.get("label") for k, v in columns(at).items()}
    assert labels["outcome"] == "Result" and labels["points"] == "K × ΔR"


def test_no_stray_k_line_under_the_sentence(shared_db: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    report = api.replay("indexinator", "blitz", db=shared_db)
    plain = next(r for r in report.periods if r.result.note == f"K {r.result.k}")
    at = games_page(shared_db, monkeypatch, plain.period)
    assert f"K **{plain.result.k}**" in texts(at)
    assert f"K {plain.result.k}" not in [c.value for c in at.caption]


def test_clicking_a_game_shows_its_moves_position_and_link(
        shared_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = games_page(shared_db, monkeypatch, "2023-05")
    at.session_state["games_table"] = {"selection": {"rows": [0], "columns": [],
                                                      "cells": []}}
    at.run()
    assert_clean(at)
    assert at.subheader[0].value == "Rasam877 (1607) – indexinator (1622), 1-0"
    assert any(m.value.startswith("1. ") for m in at.markdown)
    links = [b.proto.url for b in at.get("link_button")]
    assert links and links[0].startswith("https://lichess.org/")


# --- the game view through the API (python-chess) -------------------------------------------

def test_game_moves_of_an_ndjson_game(indexinator_db: Path) -> None:
    with sqlite3.connect(indexinator_db) as conn:
        game_id, plies = conn.execute(
            "select id, plies from games where plies > 20 order by id limit 1").fetchone()
    moves = api.game_moves(game_id, db=indexinator_db, orientation="black")
    assert len(moves.moves) == plies
    assert moves.numbered.startswith("1. ") and moves.problem == ""
    board = chess.Board()
    for san in moves.moves:
        board.push_san(san)
    assert board.fen() == moves.final_fen
    assert moves.svg.startswith("<svg") and moves.url == f"https://lichess.org/{game_id}/black"


def test_game_moves_of_a_pgn_game(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    api.import_file(CMRADE, db=db, user="cmrade")
    with sqlite3.connect(db) as conn:
        game_id, plies = conn.execute(
            "select id, plies from games where plies > 0 order by id limit 1").fetchone()
    moves = api.game_moves(game_id, db=db)
    assert len(moves.moves) == plies and moves.problem == ""
    assert moves.url == f"https://lichess.org/{game_id}"


def test_an_unknown_game_is_one_line(tmp_path: Path) -> None:
    api.open_store(tmp_path / "t.db", create=True).close()
    with pytest.raises(api.ArgumentError, match="no game 'nope' in the database"):
        api.game_moves("nope", db=tmp_path / "t.db")


# --- Import --------------------------------------------------------------------------------

def test_import_page_lists_the_formats_and_shows_no_raw_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(tmp_path / "fresh.db", monkeypatch, "views/import_.py")
    assert_clean(at)
    uploader = next(e for e in at.get("file_uploader"))
    assert ".xz" in uploader.proto.label and ".zst" in uploader.proto.label
    assert not at.get("json")


# --- Settings: link a FIDE id ---------------------------------------------------------------

def test_settings_link_a_fide_id_and_the_overview_draws_it(
        shared_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dashboard import charts
    from tests.lichess_server import LichessServer
    from tests.test_dashboard import chart_traces

    with LichessServer() as server:
        monkeypatch.setenv("LICHESS_BASE_URL", server.url)
        at = open_app(shared_db, monkeypatch, "views/settings.py")
        assert_clean(at)
        at.text_input(key="fide_id_indexinator").set_value("35009192")
        at.button[-1].click().run()
        assert_clean(at)
    assert any("Linked indexinator to FIDE 35009192" in s.value for s in at.success)
    at.switch_page("views/overview.py").run()
    assert_clean(at)
    traces = chart_traces(at)
    assert charts.real_fide_name("standard") in traces
    assert charts.real_fide_name("blitz") in traces


# --- Overview: the monthly level ------------------------------------------------------------

def test_the_overview_says_no_monthly_level_is_drawn_when_none_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's 9 Lichess-analysed games make one month whose range is over 400 points
    wide: nothing is drawn, so the caption says so instead of describing green squares."""
    db = tmp_path / "demo.db"
    api.import_file(api.demo_file(api.DEMO_ANALYSED_FILE), db=db, user="indexinator")
    at = open_app(db, monkeypatch, query={"player": "indexinator", "perf": "blitz"})
    assert_clean(at)
    words = " ".join(c.value for c in at.caption)
    assert "Green squares" not in words
    assert "No monthly level drawn: 1 month with analysed games, none with enough of them for " \
        "a range narrower than 400 points" in words
    assert "The last 9 analysed games show 1511 (1197–1773)" in words
