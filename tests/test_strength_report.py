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

import chess
import pytest

from tests.conftest import ANALYSED, SINGLE
from tracker import api
from tracker.importing import import_file
from tracker.report.strength import GAME_KEYS
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
        assert list(g["level"]) == ["estimate", "low", "high", "model", "note"]
        assert g["level"]["low"] <= g["level"]["estimate"] <= g["level"]["high"]
        assert g["level"]["model"] == "level-rapid-5"
        assert list(g["turning_point"]) == ["ply", "san", "win_before", "win_after", "best"]
        assert g["turning_point"]["win_before"] >= g["turning_point"]["win_after"]
    played = [g["played_at"] for g in out["games"]]
    assert played == sorted(played, reverse=True)  # newest first
    assert [m["month"] for m in out["months"]] == ["2022-06", "2022-09", "2022-10", "2022-11"]
    assert [m["games"] for m in out["months"]] == [1, 1, 7, 32]
    assert out["recent"]["games"] == 20
    assert list(out["recent"]["level"]) == ["estimate", "low", "high", "model", "note"]


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
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands", "--db", str(db), *args],
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
    # No such game: said so, not "no evals stored … analyse" (issue 30, item 15)
    assert missing.returncode == 1 and "no game 'zzzzzzzz' in the database" in missing.stderr
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
    assert report.model == "level-blitz-5" and len(report.games) == 9
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
    """× the era factor measured through the local engine (calibration file 4: 1.386), from
    2023-01-01 00:00 UTC; mates, missing evals and older games as they are."""
    from tracker.analysis.level import on_training_scale
    from tracker.core.evals import PlyEval

    era = 1_672_531_200_000
    evals = [PlyEval(100, None), PlyEval(None, -3), PlyEval(None, None), PlyEval(-31, None),
             PlyEval(50, None)]
    assert on_training_scale(evals, era - 1) == evals
    assert on_training_scale(evals, None) == evals
    assert on_training_scale(evals, era) == [  # 31 × 1.386 = 42.97; 50 × 1.386 = 69.3
        PlyEval(139, None), PlyEval(None, -3), PlyEval(None, None), PlyEval(-43, None),
        PlyEval(69, None)]


def test_a_real_pgn_with_evals_but_no_glyph_gets_computed_counts(tmp_path: Path) -> None:
    """Issue 33 item 6: the real export q7ZvsdUF has ``[%eval]`` on all 125 plies but no
    ``?!``/``?``/``??``: its counts are computed from the evals, marked so, never a false 0."""
    db = tmp_path / "full.db"
    api.import_file(SINGLE, db=db)
    game = api.strength_game("q7ZvsdUF", db=db)
    assert game.covered and (game.evaluated, game.plies) == (125, 125)
    white = game.side("white")
    assert white.counts_computed and white.inaccuracy > 0
    (side,) = [g for g in api.strength_game_json(game)["games"] if g["color"] == "white"]
    assert side["counts_computed"] is True


def _partial_export(tmp_path: Path) -> tuple[Path, str, int]:
    """reda46's export with the longest game's ``analysis[]`` cut to its first 3 entries:
    ``(file, that game's id, its plies that need an eval)`` (a checkmating ply has none)."""
    lines = [json.loads(line) for line in ANALYSED.read_text().splitlines()]
    longest = max(lines, key=lambda g: len(g["moves"].split()))
    plies = len(longest["moves"].split()) - (longest["status"] == "mate")
    longest["analysis"] = longest["analysis"][:3]
    path = tmp_path / "partial.ndjson"
    path.write_text("".join(json.dumps(g) + "\n" for g in lines))
    return path, longest["id"], plies


