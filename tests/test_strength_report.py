"""``tracker strength``: the report from stored evals and the strength core, its ``--json``
contract, the CLI and the API twins, on 41 real analysed rapid games of one player (their
Lichess ACPL and judgment counts are in the file: the report must equal them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from statistics import median

import pytest

from tests.conftest import ANALYSED, SINGLE
from tracker import api
from tracker.importing import import_file
from tracker.report_strength import GAME_KEYS
from tracker.store.db import Store

LINES = [json.loads(line) for line in ANALYSED.read_text().splitlines()]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("strength") / "t.db"
    with Store(str(path)) as store:
        import_file(ANALYSED, store=store, user="reda46")
    return path


def _lichess_side(game: dict, user: str) -> tuple[str, dict]:  # type: ignore[type-arg]
    for color in ("white", "black"):
        side = game["players"][color]
        if side["user"]["id"] == user:
            return color, side
    raise AssertionError(user)


def test_the_json_object_has_exactly_the_contract_keys(db: Path) -> None:
    out = api.strength("reda46", perf="rapid", db=str(db)).to_json()
    assert list(out) == ["games", "months", "recent"]
    assert len(out["games"]) == 41
    for g in out["games"]:
        assert tuple(g) == GAME_KEYS
        assert list(g["level"]) == ["estimate", "low", "high", "model"]
        assert g["level"]["low"] <= g["level"]["estimate"] <= g["level"]["high"]
        assert g["level"]["model"] == "level-rapid-2"
        assert list(g["turning_point"]) == ["ply", "san", "win_before", "win_after", "best"]
        assert g["turning_point"]["win_before"] >= g["turning_point"]["win_after"]
    played = [g["played_at"] for g in out["games"]]
    assert played == sorted(played, reverse=True)  # newest first
    assert [m["month"] for m in out["months"]] == ["2022-06", "2022-09", "2022-10", "2022-11"]
    assert [m["games"] for m in out["months"]] == [1, 1, 7, 32]
    assert out["recent"]["games"] == 20
    assert list(out["recent"]["level"]) == ["estimate", "low", "high", "model"]


def test_each_game_shows_lichess_own_acpl_and_judgment_counts(db: Path) -> None:
    out = api.strength("reda46", perf="rapid", db=str(db)).to_json()
    by_id = {g["id"]: g for g in LINES}
    for g in out["games"]:
        color, side = _lichess_side(by_id[g["id"]], "reda46")
        assert g["color"] == color and g["rating"] == side["rating"]
        lichess = side["analysis"]
        assert (g["acpl"], g["inaccuracy"], g["mistake"], g["blunder"]) == (
            lichess["acpl"], lichess["inaccuracy"], lichess["mistake"], lichess["blunder"])
        assert 0 <= g["accuracy"] <= 100


def test_a_set_of_games_shows_a_narrower_range_than_one_game(db: Path) -> None:
    out = api.strength("reda46", perf="rapid", db=str(db)).to_json()
    single = median(g["level"]["high"] - g["level"]["low"] for g in out["games"])
    month = out["months"][-1]["level"]  # 32 games
    recent = out["recent"]["level"]  # 20 games
    assert month["high"] - month["low"] < recent["high"] - recent["low"] < single


def test_one_game_gives_both_sides_in_the_same_keys(db: Path) -> None:
    first = LINES[0]
    game = api.strength_game(first["id"], db=str(db))
    out = api.strength_game_json(game)
    assert [side["color"] for side in out["games"]] == ["white", "black"]
    for side in out["games"]:
        assert tuple(side) == GAME_KEYS and side["id"] == first["id"]
        lichess = first["players"][side["color"]]["analysis"]
        assert (side["acpl"], side["blunder"]) == (lichess["acpl"], lichess["blunder"])
    black = out["games"][1]["turning_point"]
    assert (black["ply"], black["san"], black["best"]) == (86, "d2", "h4h8")
    assert game.best_san(86) == "Rh8"
    svg = game.board_before(86, "black")
    assert svg.startswith("<svg") and svg.count("arrow") >= 2  # played and better move


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli", "--db", str(db), *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"})


def test_the_cli_prints_the_api_json_and_a_table(db: Path) -> None:
    done = _cli(db, "strength", "reda46", "--perf", "rapid", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(
        api.dumps(api.strength("reda46", perf="rapid", db=str(db)).to_json()))
    table = _cli(db, "strength", "reda46", "--games", "3")
    assert table.returncode == 0 and "2022-11" in table.stdout
    assert "last 20 games together" in table.stdout and "43…d2??" in table.stdout
    one = _cli(db, "strength", "--game", LINES[0]["id"])
    assert one.returncode == 0 and "Rh8 was better" in one.stdout


def test_cli_errors_are_one_line(db: Path) -> None:
    neither = _cli(db, "strength")
    assert neither.returncode == 2 and "USERNAME or --game" in neither.stderr
    missing = _cli(db, "strength", "--game", "zzzzzzzz")
    assert missing.returncode == 1 and "no evals stored" in missing.stderr
    assert "Traceback" not in missing.stderr
    blitz = _cli(db, "strength", "reda46", "--perf", "blitz")
    assert blitz.returncode == 1 and "no analysed blitz games" in blitz.stderr
    nobody = _cli(db, "strength", "nobody")
    assert nobody.returncode == 1 and "no games of 'nobody'" in nobody.stderr


def test_the_bundled_players_analysed_blitz_games_hold_his_rating(tmp_path: Path) -> None:
    """Issue 33: indexinator's 9 games of 2025-10 analysed by Lichess (blitz 1399–1454 before
    and after them) give a set range that holds his rating, on the blitz scale; every game's
    range too holds his rating (each range is honest on its own)."""
    path = tmp_path / "demo.db"
    api.import_file(api.demo_file(api.DEMO_ANALYSED_FILE), db=path, user="indexinator")
    report = api.strength("indexinator", db=path, perf="blitz")
    assert report.model == "level-blitz-2" and len(report.games) == 9
    recent = report.recent.level
    assert recent is not None and recent.games == 9
    assert recent.low <= 1399 and recent.high >= 1454
    for g, color in report.games:
        level = g.side(color).level
        rating = g.side(color).rating
        assert level is not None and rating is not None
        assert level.low <= level.estimate <= level.high
    held = sum(1 for g, c in report.games
               if g.side(c).level.low <= (g.side(c).rating or 0) <= g.side(c).level.high)  # type: ignore[union-attr]
    assert held >= 7  # a 10–90 % range: about 8 of 9


def test_lichess_evals_from_2023_on_are_read_on_the_training_scale() -> None:
    from tracker.analysis.evals import PlyEval
    from tracker.analysis.level import NORMALISED_FROM_MS, on_training_scale

    evals = [PlyEval(100, None), PlyEval(None, -3), PlyEval(None, None), PlyEval(-31, None)]
    assert on_training_scale(evals, NORMALISED_FROM_MS - 1) == evals
    assert on_training_scale(evals, None) == evals
    assert on_training_scale(evals, NORMALISED_FROM_MS) == [
        PlyEval(166, None), PlyEval(None, -3), PlyEval(None, None), PlyEval(-51, None)]


def _partial_and_bare(tmp_path: Path, keep: int) -> Path:
    """The real game q7ZvsdUF (125 plies with Lichess's evals and glyphs) with only its first
    ``keep`` evals kept and every glyph removed."""
    import re

    text = SINGLE.read_text()
    seen = [0]

    def one(m: re.Match[str]) -> str:
        seen[0] += 1
        return m.group(0) if seen[0] <= keep else ""

    text = re.sub(r"\[%eval [^\]]*\]", one, text)
    text = re.sub(r"(?<=[^\s?!])[?!]+(?=\s)", "", text)  # the glyphs ?! ? ?? !? after moves
    path = tmp_path / f"partial-{keep}.pgn"
    path.write_text(text)
    return path


def test_a_game_with_evals_on_part_of_it_says_how_much(tmp_path: Path) -> None:
    """Issue 33 item 5: 3 evals for 125 plies: the game says so, and the level and counts read
    only the covered plies."""
    db = tmp_path / "partial.db"
    api.import_file(_partial_and_bare(tmp_path, 3), db=db)
    game = api.strength_game("q7ZvsdUF", db=db)
    assert game.covered == (3, 125)
    assert game.coverage_note == ("evals cover 3 of 125 plies (2 %): accuracy, ACPL, counts and "
                                  "the level read only those")
    white = game.side("white")
    assert white.level is not None and white.level.moves == 2  # plies 1 and 3
    assert white.counts_computed  # no glyph left: computed, not a false 0
    full = tmp_path / "full.db"
    api.import_file(SINGLE, db=full)
    whole = api.strength_game("q7ZvsdUF", db=full)
    assert whole.coverage_note is None and whole.covered == (125, 125)
    # this real export has [%eval] but no glyph at all (issue 33 item 6): computed counts
    assert whole.side("white").counts_computed and whole.side("white").inaccuracy > 0
