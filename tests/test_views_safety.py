"""The dashboard's views on data they cannot trust (issue 19, items 7, 9, 10, 12): a write the
import runs did not record still shows, a broken stored game is one line, a name from a file
is text."""

from __future__ import annotations

import json
import shutil
import zlib
from pathlib import Path
from typing import Any

import chess
import pytest
from sqlalchemy import select, update
from streamlit.testing.v1 import AppTest

from tests.conftest import INDEXINATOR, SINGLE
from tracker import api
from tracker.importing import import_file
from tracker.report.game_view import MAX_VIEW_PGN_CHARS, game_moves
from tracker.sources.ndjson import record_from_json
from tracker.store.db import Store
from tracker.store.games import write_games
from tracker.store.models import Game

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
TIMEOUT = 120


def open_app(db: Path, monkeypatch: pytest.MonkeyPatch, query: dict[str, str] | None = None
             ) -> AppTest:
    monkeypatch.setenv("TRACKER_DB", str(db))
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update(query or {})
    at.run()
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def flipped(line: str) -> str:
    """The game with its winner swapped (a draw stays a draw)."""
    obj = json.loads(line)
    if obj.get("winner") in ("white", "black"):
        obj["winner"] = "black" if obj["winner"] == "white" else "white"
    return json.dumps(obj)


# -- item 10: the cache follows the write counter --------------------------------------------