def test_a_partial_analysis_shows_its_coverage_and_counts_in_no_level(
        any_store: Store, tmp_path: Path) -> None:
    path, game_id, plies = _partial_export(tmp_path)
    assert plies > 100
    import_file(path, store=any_store, user="reda46")
    report = api.strength("reda46", db=any_store, perf="rapid")
    assert (len(report.games), report.partial) == (41, 1)
    game = next(g for g, _ in report.games if g.id == game_id)
    assert (game.evaluated, game.plies, game.covered) == (3, plies, False)
    assert game.coverage_text == f"evals for 3 of {plies} plies"
    for side in (game.white, game.black):
        assert (side.accuracy, side.acpl, side.level) == (None, None, None)
    # every other game is covered, and the months count 40 games, not 41
    assert all(g.covered for g, _ in report.games if g.id != game_id)
    assert sum(m.games for m in report.months) == 40
    data = report.to_json()
    partial = next(g for g in data["games"] if g["id"] == game_id)
    assert partial["coverage"] == {"evals": 3, "plies": plies, "full": False}
    assert (partial["accuracy"], partial["level"]) == (None, None)
    full = next(g for g in data["games"] if g["id"] != game_id)
    assert full["coverage"]["full"] is True and full["accuracy"] is not None
    one = api.strength_game(game_id, db=any_store)
    assert one.coverage_text == f"evals for 3 of {plies} plies" and not one.covered


def test_the_recent_level_and_its_singles_read_the_same_games_when_the_newest_is_partial(
        tmp_path: Path) -> None:
    """With the newest game's analysis cut to 3 evals, the last-20 level reads the newest 20
    covered games, and the mean of single levels it is compared with reads the same 20 (it
    read the newest 20 of any kind: 19 levels, mean 1510)."""
    lines = [json.loads(line) for line in ANALYSED.read_text().splitlines()]
    newest = max(lines, key=lambda g: g["createdAt"])
    newest["analysis"] = newest["analysis"][:3]
    path = tmp_path / "newest-partial.ndjson"
    path.write_text("".join(json.dumps(g) + "\n" for g in lines))
    with Store(str(tmp_path / "p.db")) as store:
        import_file(path, store=store, user="reda46")
        report = api.strength("reda46", db=store, perf="rapid")
    assert report.partial == 1 and not report.games[0][0].covered
    read = report.recent_games()
    assert len(read) == report.recent.games == 20 and all(g.covered for g, _ in read)
    assert [g.id for g, _ in read] == [g.id for g, _ in report.games[1:21]]
    singles = [g.side(c).level for g, c in read]
    assert all(lv is not None for lv in singles)
    assert sum(lv.estimate for lv in singles if lv is not None) == 30187  # mean 1509.35
    assert report.recent.level is not None and report.recent.level.estimate == 1622
    assert report.recent_apart() == 1509
    # and the CLI says why the set's 1622 is not that mean
    from rich.console import Console

    from tracker.cli import strength as cli_strength

    terminal = Console(width=200, record=True, highlight=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli_strength, "out", terminal)
        cli_strength._print_player(report, 0)
    words = " ".join(terminal.export_text().split())
    assert "last 20 games together: 1622 (1457–1819)" in words
    assert "not the mean of the single games' levels (1509)" in words


