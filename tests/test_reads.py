"""What a player reads (issue 30): whole numbers where FIDE prints them, words that say what
happened, one rule for exit codes, and CSV exports."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tracker import api

#: 0 done; 1 nothing done or only part of it; 2 a usage error.
DONE, NOTHING, USAGE = 0, 1, 2


def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands", *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **(env or {})})


# 1. Whole numbers where FIDE prints them.

def test_whole_rating_rounds_a_half_up_as_fide_rounds_a_rating() -> None:
    assert api.whole_rating(Fraction(3099, 2)) == 1550
    assert api.whole_rating(Decimal("1605.5")) == 1606
    assert api.whole_rating(Fraction(-189, 2)) == -94  # a gap: the shown rating minus the real
    assert api.whole_rating(1499) == 1499
    assert api.whole_rating(None) is None
    assert api.rating_text(Fraction(3099, 2)) == "1550"
    assert api.rating_text(None, "unrated") == "unrated"


def test_replay_shows_whole_ratings_says_the_rounding_once_and_json_keeps_the_half(
        indexinator_db: Path) -> None:
    text = run("--db", str(indexinator_db), "replay", "indexinator", "--perf", "blitz")
    assert text.returncode == DONE, text.stderr
    assert text.stdout.count(api.HALF_NOTE) == 1
    may = next(line for line in text.stdout.splitlines() if line.startswith("│ 2023-05")
               or line.lstrip().startswith("2023-05"))
    assert "1606" in may and "1605.5" not in may
    # No rating cell anywhere ends in .5 (changes are hundredths: "-34.50", never "NNNN.5").
    assert not re.search(r"\b1[0-9]{3}\.5\b", text.stdout.replace(api.HALF_NOTE, ""))
    data = json.loads(run("--db", str(indexinator_db), "replay", "indexinator", "--perf",
                          "blitz", "--json").stdout)
    row = next(p for p in data["periods"] if p["period"] == "2023-05")
    assert row["rating_after"] == 1605.5  # exact in --json


def test_the_initial_rating_note_is_whole(indexinator_db: Path) -> None:
    report = api.replay("indexinator", "blitz", db=indexinator_db)
    notes = [row.note for row in report.periods if "initial rating" in row.note]
    assert notes and all(not re.search(r"\d\.5", n) for n in notes)


# 3. A rating under the floor is not published: calc says so, as replay does.

def test_calc_says_a_rating_under_1400_is_not_published() -> None:
    low = run("calc", "3000:1", "--rating", "1000")
    assert low.returncode == DONE, low.stderr
    assert "new rating 1018" in low.stdout
    assert "below 1400, FIDE's floor: not published" in low.stdout
    high = run("calc", "1700:1", "--rating", "1500")
    assert high.returncode == DONE and "not published" not in high.stdout
    assert api.floor_note(1399) is not None and api.floor_note(1400) is None


# 5. Plurals: "1 blunder", never "1 blunders".

def test_plural_says_one_in_the_singular() -> None:
    assert [api.plural(n, "game") for n in (0, 1, 2)] == ["0 games", "1 game", "2 games"]
    assert api.plural(1, "inaccuracy") == "1 inaccuracy"
    assert api.plural(3, "inaccuracy") == "3 inaccuracies"
    assert api.plural(1, "blunder") == "1 blunder"
    assert api.plural(2907, "blitz game", ",") == "2,907 blitz games"


def test_a_one_game_replay_says_1_game(tmp_path: Path) -> None:
    from tests.conftest import SINGLE

    db = tmp_path / "one.db"
    done = run("--db", str(db), "import-file", str(SINGLE))
    assert done.returncode == DONE, done.stderr
    player = api.players(db=db)[0]
    perf = player.perfs[0].perf
    replay = run("--db", str(db), "replay", player.username, "--perf", perf)
    assert replay.returncode == DONE, replay.stderr
    assert "1 game counted of 1." in replay.stdout or "0 games counted of 1." in replay.stdout
    assert "1 games" not in replay.stdout


# 13. Nothing to do is one rule: exit 1 and say why, for analyse as for replay.

def test_analyse_of_a_perf_without_games_exits_1_like_replay(indexinator_db: Path) -> None:
    db = str(indexinator_db)
    replay = run("--db", db, "replay", "indexinator", "--perf", "correspondence")
    analyse = run("--db", db, "analyse", "indexinator", "--perf", "correspondence")
    assert replay.returncode == analyse.returncode == NOTHING
    assert analyse.stderr.startswith("error: indexinator has no correspondence games; perfs "
                                     "with games: blitz (")
    assert "complete" not in analyse.stdout + analyse.stderr
    # A --since after the last game: nothing asked, nothing done, exit 1 with the line.
    later = run("--db", db, "analyse", "indexinator", "--perf", "blitz", "--since",
                "2030-01-01")
    assert later.returncode == NOTHING, later.stderr
    assert "0 games" in later.stdout


# 15. A game id that is no game says so, not "no evals stored … run tracker analyse".

def test_strength_of_a_game_that_does_not_exist_says_no_such_game(indexinator_db: Path) -> None:
    done = run("--db", str(indexinator_db), "strength", "--game", "nosuchid")
    assert done.returncode == NOTHING
    assert done.stderr.startswith("error: no game 'nosuchid' in the database")
    assert "analyse" not in done.stderr
    # A game that is there but has no evals still says how to get them.
    there = run("--db", str(indexinator_db), "strength", "--game", "xQvHcEyS")
    assert there.returncode == NOTHING
    assert there.stderr.startswith("error: no evals stored for the game 'xQvHcEyS'")


# 16. A typo'd name of a tracked player: "did you mean indexinator?".

@pytest.mark.parametrize("typo", ["indexinatr", "Indexinater", "idnexinator"])
def test_a_typo_of_a_tracked_player_gets_did_you_mean(indexinator_db: Path, typo: str) -> None:
    done = run("--db", str(indexinator_db), "replay", typo, "--perf", "blitz")
    assert done.returncode == NOTHING
    assert done.stderr == (f"error: no games of '{typo}' in the database: did you mean "
                           f"indexinator? Else import them first (tracker import {typo}, or "
                           f"tracker import-file FILE --user {typo})\n")


def test_a_name_far_from_every_player_gets_no_guess(indexinator_db: Path) -> None:
    done = run("--db", str(indexinator_db), "replay", "magnuscarlsen", "--perf", "blitz")
    assert done.returncode == NOTHING
    assert "did you mean" not in done.stderr and "import them first" in done.stderr


# 17. Usage lines, the import's "into" line, sentences on the Overview.

def test_group_add_usage_has_one_ellipsis() -> None:
    for command in (("group", "add"), ("group", "remove")):
        usage = run(*command, "--help").stdout.splitlines()[0]
        assert "USER..." in usage and "…" not in usage and "...." not in usage


def test_the_into_line_comes_before_the_summary_when_piped(tmp_path: Path) -> None:
    from tests.conftest import SINGLE

    db = tmp_path / "piped.db"
    merged = subprocess.run(
        [sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "import-file",
         str(SINGLE)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
        env={**os.environ, "NO_COLOR": "1"})
    assert merged.returncode == DONE
    lines = merged.stdout.splitlines()
    assert lines[0] == f"into {db}" and lines[1].startswith("Lance5500: read 1, new 1")
    assert len(lines) == 2


def test_a_sentence_after_a_full_stop_starts_upper_case() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "dashboard"))
    import ui

    assert ui.sentence("the rapid model applied to blitz: no blitz model yet") == (
        "The rapid model applied to blitz: no blitz model yet.")
    assert ui.sentence("Done.") == "Done." and ui.sentence("  ") == ""


@pytest.mark.parametrize("scale", ["all", "lichess"])
def test_no_sentence_on_the_overview_starts_lower_case(indexinator_db: Path, scale: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_dashboard import assert_clean, open_app, texts

    at = open_app(indexinator_db, monkeypatch, None,
                  {"player": "indexinator", "perf": "blitz", "scale": scale})
    assert_clean(at)
    text = texts(at)
    assert "FIDE-style" in text or "Lichess" in text
    # "e.g. x" and "vs. x" are not sentence ends; a version ("fide-2025-10.") neither.
    found = [m.group() for m in re.finditer(r"\w{3,}[.!?] [a-z]\w*", text)]
    assert found == []


# 12. A 429 is said while it is waited out, and the summary says it happened.

def test_a_429_is_said_before_the_wait_and_in_the_summary(tmp_path: Path) -> None:
    from tests.conftest import INDEXINATOR
    from tests.lichess_server import LichessServer, ndjson_lines

    told: list[str] = []
    with LichessServer() as server:
        server.add_user("indexinator", ndjson_lines(INDEXINATOR))
        server.fail_429()
        summary = api.import_user("indexinator", db=tmp_path / "waits.db",
                                  base_url=server.url, retry_wait_429=0.05, retry_wait=0.01,
                                  on_wait=told.append)
    assert summary.status == "complete" and summary.new == 2907
    assert told == ["Lichess asked to wait (HTTP 429, too many requests): resuming the "
                    "download again in 0 s"]
    assert "Lichess asked to wait 1 time (HTTP 429, too many requests): 0 s waited in all" in (
        summary.warnings)


def test_without_a_bar_the_wait_is_one_line_on_stderr(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    from tracker.cli import commands as cli

    _, bar = cli._progress_bar("importing x", unit="games")  # stderr is no terminal here
    bar(10, 10, 100)  # no bar: nothing drawn
    bar.wait("Lichess asked to wait (HTTP 429, too many requests): resuming the download "
             "again in 60 s")
    assert capsys.readouterr().err == ("Lichess asked to wait (HTTP 429, too many requests): "
                                       "resuming the download again in 60 s\n")


# 11. One truth about the scale picker's default: the models' median (all), everywhere.

def test_the_readme_and_the_code_agree_on_the_default_scale() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    flat = " ".join(readme.split())
    assert "Lichess's numbers (the default)" not in flat
    dashboard = flat[flat.index("sidebar's **scale** picker"):][:400]
    assert "median and band (the default, `&scale=all` in the URL)" in dashboard
    assert api.default_scale("blitz") == "all" and api.default_scale("correspondence") == (
        "lichess")
    for doc in (Path(__file__).resolve().parent.parent / "docs").glob("*.md"):
        text = " ".join(doc.read_text(encoding="utf-8").split())
        assert "Lichess's numbers (the default)" not in text, doc.name


# 7-9. The pages (AppTest; tests/test_reads_browser.py sees them drawn at 1280 and 1920 px).

def test_periods_are_newest_first_in_one_table_with_the_notes_under_it(
        indexinator_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_dashboard import assert_clean, open_app

    at = open_app(indexinator_db, monkeypatch, "views/periods.py",
                  {"player": "indexinator", "perf": "blitz"})
    assert_clean(at)
    report = api.replay("indexinator", "blitz", db=indexinator_db)
    table = at.dataframe[0].value
    assert list(table["period"]) == [p.period for p in reversed(report.periods)]
    assert table["period"].iloc[0] == "2025-10"
    notes = at.expander[0]
    assert "newest first" in notes.label
    listed = notes.markdown[0].value
    assert listed.index("**2025-10**") < listed.index("**2023-04**")
    assert report.periods[0].note.split(" (")[0] in listed


def test_games_say_expected_not_pd(indexinator_db: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_dashboard import assert_clean, open_app

    at = open_app(indexinator_db, monkeypatch, "views/games.py",
                  {"player": "indexinator", "perf": "blitz"})
    assert_clean(at)
    grid = at.dataframe[0]
    labels = {c: json.loads(grid.proto.columns)[c].get("label") for c in ("expected", "delta")}
    assert labels == {"expected": "Expected", "delta": "ΔR"}
    order = list(grid.proto.column_order)
    assert order.index("expected") < order.index("reason")  # shown before the reasons
    assert "PD and" not in " ".join(c.value for c in at.caption)


def test_settings_grey_out_the_start_rating_while_unrated(
        indexinator_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from tests.test_dashboard import assert_clean, open_app

    db = Path(shutil.copy(indexinator_db, tmp_path / "settings.db"))
    at = open_app(db, monkeypatch, "views/settings.py", {"player": "indexinator"})
    assert_clean(at)
    assert at.radio(key="set_start_indexinator").value == "unrated"
    assert at.number_input(key="set_rating_indexinator").disabled
    assert at.radio(key="set_start_scale_indexinator").disabled
    at.radio(key="set_start_indexinator").set_value("rating").run()
    assert not at.number_input(key="set_rating_indexinator").disabled
    assert not at.radio(key="set_start_scale_indexinator").disabled


# 20. Export: replay --csv, a month's games as CSV, download buttons on Periods and Games.

def test_replay_csv_is_the_periods_csv(indexinator_db: Path) -> None:
    import csv
    import io

    done = run("--db", str(indexinator_db), "replay", "indexinator", "--perf", "blitz", "--csv")
    assert done.returncode == DONE, done.stderr
    report = api.replay("indexinator", "blitz", db=indexinator_db)
    assert done.stdout == api.periods_csv(report)
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert len(rows) == len(report.periods) == 31
    may = next(r for r in rows if r["period"] == "2023-05")
    assert (may["rating_after"], may["change"]) == ("1605.5", "-34.50")  # exact, as --json


def test_a_months_games_as_csv_and_json(indexinator_db: Path) -> None:
    import csv
    import io

    db = str(indexinator_db)
    done = run("--db", db, "replay", "indexinator", "--perf", "blitz", "--period", "2025-10",
               "--csv")
    assert done.returncode == DONE, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert tuple(rows[0]) == api.GAME_CSV_KEYS
    assert len(rows) == 14  # indexinator's 14 blitz games of 2025-10, all counted
    first = rows[0]
    assert first["date"] == "2025-10-02T06:14:12.139000Z"
    assert (first["opponent"], first["opponent_rating"], first["result"]) == (
        "samthegambler", "1483", "0")
    assert (first["expected"], first["delta"], first["opponent_on_scale"]) == (
        "0.41", "-0.41", "1563")
    # the default scale is the models' median for the periods; a game's figures are one
    # model's, and the file says which
    assert {r["scale"] for r in rows} == {"lebowitz"}
    assert first["url"] == "https://lichess.org/2pNfPdUg"
    data = json.loads(run("--db", db, "replay", "indexinator", "--perf", "blitz", "--period",
                          "2025-10", "--json").stdout)
    assert [g["opponent"] for g in data] == [r["opponent"] for r in rows]
    assert {g["scale"] for g in data} == {"lebowitz"}
    missing = run("--db", db, "replay", "indexinator", "--perf", "blitz", "--period", "2019-10",
                  "--csv")
    assert missing.returncode == USAGE
    assert missing.stderr == ("error: no blitz games of indexinator in '2019-10': months with "
                              "games 2023-04 to 2025-10\n")
    # --period alone: the month's games as a table in the terminal, the figures of the CSV
    alone = run("--db", db, "replay", "indexinator", "--perf", "blitz", "--period", "2025-10")
    assert alone.returncode == DONE, alone.stderr
    lines = alone.stdout.splitlines()
    assert lines[0] == ("indexinator — blitz, 2025-10: 14 games; expected (PD) and ΔR on the "
                        "lebowitz scale (the first model's; the month's rating change, without "
                        "--period, is the models' median)")
    first = next(line.split() for line in lines if line.lstrip().startswith("10-02"))
    assert first == ["10-02", "white", "samthegambler", "1483", "1563", "0", "0.41", "-0.41",
                     "yes"]
    both = run("--db", db, "replay", "indexinator", "--perf", "blitz", "--csv", "--json")
    assert both.returncode == USAGE


def test_the_games_page_has_a_csv_download(indexinator_db: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_dashboard import assert_clean, open_app

    at = open_app(indexinator_db, monkeypatch, "views/games.py",
                  {"player": "indexinator", "perf": "blitz"})
    assert_clean(at)
    buttons = at.get("download_button")
    assert [b.proto.label for b in buttons] == ["Download the month's games (CSV)"]
    periods = open_app(indexinator_db, monkeypatch, "views/periods.py",
                       {"player": "indexinator", "perf": "blitz"})
    assert "Download CSV" in [b.proto.label for b in periods.get("download_button")]


def test_the_calculator_page_says_a_rating_under_1400_is_not_published(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_dashboard import assert_clean, open_app

    at = open_app(tmp_path / "calc.db", monkeypatch, "views/calculator.py")
    assert_clean(at)
    at.number_input(key="calc_rating").set_value(1000)
    at.number_input(key="calc_opp_0").set_value(3000).run()
    assert_clean(at)
    assert {m.label: m.value for m in at.metric}["New rating"] == "1018"
    assert any("Below 1400, FIDE's floor: not published" in c.value for c in at.caption)
    at.number_input(key="calc_rating").set_value(1500).run()
    assert not any("FIDE's floor" in c.value for c in at.caption)


def test_did_you_mean_on_sqlite_and_postgresql(any_store: Any) -> None:
    from tracker.store import queries

    any_store.ensure_player("indexinator", "Indexinator")
    any_store.ensure_player("cmrade", "cmrade")
    from tracker.store.players import close_player

    assert close_player(any_store, "indexinatr") == "Indexinator"
    assert close_player(any_store, "CMRAD") == "cmrade"
    assert close_player(any_store, "magnuscarlsen") is None
    with pytest.raises(api.TrackerError, match="did you mean Indexinator\\?"):
        queries.resolve_player(any_store, "indexinater")


def test_replay_without_perf_takes_the_players_main_perf(indexinator_db: Path,
                                                        tmp_path: Path) -> None:
    """A new user's ``tracker replay indexinator``: the perf with the most of his games (2,891
    blitz of 2,907), as ``strength`` picks one; the API twin the same. Variants only: one line."""
    db = str(indexinator_db)
    done = run("--db", db, "replay", "indexinator")
    assert done.returncode == DONE, done.stderr
    assert done.stdout.startswith("indexinator — blitz: FIDE-style replay")
    assert api.main_perf("indexinator", db=db) == "blitz"
    assert api.replay("indexinator", db=db).perf == "blitz"
    from tests.conftest import INDEXINATOR

    variant = tmp_path / "variant.ndjson"
    game = json.loads(INDEXINATOR.read_text(encoding="utf-8").splitlines()[0])
    game.update(id="varnt001", variant="chess960", perf="chess960", speed="blitz")
    variant.write_text(json.dumps(game) + "\n", encoding="utf-8")
    other = tmp_path / "variant.db"
    api.import_file(variant, db=other, user="indexinator")
    with pytest.raises(api.PerfError, match="has games in variants only"):
        api.main_perf("indexinator", db=other)
