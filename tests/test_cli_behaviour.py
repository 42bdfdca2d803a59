"""The CLI as people meet it: one exit-code rule for every command, ``--db`` before or after
the command, help without library internals, messages that say what happened."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CMRADE, INDEXINATOR
from tracker.cli import commands as cli

#: 0 done; 1 nothing done or only part of it; 2 a usage error.
DONE, NOTHING, USAGE = 0, 1, 2


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands",
                           *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "100"})


@pytest.fixture(scope="module")
def cmrade_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("cli") / "cmrade.db"
    done = run("--db", str(db), "import-file", str(CMRADE), "--user", "cmrade")
    assert done.returncode == DONE, done.stderr
    return db


@pytest.fixture
def own_db(cmrade_db: Path, tmp_path: Path) -> Path:
    """A copy of the cmrade database a test may write to."""
    return Path(shutil.copy(cmrade_db, tmp_path / "own.db"))


# --- exit codes, one rule for every command ---------------------------------------------------

@pytest.mark.parametrize(("args", "code"), [
    (("import-file", str(CMRADE), "--user", "cmrade"), DONE),  # again: all unchanged
    (("import-file", str(CMRADE), "--user", "nobody"), NOTHING),  # nothing stored
    (("import-file", "no-such-file.pgn"), NOTHING),
    (("import-file",), USAGE),
    (("import-file", str(CMRADE), "--colour", "white"), USAGE),
    (("import", "cmrade", "--since", "yesterday"), USAGE),
    (("import", "cmrade", "--perf", "blits"), USAGE),
    (("players",), DONE),
    (("players", "--bogus"), USAGE),
    (("replay", "cmrade", "--perf", "bullet"), DONE),
    (("replay", "nobody", "--perf", "bullet"), NOTHING),
    (("replay", "cmrade", "--perf", "ultraBullet"), NOTHING),  # no games in that perf
    (("replay", "cmrade", "--perf", "blits"), USAGE),
    (("replay", "cmrade"), DONE),  # no --perf: the perf with the most of his games
    (("calc", "1700:1", "--rating", "1500", "--k", "20"), DONE),
    (("calc", "1700", "--rating", "1500", "--k", "20"), USAGE),
    (("calc", "1700:1", "--rating", "1500"), DONE),  # K: an established adult's (issue 20)
    (("calc", "1700:1"), USAGE),  # --rating missing
    (("--version",), DONE),
    (("replay", "cmrade", "--perf", "bullet", "--scale", "chessdojo-2024"), USAGE),
    (("settings", "cmrade"), DONE),
    (("settings", "cmrade", "--rules", "fide-1999"), USAGE),
    (("settings", "cmrade", "--start-rating", "99999"), USAGE),
    (("settings", "nobody"), NOTHING),
    (("dashboard", "--port", "http"), USAGE),
    (("dashboard", "--port", "70000"), USAGE),  # out of range: a malformed value too
    (("runs",), DONE),
    (("runs", "--limit", "-1"), USAGE),
    (("convert", "1800", "--perf", "blitz"), DONE),
    (("convert", "99999", "--perf", "blitz"), USAGE),
    (("convert", "1800", "--perf", "ultraBullet"), USAGE),
    (("no-such-command",), USAGE),
])
def test_exit_codes_follow_one_rule(own_db: Path, args: tuple[str, ...], code: int) -> None:
    done = run("--db", str(own_db), *args)
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    if code != DONE:
        assert done.stderr.strip(), "a failure says why"


@pytest.mark.parametrize(("args", "line"), [
    (("convert", "99999", "--perf", "blitz"),
     "error: a Lichess rating 99999 is out of range (100–4000)"),
    (("convert", "--perf", "blitz", "--", "-50"),
     "error: a Lichess rating -50 is out of range (100–4000)"),
    # no advice to use --scale lichess, which convert does not take
    (("convert", "1800", "--perf", "ultraBullet"),
     "error: no scale model covers ultraBullet: the models cover bullet, blitz, rapid, classical"),
    (("runs", "--limit", "-1"), "error: --limit must be 1 to 2147483647, not -1"),
    # not "no bullet games of cmrade in '2025-13'" (a new user's trial)
    (("replay", "cmrade", "--perf", "bullet", "--period", "2025-13", "--csv"),
     "error: not a month: '2025-13' (YYYY-MM)"),
    (("replay", "cmrade", "--perf", "bullet", "--period", "2025-1", "--json"),
     "error: not a month: '2025-1' (YYYY-MM)"),
    (("replay", "cmrade", "--perf", "bullet", "--period", "foo", "--csv"),
     "error: not a month: 'foo' (YYYY-MM)"),
])
def test_out_of_range_values_are_one_line(own_db: Path, args: tuple[str, ...],
                                          line: str) -> None:
    done = run("--db", str(own_db), *args)
    assert (done.returncode, done.stderr, done.stdout) == (USAGE, line + "\n", "")


def test_import_of_nothing_says_why_and_where(own_db: Path) -> None:
    done = run("--db", str(own_db), "import-file", str(CMRADE), "--user", "nobody")
    assert "no games of 'nobody'" in done.stderr
    assert f"into {own_db}" in done.stderr
    assert done.stdout.startswith("nobody: read 474, new 0") and done.stdout.count("\n") == 1


# --- --db before or after the command ---------------------------------------------------------

def test_db_is_accepted_after_the_command(own_db: Path, tmp_path: Path) -> None:
    before = run("--db", str(own_db), "players", "--json")
    after = run("players", "--json", "--db", str(own_db), cwd=tmp_path)
    after_eq = run("players", f"--db={own_db}", "--json", cwd=tmp_path)
    assert before.returncode == after.returncode == after_eq.returncode == DONE, after.stderr
    assert '"cmrade"' in before.stdout
    assert before.stdout == after.stdout == after_eq.stdout


def test_db_anywhere_moves_only_the_db_option() -> None:
    assert cli.db_anywhere(["import-file", "x.pgn", "--db", "o.db", "--user", "me"]) == [
        "--db", "o.db", "import-file", "x.pgn", "--user", "me"]
    assert cli.db_anywhere(["replay", "me", "--db=o.db", "--perf", "blitz"]) == [
        "--db=o.db", "replay", "me", "--perf", "blitz"]
    assert cli.db_anywhere(["import-file", "--", "--db"]) == ["import-file", "--", "--db"]


# --- help for people ------------------------------------------------------------------------

COMMANDS = ("import-file", "import", "players", "replay", "calc", "settings", "dashboard",
            "demo", "fide", "convert")


def test_top_level_help_lists_full_summaries() -> None:
    done = run("--help")
    assert done.returncode == DONE
    for name in COMMANDS:
        line = next(x for x in done.stdout.splitlines() if x.strip().startswith(name + " "))
        assert line.rstrip().endswith("."), line  # a whole sentence, not cut with "..."
        assert "..." not in line
    assert "Examples:" in done.stdout


@pytest.mark.parametrize("name", COMMANDS)
def test_command_help_has_no_library_internals_and_an_example(name: str) -> None:
    done = run(name, "--help")
    assert done.returncode == DONE
    text = done.stdout
    assert not re.search(r"<(str|int|list\[Path\]|bool|path)>|\{[A-Za-z.]+\}", text), text
    assert "Example" in text
    assert re.search(rf"tracker (--db \S+ )?{name}\b", text.split("Example", 1)[1]), text


def test_arguments_are_named_as_people_write_them() -> None:
    assert "Usage: tracker import-file [OPTIONS] FILE..." in run("import-file", "--help").stdout
    assert "Usage: tracker replay [OPTIONS] USERNAME" in run("replay", "--help").stdout


# --- messages --------------------------------------------------------------------------------

def test_settings_say_saved_when_they_save(own_db: Path) -> None:
    saved = run("--db", str(own_db), "settings", "cmrade", "--start-rating", "1850")
    assert saved.returncode == DONE, saved.stderr
    assert saved.stdout.startswith("saved for cmrade: start 1850")
    shown = run("--db", str(own_db), "settings", "cmrade")
    assert shown.stdout.startswith("settings for cmrade: start 1850")


def test_a_toml_file_is_not_called_json(tmp_path: Path) -> None:
    toml = tmp_path / "pyproject.toml"
    toml.write_text('[project]\nname = "x"\n\n[tool.ruff]\nline-length = 100\n')
    done = run("--db", str(tmp_path / "t.db"), "import-file", str(toml))
    assert done.returncode == NOTHING
    assert done.stderr == f"error: {toml}: not a PGN or NDJSON game file\n"


def test_calc_formula_precision_is_documented() -> None:
    text = run("calc", "--help").stdout
    assert "4 decimals" in text and "hundredths" in text


def test_the_sample_is_where_conftest_says() -> None:
    assert INDEXINATOR.is_file()


def test_a_many_player_file_without_user_tracks_nobody_and_says_how(tmp_path: Path) -> None:
    from tests.conftest import DB2013, SINGLE

    db = tmp_path / "dump.db"
    done = run("--db", str(db), "import-file", str(DB2013))
    assert done.returncode == DONE, done.stderr
    assert done.stdout.startswith("games: read 50, new 50,")
    assert "50 games of 48 players; tracked: none — use --user NAME" in done.stdout
    assert "No players yet" in run("--db", str(db), "players").stdout
    # One player's file: the player is tracked and named as Lichess writes the name.
    single = run("--db", str(db), "import-file", str(SINGLE))
    assert single.stdout.startswith("Lance5500: read 1, new 1,")


# --- a new user's first mistakes ---------------------------------------------------------------

@pytest.mark.parametrize(("url", "shown"), [
    ("foo://bar", "foo://bar"),  # before: "Can't load plugin: sqlalchemy.dialects:foo", exit 1
    ("mysql://u:S3cret@h/db", "mysql://u:***@h/db"),  # before: "No module named 'MySQLdb'"
    ("postgresql+asyncpg://u:S3cret@h/db", "postgresql+asyncpg://u:***@h/db"),
])
def test_an_unsupported_database_url_is_a_usage_error_in_our_words(url: str,
                                                                   shown: str) -> None:
    done = run("--db", url, "players")
    assert (done.returncode, done.stdout) == (USAGE, "")
    assert done.stderr == (f"error: unsupported database URL '{shown}': tracker stores in "
                           "SQLite (a file path or sqlite:///x.db) or PostgreSQL "
                           "(postgresql+psycopg://…)\n")
    assert "S3cret" not in done.stderr


def test_no_database_here_names_the_demo_db_beside_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TRACKER_DB"}
    env.update(NO_COLOR="1", XDG_DATA_HOME=str(tmp_path / "data"))
    default = tmp_path / "data" / "tracker" / "tracker.db"
    said = (f"error: no database at {default}: import games first (tracker import USERNAME, "
            "or tracker import-file FILE)")

    def players() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tracker.cli.commands", "players"],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path,
                              env=env)

    alone = players()
    assert (alone.returncode, alone.stderr) == (NOTHING, said + "\n")
    (tmp_path / "demo.db").write_bytes(b"")  # what make demo leaves in the folder
    beside = players()
    assert (beside.returncode, beside.stderr) == (
        NOTHING, said + " (a demo.db is here: --db demo.db)\n")


def test_the_demo_hint_converts_the_rating_the_replay_reports(tmp_path: Path) -> None:
    done = run("--db", "demo.db", "demo", cwd=tmp_path)
    assert done.returncode == DONE, done.stderr
    now = next(line for line in done.stdout.splitlines() if line.startswith("Now: "))
    lichess = re.search(r"; Lichess (\d+);", now)
    assert lichess is not None and lichess.group(1) == "1448", now  # his blitz rating today
    assert "tracker --db demo.db convert 1448 --perf blitz" in done.stdout  # was 1408
    # the level his 9 Lichess-analysed games show: the demo says how to read it
    assert "tracker --db demo.db strength indexinator --perf blitz" in done.stdout
    assert cli.next_commands(None, None)[-1].endswith("tracker dashboard")
    assert not any(" convert " in line for line in cli.next_commands(None, None))


def test_runs_fit_an_80_column_terminal(own_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 80 columns every header and cell was cut to "sta…", "(UT…", "202…"."""
    from rich.console import Console

    terminal = Console(width=80, record=True, highlight=False, soft_wrap=True)
    monkeypatch.setattr(cli, "out", terminal)
    monkeypatch.setattr(cli.state, "db", str(own_db))
    cli.runs_cmd(limit=20, as_json=False)
    text = terminal.export_text()
    assert "…" not in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80
    header = next(line for line in text.splitlines() if "started (UTC)" in line)
    assert header.split() == ["run", "started", "(UTC)", "status", "read", "new", "target",
                              "message"]
    row = next(line for line in text.splitlines() if "complete" in line).split()
    assert row[0] == "1" and row[3:6] == ["complete", "474", "474"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", row[1]) and re.fullmatch(r"\d\d:\d\d", row[2])
    assert "".join(text.split()).count("cmrade-2018-07_2020-11.pgn") == 1  # wrapped, whole
    assert text.rstrip().endswith("(source, updated, unchanged, skipped: widen the "
                                  "terminal, or use --json)")