def test_a_write_without_a_finished_run_shows_in_the_dashboard(
        indexinator_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A killed import that changed results writes games (and moves the store's write counter)
    without changing the game count or the newest finished run: the dashboard shows the new
    result, as the CLI does."""
    db = tmp_path / "copy.db"
    shutil.copy(indexinator_db, db)
    query = {"player": "indexinator", "perf": "blitz", "scale": "lichess"}  # as in the report
    before = metrics(open_app(db, monkeypatch, query))
    lines = [ln for ln in INDEXINATOR.read_text().splitlines() if '"blitz"' in ln]
    with Store(str(db)) as store:
        from tracker.store.runs import data_version
        version = data_version(store)
        counts = write_games(store, [record_from_json(json.loads(flipped(ln)), raw=flipped(ln))
                                     for ln in lines])
        assert counts.updated > 1000 and counts.new == 0
        assert data_version(store)[:2] == version[:2]  # what the old key saw: nothing new
        cli_now = api.replay("indexinator", "blitz", db=store, scale="lichess").current_rating
    after = metrics(open_app(db, monkeypatch, query))
    assert after["Games counted"] == before["Games counted"]
    assert cli_now is not None and before["FIDE-style rating now"] == "unrated"
    assert after["FIDE-style rating now"] == str(cli_now)


# -- item 7: the game view on a broken stored game -------------------------------------------

BROKEN_BLOBS = {
    "garbage": b"plain garbage, not compressed",
    "cut zstd": None,  # the real frame, cut in half (filled in by the test)
    "zlib of latin-1": zlib.compress("Weiß".encode("latin-1")),
    "zstd magic, unknown dictionary": bytes.fromhex("28b52ffd2300ffffffff") + b"\x00" * 8,
}


def stored_blob(store: Store, game_id: str) -> bytes:
    with store.engine.connect() as conn:
        return bytes(conn.execute(select(Game.raw).where(Game.id == game_id)).scalar_one())


def damage(store: Store, game_id: str, blob: bytes) -> None:
    with store.engine.begin() as conn:
        conn.execute(update(Game).where(Game.id == game_id).values(raw=blob))


@pytest.mark.parametrize("kind", list(BROKEN_BLOBS))
def test_a_damaged_stored_game_is_one_line_and_a_reimport_repairs_it(
        any_store: Store, tmp_path: Path, kind: str) -> None:
    """Every way a stored text can be broken: the view says so in one line (no exception);
    importing the same file again counts the game updated (not unchanged) and repairs it. For
    the NDJSON file (a re-import screens games by digest) and the PGN file (the write path)."""
    lines = INDEXINATOR.read_text().splitlines()[:30]
    ndjson = tmp_path / "g.ndjson"
    ndjson.write_text("\n".join(lines) + "\n")
    gid = json.loads(lines[7])["id"]
    import_file(ndjson, store=any_store)
    good = api.game_moves(gid, db=any_store)
    assert good.problem == "" and len(good.moves) > 10
    for path in (ndjson, SINGLE):
        target = gid if path is ndjson else "q7ZvsdUF"
        if path is SINGLE:
            import_file(SINGLE, store=any_store)
            good = api.game_moves(target, db=any_store)
        blob = BROKEN_BLOBS[kind] or stored_blob(any_store, target)[:20]
        damage(any_store, target, blob)
        broken = api.game_moves(target, db=any_store)
        assert broken.moves == [] and "\n" not in broken.problem
        assert broken.problem.startswith("this game's stored text cannot be read: ")
        assert broken.problem.endswith("import the game again to repair it")
        again = import_file(path, store=any_store)
        assert again.updated == 1 and again.new == 0, again.line()
        assert again.unchanged == again.read - 1
        repaired = api.game_moves(target, db=any_store)
        assert repaired.problem == "" and repaired.moves == good.moves
        assert import_file(path, store=any_store).unchanged == again.read  # and stays so


def test_a_pgn_null_move_is_shown_as_one() -> None:
    pgn = ('[Event "Rated blitz game"]\n[White "a"]\n[Black "b"]\n[Result "*"]\n\n'
           "1. e4 -- 2. d4 e5 *\n")
    view = game_moves("nullmove", pgn, source="pgn")
    assert view.moves == ["e4", "--", "d4", "e5"]
    assert view.numbered == "1. e4 -- 2. d4 e5"
    assert view.problem == ""
    assert view.final_fen == "rnbqkbnr/pppp1ppp/8/4p3/3PP3/8/PPP2PPP/RNBQKBNR w KQkq - 0 3"


def test_side_variations_are_skipped_not_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """10,000 sibling variations: the view reads the main line without copying a board for
    each (python-chess's tree of 100,000 took 17-23 s, quadratic); a PGN longer than the cap
    is read up to it, with a note."""
    pgn = ('[Event "x"]\n[White "a"]\n[Black "b"]\n[Result "*"]\n\n1. e4 '
           + " ".join("(1. d4 d5)" for _ in range(10_000)) + " e5 2. Nf3 *\n")
    copies = 0
    real_copy = chess.Board.copy

    def counting_copy(self: chess.Board, *args: Any, **kwargs: Any) -> chess.Board:
        nonlocal copies
        copies += 1
        return real_copy(self, *args, **kwargs)

    monkeypatch.setattr(chess.Board, "copy", counting_copy)
    view = game_moves("variations", pgn, source="pgn")
    assert view.moves == ["e4", "e5", "Nf3"] and view.problem == ""
    assert copies < 10
    huge = pgn.replace("(1. d4 d5)", "(1. d4 d5 { " + "x" * 100 + " })")
    assert len(huge) > MAX_VIEW_PGN_CHARS
    cut = game_moves("huge", huge, source="pgn")
    assert cut.moves == ["e4"]
    assert cut.problem == (f"only the first {MAX_VIEW_PGN_CHARS // 1024} KB of this game's "
                           f"{len(huge) // 1024} KB were read")


def test_the_games_page_shows_a_damaged_game_in_one_line(
        indexinator_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stored text damaged: the Games page lists the month, and a clicked game shows its
    players, one warning and no moves; no exception."""
    db = tmp_path / "copy.db"
    shutil.copy(indexinator_db, db)
    with Store(str(db)) as store, store.engine.begin() as conn:
        conn.execute(update(Game).values(raw=b"\x28\xb5\x2f\xfd damaged"))
    monkeypatch.setenv("TRACKER_DB", str(db))
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    at.switch_page("views/games.py").run()
    at.selectbox(key="games_period").set_value("2023-05").run()
    at.session_state["games_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.subheader[0].value == "Rasam877 (1607) – indexinator (1622), 1-0"
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and warnings[0].startswith(
        "this game's stored text cannot be read: ")
    assert "_No moves stored._" in [m.value for m in at.markdown]


# -- item 9: a name from a file is text (the browser test counts requests; this one reads
# -- what the pages send, and runs wherever Streamlit does) -----------------------------------


def test_a_name_like_an_image_reaches_the_page_escaped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = "![p](http://127.0.0.1:18767/px.png)"
    games = []
    for i in range(6):
        white, black = (name, f"opp{i}") if i % 2 == 0 else (f"opp{i}", name)
        games.append(
            f'[Event "Rated blitz game"]\n[Site "https://lichess.org/abcdef{i:02d}"]\n'
            f'[White "{white}"]\n[Black "{black}"]\n[Result "1-0"]\n'
            f'[UTCDate "2024.01.1{i}"]\n[UTCTime "12:00:00"]\n[WhiteElo "1500"]\n'
            f'[BlackElo "1500"]\n[WhiteRatingDiff "+5"]\n[BlackRatingDiff "-5"]\n'
            f'[TimeControl "180+0"]\n\n1. e4 e5 1-0\n')
    pgn = tmp_path / "injected.pgn"
    pgn.write_text("\n".join(games))
    db = tmp_path / "injected.db"
    api.import_file(pgn, db=db)
    at = open_app(db, monkeypatch, {"player": name, "perf": "blitz"})
    assert not at.exception, [e.value for e in at.exception]
    heading = at.header[0].value
    assert heading == "!\\[p\\](http:/\u2060/127.0.0.1:18767/px.png) — blitz"
    for page, title in (("views/periods.py", "Rating periods"), ("views/games.py", "Games"),
                        ("views/settings.py", "Replay settings")):
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.header[0].value.startswith(f"{title} — !\\[p\\](http:/\u2060/127")
