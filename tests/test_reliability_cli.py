"""CLI reliability: names printed literally (no terminal or markup injection), token errors
before any request, ``--db`` that never creates a database where none was meant, SIGTERM
handled like Ctrl+C."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import INDEXINATOR
from tests.lichess_server import LichessServer, ndjson_lines
from tracker import api
from tracker.cli.commands import visible
from tracker.core.errors import Terminated
from tracker.importing import interrupts_deferred
from tracker.sources.lichess import TokenError
from tracker.store.db import DatabaseError

LINES = ndjson_lines(INDEXINATOR)


def cli(*args: str, **kw: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands",
                           *args], capture_output=True,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=120, **kw)  # type: ignore[call-overload]


# -- 10: terminal and markup injection -----------------------------------------------------------

#: Recolours the terminal, sets its title, rings the bell.
ESC_NAME = "Evil\x1b[31mRed\x1b]0;pwned title\x07"
LINK_NAME = "[link=https://evil.test]me[/link]"


def _pgn_game(n: int, white: str, black: str) -> str:
    return (
        f'[Event "Rated Blitz game"]\n[Site "https://lichess.org/evil{n:04d}"]\n'
        f'[White "{white}"]\n[Black "{black}"]\n[Result "1-0"]\n'
        f'[UTCDate "2024.01.{n + 1:02d}"]\n[UTCTime "12:00:00"]\n'
        f'[WhiteElo "1500"]\n[BlackElo "1500"]\n[WhiteRatingDiff "+6"]\n'
        f'[BlackRatingDiff "-6"]\n[TimeControl "180+0"]\n\n'
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0\n\n"
    )


def test_names_from_a_file_are_printed_escaped_everywhere(tmp_path: Path) -> None:
    pgn = tmp_path / "evil.pgn"
    pgn.write_text("".join(_pgn_game(i, ESC_NAME if i % 2 else LINK_NAME,
                                     LINK_NAME if i % 2 else ESC_NAME) for i in range(8)))
    db = str(tmp_path / "t.db")
    outputs = []
    for args in (["import-file", str(pgn), "--user", ESC_NAME, "--user", LINK_NAME],
                 ["players"],
                 ["replay", ESC_NAME.lower(), "--perf", "blitz"],
                 ["replay", LINK_NAME.lower(), "--perf", "blitz"],
                 ["settings", ESC_NAME.lower()],
                 ["replay", "nobody\x1b[2J", "--perf", "blitz"]):
        done = cli("--db", db, *args)
        outputs.append(done.stdout + done.stderr)
        assert b"\x1b" not in done.stdout + done.stderr, args
        assert b"\x07" not in done.stdout + done.stderr, args
    joined = b"\n".join(outputs).decode()
    assert "Evil\\x1b[31mRed\\x1b]0;pwned title\\x07" in joined  # visible, not acted on
    assert "[link=https://evil.test]me[/link]" in joined  # literal, not a hyperlink
    assert "Evil\\x1b[31mRed" in outputs[1].decode()  # the players table
    assert "[link=https://evil.test]me[/link]" in outputs[1].decode()


def test_visible_escapes_controls_and_bidi_but_keeps_letters() -> None:
    assert visible("a\x1b[1mb\x9b\u202ec\r\nd") == "a\\x1b[1mb\\x9b\\u202ec\\r\\nd"
    assert visible("ádám_pawn — Ünal") == "ádám_pawn — Ünal"


# -- 12: token errors before any request ------------------------------------------------------

@pytest.fixture
def lichess() -> Iterator[LichessServer]:
    with LichessServer() as server:
        server.add_user("indexinator", LINES[:5])
        yield server


@pytest.mark.parametrize(("token", "expected"), [
    ("lip_abc\ndef", "the token has a line break"),
    ("lip_abc\r\n", None),  # a line end around it is no line break in it
    ("lip_ab c", "characters a token cannot have"),
    ("lip_äbc", "characters a token cannot have"),
    ("lip_\x1babc", "characters a token cannot have"),
])
def test_a_token_that_cannot_be_one_is_refused_before_any_request(
        lichess: LichessServer, tmp_path: Path, token: str, expected: str | None) -> None:
    db = tmp_path / "t.db"
    if expected is None:
        assert api.import_user("indexinator", db=db, base_url=lichess.url, token=token).new == 5
        return
    with pytest.raises(TokenError, match=expected) as info:
        api.import_user("indexinator", db=db, base_url=lichess.url, token=token)
    assert token.strip() not in str(info.value)
    assert lichess.requests == []  # refused before any request
    assert not db.exists()


def test_a_two_line_token_file_and_a_bad_environment_token_are_one_line(
        lichess: LichessServer, tmp_path: Path) -> None:
    token_file = tmp_path / "token.txt"
    token_file.write_text("lip_firstsecret\nlip_secondsecret\n")
    done = cli("--db", str(tmp_path / "t.db"), "import", "indexinator", "--base-url",
               lichess.url, "--token-file", str(token_file))
    assert done.returncode == 2
    assert done.stderr.decode().startswith("error: the token has a line break")
    assert done.stderr.count(b"\n") == 1
    assert b"secret" not in done.stdout + done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "tracker.cli.commands", "--db", str(tmp_path / "t.db"), "import",
         "indexinator", "--base-url", lichess.url], capture_output=True, timeout=120,
        env={**os.environ, "LICHESS_TOKEN": "lip_ünicodesecret"})
    assert done.returncode == 2
    assert b"characters a token cannot have" in done.stderr
    assert b"secret" not in done.stdout + done.stderr
    assert lichess.requests == []


# -- 14: --db for commands that read and commands that write -----------------------------------

@pytest.mark.parametrize("command", [["players"], ["replay", "indexinator", "--perf", "blitz"],
                                     ["settings", "indexinator"]])
def test_reading_commands_refuse_a_database_that_does_not_exist(
        tmp_path: Path, command: list[str]) -> None:
    for db in (tmp_path / "missing.db", tmp_path / "no" / "such" / "dir" / "x.db"):
        done = cli("--db", str(db), *command)
        assert done.returncode == 1, done.stderr
        assert done.stderr.decode() == (
            f"error: no database at {db}: import games first (tracker import USERNAME, or "
            "tracker import-file FILE)\n")
        assert not db.exists() and not (tmp_path / "no").exists()


def test_imports_create_the_file_but_not_a_missing_folder(tmp_path: Path) -> None:
    db = tmp_path / "no" / "dir" / "x.db"
    done = cli("--db", str(db), "import-file", str(INDEXINATOR))
    assert done.returncode == 1
    assert done.stderr.decode() == (f"error: the folder {db.parent} does not exist: create "
                                    "it, or give the database another place with --db\n")
    assert not (tmp_path / "no").exists()
    with pytest.raises(DatabaseError, match="does not exist"):
        api.dashboard(db=db, port=1)
    with pytest.raises(DatabaseError, match="does not exist"):
        api.import_user("indexinator", db=db, base_url="http://127.0.0.1:9")
    fresh = tmp_path / "fresh.db"
    assert api.import_file(INDEXINATOR, db=fresh).new == 2907
    assert [p.id for p in api.players(db=fresh)] == ["indexinator"]


def test_the_default_location_is_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    monkeypatch.delenv("TRACKER_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    with pytest.raises(DatabaseError, match="no database at"):
        api.players()
    assert api.import_file(INDEXINATOR).new == 2907
    assert (tmp_path / "data" / "tracker" / "tracker.db").exists()
    assert api.players()[0].games == 2907


# -- 11: SIGTERM like Ctrl+C ---------------------------------------------------------------------

def test_sigterm_during_a_batch_waits_for_it_then_raises_terminated() -> None:
    previous = signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(Terminated()))
    try:
        done = []
        with pytest.raises(Terminated), interrupts_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            done.append("the batch")  # not cut short
        assert done == ["the batch"]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_sigterm_stops_an_import_as_partial_with_its_summary_and_exit_143(
        tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    with LichessServer(throttle=400) as server:  # ~7 s for the 2,907 games
        server.add_user("indexinator", LINES)
        proc = subprocess.Popen(
            [sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "import", "indexinator",
             "--base-url", server.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"})
        deadline = time.monotonic() + 60
        while not _games(db):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    lines = err.decode().splitlines()
    assert "— partial: stopped (SIGTERM); run the import again to resume" in lines[0]
    assert lines[1].startswith("terminated: every finished batch is kept")
    with sqlite3.connect(db) as con:
        status, new, read = con.execute(
            "SELECT status, new, read FROM import_runs").fetchone()
        stored = con.execute("SELECT count(*) FROM games").fetchone()[0]
    assert status == "partial"
    assert 0 < new == stored == read < 2907


def _games(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as con:
            return int(con.execute("SELECT count(*) FROM games").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def _start_api_import(db: Path, server: LichessServer) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "import", "indexinator",
         "--base-url", server.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"})
    deadline = time.monotonic() + 60
    while not _games(db):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.1)
    return proc


def test_a_killed_import_is_shown_interrupted_with_the_counts_it_stored(tmp_path: Path
                                                                       ) -> None:
    db = tmp_path / "t.db"
    with LichessServer(throttle=400) as server:
        server.add_user("indexinator", LINES)
        proc = _start_api_import(db, server)
        time.sleep(0.5)
        proc.kill()  # kill -9: no handler runs
        proc.communicate(timeout=30)
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT status FROM import_runs").fetchone()[0] == "running"
    done = cli("--db", str(db), "runs", "--json")
    assert done.returncode == 0, done.stderr
    import json
    (run,) = json.loads(done.stdout)
    with sqlite3.connect(db) as con:
        stored = con.execute("SELECT count(*) FROM games").fetchone()[0]
    assert run["status"] == "interrupted"
    assert "ended without finishing the run" in run["message"]
    assert 0 < run["new"] == stored == run["read"] < 2907  # counts as stored, batch by batch
    table = cli("--db", str(db), "runs")
    assert b"interrupted" in table.stdout


def test_the_next_import_marks_a_dead_run_interrupted(tmp_path: Path) -> None:
    from tracker.store.db import Store

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    db = tmp_path / "t.db"
    with Store(str(db)) as store:
        dead = store.start_run("file", "x.pgn")
        store.update_run(dead, message=f"running in process {gone.pid} on "
                                       f"{__import__('socket').gethostname()}")
        other = store.start_run("file", "y.pgn")
        store.update_run(other, message="running in process 1 on some-other-machine")
    api.import_file(INDEXINATOR, db=db)
    runs = {r.id: r for r in api.runs(db=db)}
    assert runs[dead].status == "interrupted"
    assert runs[other].status == "running"  # another machine's process cannot be checked
    assert [r.status for r in api.runs(db=db, limit=1)] == ["complete"]
