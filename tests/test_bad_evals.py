"""A malformed eval (issue 32, item 6) drops that eval, never its game: a PGN ``[%eval]`` of
400 digits (a float overflow) or ``#`` and 5,000 digits (past Python's int() limit), and an
NDJSON eval of 5,000 digits (past ``json.loads``'s limit). The game is stored with the other
evals, the ply without one, and the import summary counts it."""

from __future__ import annotations

import json
from pathlib import Path

from tracker.importing import import_file
from tracker.sources.ndjson import EVALS_DROPPED
from tracker.store.analysis import game_analysis
from tracker.store.db import Store

from .conftest import ANALYSED

_PGN = (
    '[Event "Rated Blitz game"]\n[Site "https://lichess.org/badeval1"]\n'
    '[White "alice"]\n[Black "bob"]\n[Result "1-0"]\n'
    '[UTCDate "2024.01.02"]\n[UTCTime "12:00:00"]\n'
    '[WhiteElo "1500"]\n[BlackElo "1500"]\n[WhiteRatingDiff "+6"]\n'
    '[BlackRatingDiff "-6"]\n[TimeControl "180+0"]\n\n'
    "1. e4 { [%eval 0.17] } 1... e5 { [%eval " + "1" * 400 + "] } 2. Nf3 { [%eval 0.25] }"
    " 2... Nc6 { [%eval #-" + "9" * 5000 + "] } 3. Bb5 { [%eval -0.4] } 1-0\n\n"
)


def test_a_pgn_eval_out_of_range_is_dropped_and_counted_not_its_game(
        any_store: Store, tmp_path: Path) -> None:
    path = tmp_path / "bad.pgn"
    path.write_text(_PGN)
    summary = import_file(path, store=any_store, user="alice")
    assert (summary.read, summary.new, summary.skipped) == (1, 1, {})
    assert summary.repaired == {EVALS_DROPPED: 1}
    assert "repaired 1 (1 with evals out of range dropped)" in summary.line()
    stored = game_analysis(any_store, "badeval1")
    assert stored is not None
    assert [(e.cp, e.mate) for e in stored.analysis.evals] == [
        (17, None), (None, None), (25, None), (None, None), (-40, None)]


def test_an_ndjson_eval_of_5000_digits_is_dropped_and_counted_not_its_game(
        any_store: Store, tmp_path: Path) -> None:
    game = json.loads(ANALYSED.read_text().splitlines()[0])
    evals = [e.get("eval") for e in game["analysis"]]
    game["analysis"][1]["eval"] = "HUGE"
    game["analysis"][2]["eval"] = 100_001  # just out of range
    path = tmp_path / "bad.ndjson"
    path.write_text(json.dumps(game).replace('"HUGE"', "-" + "7" * 5000) + "\n")
    summary = import_file(path, store=any_store)
    assert (summary.read, summary.new, summary.skipped) == (1, 1, {})
    assert summary.repaired == {EVALS_DROPPED: 1}
    assert summary.evals == 1
    stored = game_analysis(any_store, game["id"])
    assert stored is not None
    got = [e.cp for e in stored.analysis.evals]
    assert got == [evals[0], None, None, *evals[3:]]