def test_the_cli_says_what_a_partial_analysis_covers(tmp_path: Path) -> None:
    path, game_id, plies = _partial_export(tmp_path)
    db = tmp_path / "p.db"
    with Store(str(db)) as store:
        import_file(path, store=store, user="reda46")
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "tracker.cli.commands",
                           "--db", str(db), "strength",
                           "--game", game_id], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"evals for 3 of {plies} plies (partial: no accuracy, ACPL or level)" in done.stdout
    assert "accuracy -, ACPL -" in done.stdout
    listed = subprocess.run([sys.executable, "-m", "tracker.cli.commands",
                             "--db", str(db), "strength",
                             "reda46", "--games", "50"], capture_output=True, text=True,
                            env=env, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert f"- (evals for 3 of {plies} plies)" in listed.stdout
    # the game's turn is not read from 3 evals of 100+ plies (it said "balanced to the end")
    assert f"the game: not read: evals for 3 of {plies} plies only" in done.stdout
    assert api.strength_game(game_id, db=str(db)).turn == (
        None, f"not read: evals for 3 of {plies} plies only")
    assert ("1 game with evals for part of the plies only: no accuracy, ACPL or level, and "
            "left out of the levels above") in listed.stdout


def test_the_first_turn_is_read_from_the_fen_by_python_chess() -> None:
    from tracker.report.strength import first_turn

    assert first_turn(None) == first_turn("") == (True, 1)
    assert first_turn(chess.STARTING_FEN) == (True, 1)
    # a position set up with black to move at move 23 (a real "From Position" game's FEN)
    assert first_turn("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 23"
                      ) == (False, 23)
    assert first_turn("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1") == (True, 1)
    assert first_turn("8/8/8/8/8/8/8/8 b") == (False, 1)  # fields left off: python-chess's
    assert first_turn("not a fen b 0 12") == (True, 1)


def test_the_per_game_table_fits_an_80_column_terminal(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal 80 columns wide the per-game table wraps a cell onto a second line
    rather than cutting dates or ranges short with "…" (it did: "2025-10…", "(969–23…")."""
    from rich.console import Console

    from tracker.cli import strength as cli_strength

    path = tmp_path / "demo.db"
    api.import_file(api.demo_file(api.DEMO_ANALYSED_FILE), db=path, user="indexinator")
    report = api.strength("indexinator", db=path, perf="blitz")
    terminal = Console(width=80, record=True, highlight=False, soft_wrap=True)
    monkeypatch.setattr(cli_strength, "out", terminal)
    cli_strength._print_player(report, 20)
    text = terminal.export_text()
    table = text[text.index("?!/?/??"):text.index("evals: ")]  # said lines soft-wrap
    assert "…" not in table.replace("36…Rxh2", "").replace("47…Qf6", "").replace(
        "16…b5", "").replace("3…Nf6", "")  # Black's moves are written 36…Rxh2
    assert max(len(line.rstrip()) for line in table.splitlines()) <= 80
    assert table.count("2025-10-2") == 6 and "(832–2208)" in table and "(1227–2553)" in table
    # the months' FIDE-scale column is the estimate through each model, said so; the set's
    # reading is within 50 of the mean of the single games' levels (1541): nothing to explain
    words = " ".join(text.split())
    assert "estimate, FIDE scale" in words and "(lebowitz, mathtuition), lowest–highest: the " \
        "models' spread, not a range; in brackets the level's 10–90 % range through them" in words
    # the FIDE-scale estimate has its range too (it was "lowest–highest" alone)
    assert "1511 (1197–1773) 1576–1669 (1425–1801)" in words
    assert "last 9 games together: 1511 (1197–1773)" in words
    assert "evals: Lichess's server analysis, every game above" in words
    assert "not the mean of the single games' levels" not in words
    # no game's level falls where the blitz model is weak (400–999, 2000 on): no † mark
    assert "†" not in table


def test_games_0_prints_no_per_game_table(db: Path) -> None:
    done = _cli(db, "strength", "reda46", "--games", "0")
    assert done.returncode == 0, done.stderr
    assert "turning point" not in done.stdout and "date" not in done.stdout  # no bare header
    assert "last 20 games together: " in done.stdout and "2022-11" in done.stdout  # months
    assert done.stdout.rstrip().endswith("0 newest of 41 games shown (--games N for more)")


def test_one_analysed_game_is_the_last_game_not_last_1_games(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from tracker.cli import strength as cli_strength

    path = tmp_path / "one.db"
    api.import_file(SINGLE, db=path)
    report = api.strength("lance5500", db=path)
    assert len(report.games) == 1
    terminal = Console(width=120, record=True, highlight=False, soft_wrap=True)
    monkeypatch.setattr(cli_strength, "out", terminal)
    cli_strength._print_player(report, 20)
    text = terminal.export_text()
    assert "last 1 games" not in text
    assert any(line.startswith("last game: ") for line in text.splitlines()), text


def test_the_per_game_table_says_whose_evals_each_game_has(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lichess's evals and a local engine's read differently (issue 29): the per-game table
    marks the locally analysed games, where ``--game`` alone said it before."""
    import dataclasses

    from rich.console import Console

    from tests.test_strength_saved import _engine_evals, _games_without_evals
    from tracker.cli import strength as cli_strength
    from tracker.core.records import Analysis
    from tracker.store.analysis import write_engine_analysis

    path = tmp_path / "mixed.db"
    with Store(str(path)) as store:
        import_file(api.demo_file(api.DEMO_ANALYSED_FILE), store=store, user="indexinator")
        ((pk, game_id, raw_moves),) = _games_without_evals(store)
        analysis = Analysis(_engine_evals(len(raw_moves.split()), 30), "engine", "Stockfish",
                            "15.1", 10_000, calibration="stockfish-15.1-10000n-1")
        assert write_engine_analysis(store, pk, dataclasses.replace(analysis))
    report = api.strength("indexinator", db=path, perf="blitz")
    local = [g for g, _ in report.games if g.source == "engine"]
    assert [g.id for g in local] == [game_id]

    def printed(shown: int) -> str:
        terminal = Console(width=120, record=True, highlight=False, soft_wrap=True)
        monkeypatch.setattr(cli_strength, "out", terminal)
        cli_strength._print_player(report, shown)
        return terminal.export_text()

    text = printed(20)
    day = local[0].played_at.strftime("%Y-%m-%d")
    assert text.count("°") == 2 and f"{day}°" in text
    assert "analysed at a budget no engine calibration covers" not in text  # 10,000: calibrated
    assert ("° evals from Stockfish 15.1, 10,000 nodes, calibrated (stockfish-15.1-10000n-1); "
            "the others' from Lichess's server analysis") in text
    assert report.games[0][0].id == game_id  # the newest: alone, it needs no mark
    only = printed(1)
    assert "°" not in only and ("evals: Stockfish 15.1, 10,000 nodes, calibrated "
                                "(stockfish-15.1-10000n-1), every game above") in only


#: Rapid players of the tests' 2,000-game sample whose levels fall where the rapid model is
#: weak (its file's ``weak`` list: sets above 2399 too few held out to check it).
SAMPLE = ANALYSED.parent.parent / "analysed" / "lichess-rapid-analysed-first2000.ndjson.zst"
WEAK_SETS = "the model is weak here: too few held-out sets above 2399 to check the model"
OUTSIDE = "outside the range the model was fitted on (804–2513)"


def _wide(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """:func:`_cli` on a 200-column terminal (a table row on one line)."""
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands", "--db", str(db), *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})


@pytest.fixture(scope="module")
def strong_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("strong") / "s.db"
    with Store(str(path)) as store:
        for user in ("zarubello", "han80"):
            import_file(SAMPLE, store=store, user=user)
    return path


def test_every_level_in_json_carries_the_note_the_screens_show(strong_db: Path,
                                                                tmp_path: Path) -> None:
    """Issue 33 item 5: a level where the model is weak says so in ``--json`` too (it had no
    note: only the text and the dashboard said it)."""
    data = api.strength("zarubello", perf="rapid", db=str(strong_db)).to_json()
    assert [(m["month"], m["games"], m["level"]["estimate"], m["level"]["note"])
            for m in data["months"]] == [("2022-06", 1, 1629, None),
                                         ("2022-08", 2, 2410, WEAK_SETS)]
    assert data["recent"]["level"]["note"] is None  # 2265: neither
    blitz = tmp_path / "demo.db"
    api.import_file(api.demo_file(api.DEMO_ANALYSED_FILE), db=blitz, user="indexinator")
    report = api.strength("indexinator", db=blitz, perf="blitz")
    borrows = ("blitz scale fitted on 668 player-games; the feature weights (per game and per "
               "set), the game-to-game correlation of a player's games and the set prior's "
               "shape are the rapid fit's")
    assert report.note == report.shared == borrows
    games = {g["id"]: g["level"]["note"] for g in report.to_json()["games"]}
    assert games["nxLrvJ2k"] == borrows  # 1749: no weak band of the blitz model
    assert games["r3h9SiLI"] == borrows  # every blitz level says what it borrows
    assert report.to_json()["recent"]["level"]["note"] == borrows
    one = api.strength_game_json(api.strength_game("nxLrvJ2k", db=blitz))
    assert one["games"][0]["level"]["note"] == games["nxLrvJ2k"]


def test_the_cli_says_each_levels_note_beside_it(strong_db: Path, tmp_path: Path) -> None:
    """The months' table says where a month's level falls where the model is weak, and
    ``--game`` says each side's level note (the dashboard's game page did; the CLI said
    neither)."""
    months = _wide(strong_db, "strength", "zarubello")
    assert months.returncode == 0, months.stderr
    row = next(line for line in months.stdout.splitlines() if line.strip().startswith("2022-08"))
    assert "2410 (2136–2806)" in row and WEAK_SETS in row
    june = next(line for line in months.stdout.splitlines()
                if line.strip().startswith("2022-06"))
    assert "1629 (1325–2381)" in june and "weak" not in june
    # on the FIDE scale with its range
    assert "1993 (1845–2344)" in row and "1572 (1407–1977)" in june
    blitz = tmp_path / "demo.db"
    api.import_file(api.demo_file(api.DEMO_ANALYSED_FILE), db=blitz, user="indexinator")
    game = _wide(blitz, "strength", "--game", "nxLrvJ2k")
    assert game.returncode == 0, game.stderr
    lines = game.stdout.splitlines()
    assert lines[1].startswith("white indexinator (1425)") and "1749 (1283–2597)" in lines[1]
    assert lines[2].strip() == (
        "white's level: blitz scale fitted on 668 player-games; the feature weights (per game "
        "and per set), the game-to-game correlation of a player's games and the set prior's "
        "shape are the rapid fit's")
    assert lines[3].startswith("black BrubruNono (1391)") and lines[4].strip().startswith(
        "black's level: blitz scale fitted on 668")


def test_a_set_of_2_to_4_games_is_not_said_to_be_read_by_the_set_fit(strong_db: Path) -> None:
    """Sets of fewer games than the set fit's 5 are read from their games' scores averaged:
    the CLI said "by a fit of their own" of them too."""
    report = api.strength("han80", perf="rapid", db=str(strong_db))
    assert report.set_games == 5 and report.recent.games == 4
    assert report.recent.level is not None and report.recent.level.estimate == 2448
    assert report.recent_apart() is not None
    done = _wide(strong_db, "strength", "han80")
    assert done.returncode == 0, done.stderr
    words = " ".join(done.stdout.split())
    assert "by a fit of their own" not in words
    assert (f"(games read together, their scores averaged and read as one: not the mean of the "
            f"single games' levels ({report.recent_apart()})") in words
    assert f"last 4 games together: 2448 (2225–2760) ({WEAK_SETS})" in words


def test_the_cli_says_when_the_recent_level_reads_uncalibrated_evals(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game analysed at 2,000 nodes (no calibration covers it) among the last games: the
    line under their level says so, as the group table's cell does (", uncalibrated evals")."""
    from rich.console import Console

    from tests.test_strength_saved import _engine_evals, _games_without_evals
    from tracker.cli import strength as cli_strength
    from tracker.core.records import Analysis
    from tracker.store.analysis import write_engine_analysis

    path = tmp_path / "raw.db"
    with Store(str(path)) as store:
        import_file(api.demo_file(api.DEMO_ANALYSED_FILE), store=store, user="indexinator")
        ((pk, _, raw_moves),) = _games_without_evals(store)
        assert write_engine_analysis(store, pk, Analysis(
            _engine_evals(len(raw_moves.split()), 30), "engine", "Stockfish", "15.1", 2_000))
    report = api.strength("indexinator", db=path, perf="blitz")
    terminal = Console(width=200, record=True, highlight=False, soft_wrap=True)
    monkeypatch.setattr(cli_strength, "out", terminal)
    cli_strength._print_player(report, 0)
    lines = terminal.export_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("last 10 games together: "))
    assert lines[at + 1] == ("(1 of these 10 games analysed at a budget no engine calibration "
                             "covers: they read higher than Lichess's evals would)")


def test_a_borrowed_models_levels_say_the_scale_they_are_on(tmp_path: Path) -> None:
    """Correspondence borrows the classical model: its levels are on the Lichess classical
    scale, and the header said "levels on the Lichess correspondence scale" (five of reda46's
    games relabelled as correspondence)."""
    lines = [json.loads(line) for line in ANALYSED.read_text().splitlines()][:5]
    for game in lines:
        game["speed"] = game["perf"] = "correspondence"
    path = tmp_path / "corr.ndjson"
    path.write_text("".join(json.dumps(g) + "\n" for g in lines))
    db = tmp_path / "c.db"
    api.import_file(path, db=db, user="reda46")
    report = api.strength("reda46", db=db, perf="correspondence")
    assert (report.model, report.scale) == ("level-classical-5", "classical")
    done = _wide(db, "strength", "reda46", "--perf", "correspondence")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("reda46 — correspondence: 5 analysed games; levels on the "
                                  "Lichess classical scale, 10–90 % range, model "
                                  "level-classical-5\nnote: the classical model applied to "
                                  "correspondence: no correspondence model yet; classical scale "
                                  "fitted on 143 player-games;")
