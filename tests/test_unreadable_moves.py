"""A game whose moves cannot be read (a hand-made PGN with an illegal move): imported (its
result counts), never analysed, and said in one line of ours, never python-chess's log."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ANALYSED
from tracker import api
from tracker.core.errors import NoAnalysisError
from tracker.importing import import_file
from tracker.importing.analyse import SKIP_MOVES, run_analyse
from tracker.sources.engine import EngineMissingError, find_engine
from tracker.sources.game_text import read_game_text, read_pgn_game, unreadable_moves
from tracker.store.db import Store

try:
    ENGINE: str | None = find_engine()
except EngineMissingError:
    ENGINE = None

#: A Lichess export's tags, 13 legal moves of a Ruy Lopez, then White's queen "to h6" from d1.
HAND_MADE = """[Event "Rated Blitz game"]
[Site "https://lichess.org/abcdEFGH"]
[Date "2025.03.14"]
[White "trialuser"]
[Black "someone"]
[Result "1-0"]
[UTCDate "2025.03.14"]
[UTCTime "18:02:11"]
[WhiteElo "1500"]
[BlackElo "1480"]
[WhiteRatingDiff "+6"]
[BlackRatingDiff "-6"]
[Variant "Standard"]
[TimeControl "180+2"]
[ECO "C92"]
[Termination "Normal"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O
9. h3 Nb8 10. d4 Nbd7 11. Nbd2 Bb7 12. Bc2 Re8 13. Nf1 Bf8 14. Qh6 g6 15. Qg5 1-0

"""
WHY = "move 14.Qh6 is illegal there"


@pytest.fixture
def hand_made(tmp_path: Path) -> Path:
    path = tmp_path / "my.pgn"
    path.write_text(HAND_MADE)
    return path


def test_the_bad_move_is_named_in_our_words_and_python_chess_logs_nothing(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        text = read_game_text(HAND_MADE, "pgn")
    assert text.problem == WHY and len(text.sans) == 26 and text.sans[-1] == "Bf8"
    assert caplog.records == []
    black = HAND_MADE.replace("13. Nf1 Bf8 14. Qh6", "13. Nf1 Qh6 14. Qe2")
    assert read_game_text(black, "pgn").problem == "move 13...Qh6 is illegal there"
    side = HAND_MADE.replace("13. Nf1 Bf8 14. Qh6 g6 15. Qg5", "13. Nf1 (13. Qh6) 13... Bf8")
    assert read_game_text(side, "pgn").problem == "move 13.Qh6 is illegal there (in a side " \
                                                  "variation)"
    fen = HAND_MADE.replace('[Result "1-0"]', '[Result "1-0"]\n[FEN "no position"]')
    assert read_game_text(fen, "pgn").problem.startswith("its set-up position cannot be read")
    assert read_game_text(HAND_MADE.replace("14. Qh6 g6 15. Qg5", ""), "pgn").problem == ""
    assert read_pgn_game("") == (None, "")


def test_an_ndjson_games_illegal_move_is_found_by_playing_its_moves() -> None:
    moves = "e4 e5 Nf3 Nc6 Bb5 a6 Ke3"
    assert unreadable_moves(json.dumps({"moves": moves}), "ndjson") == \
        "move 4.Ke3 is illegal there"
    assert unreadable_moves(json.dumps({"moves": "e4 e5 Nf3"}), "ndjson") == ""
    assert unreadable_moves(HAND_MADE, "pgn") == WHY


def test_analyse_says_one_line_per_unreadable_game_and_no_library_text(
        any_store: Store, hand_made: Path, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    summary = import_file(hand_made, store=any_store, user="trialuser")
    assert (summary.new, sum(summary.skipped.values())) == (1, 0)
    with caplog.at_level(logging.DEBUG):  # no engine needed: the game never reaches one
        done = run_analyse(any_store, "trialuser", engine_path=str(tmp_path / "none"))
    assert (done.asked, done.analysed, done.status) == (1, 0, "complete")
    assert done.skipped == {SKIP_MOVES: 1}
    assert done.unreadable == [f"game abcdEFGH: {WHY}"]
    assert not [r for r in caplog.records if r.name.startswith("chess")]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands", *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})


def test_the_cli_prints_the_games_line_and_strength_says_why_there_is_no_analysis(
        hand_made: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    imported = _cli("--db", db, "import-file", str(hand_made), "--user", "trialuser")
    assert imported.returncode == 0, imported.stderr
    ran = _cli("--db", db, "analyse", "trialuser", "--engine", str(tmp_path / "none"))
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.splitlines() == [f"game abcdEFGH: {WHY}: not analysed"]
    assert "skipped 1 moves not readable" in ran.stdout and "complete" in ran.stdout
    shown = _cli("--db", db, "strength", "--game", "abcdEFGH")
    assert shown.returncode == 1
    assert shown.stderr.strip() == (f"error: no evals for the game 'abcdEFGH': its moves "
                                    f"cannot be read ({WHY}): no analysis")


def test_strength_of_an_unreadable_ndjson_game_names_its_move(any_store: Store,
                                                               tmp_path: Path) -> None:
    obj = json.loads(ANALYSED.read_text().splitlines()[0])
    obj.pop("analysis")
    moves = obj["moves"].split()
    moves[5] = "Ke3"  # Black's king cannot reach e3 on move 3
    obj["moves"] = " ".join(moves)
    path = tmp_path / "bad.ndjson"
    path.write_text(json.dumps(obj) + "\n")
    import_file(path, store=any_store)
    with pytest.raises(NoAnalysisError, match=r"its moves cannot be read \(move 3\.\.\.Ke3 "
                                              r"is illegal there\): no analysis$"):
        api.strength_game(obj["id"], db=any_store)


@pytest.mark.skipif(ENGINE is None, reason="no engine")
def test_an_ndjson_games_illegal_move_found_by_the_engine_is_named(store: Store,
                                                                  tmp_path: Path) -> None:
    obj = json.loads(ANALYSED.read_text().splitlines()[0])
    obj.pop("analysis")
    obj["moves"] = "e4 e5 Ke3"
    path = tmp_path / "bad.ndjson"
    path.write_text(json.dumps(obj) + "\n")
    import_file(path, store=store)
    done = run_analyse(store, "reda46", nodes=2_000)
    assert done.skipped == {SKIP_MOVES: 1}
    assert done.unreadable == [f"game {obj['id']}: move 2.Ke3 is illegal there"]


@pytest.mark.skipif(ENGINE is None, reason="no engine")
def test_a_worker_says_where_a_games_moves_cannot_be_read(pg_url: str, hand_made: Path
                                                          ) -> None:
    from sqlalchemy import text

    store = Store(pg_url)
    try:
        import_file(hand_made, store=store, user="trialuser")
        said: list[tuple[str, str]] = []
        done = api.analyse("trialuser", db=store, worker=True, lease=5,
                           on_game=lambda gid, what: said.append((gid, what)))
        assert (done.status, done.skipped) == ("complete", {SKIP_MOVES: 1})
        assert said == [("abcdEFGH", f"skipped: {SKIP_MOVES} ({WHY})")]
    finally:
        with store.engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        store.close()


def test_the_game_view_shows_the_moves_before_the_bad_one_and_logs_nothing(
        store: Store, hand_made: Path, caplog: pytest.LogCaptureFixture) -> None:
    import_file(hand_made, store=store, user="trialuser")
    with caplog.at_level(logging.DEBUG):
        view = api.game_moves("abcdEFGH", db=store)
    assert len(view.moves) == 26 and view.moves[-1] == "Bf8"
    assert view.problem == f"moves read up to an error: {WHY}"
    assert not [r for r in caplog.records if r.name.startswith("chess")]
