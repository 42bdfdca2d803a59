"""Small ways to crash or hang that a second look found (issue 19, item 8): a huge
``runs --limit``, a database URL whose port is no number, an upload named ``..``, SIGTERM
during ``fide link``. Each failed before its fix."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CMRADE, DB2013, INDEXINATOR_LATER, SINGLE, default_sigint
from tests.test_reliability_dashboard import PAGES, open_app, page_text
from tracker import api
from tracker.importing import import_file
from tracker.store.db import Store


def tracker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands",
                           *args], capture_output=True,
                          text=True, env={**os.environ, "NO_COLOR": "1"}, timeout=120)


def test_runs_with_a_limit_too_large_is_one_line_and_exit_2(any_store: Store,
                                                            tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    with Store(str(db)) as s:
        import_file(SINGLE, store=s)
    proc = tracker("--db", str(db), "runs", "--limit", "99999999999999999999")
    assert proc.returncode == 2  # before: an OverflowError traceback
    assert proc.stderr == ("error: --limit must be 1 to 2147483647, not "
                           "99999999999999999999\n")
    import_file(SINGLE, store=any_store)
    assert len(api.runs(db=any_store, limit=api.MAX_RUNS_LIMIT)) == 1  # the largest works


BAD_PORT = "postgresql+psycopg://u:S3cret@127.0.0.1:abc/db?password=S3cret"


def test_a_database_url_whose_port_is_no_number_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for args in (("runs",), ("import-file", str(SINGLE)), ("players",)):
        proc = tracker("--db", BAD_PORT, *args)
        assert proc.returncode == 1, args  # before: a ValueError traceback
        assert proc.stderr == ("error: cannot open database postgresql+psycopg://u:***@"
                               "127.0.0.1:abc/db?password=***: its port is not a number\n")
    at = open_app(BAD_PORT, monkeypatch)  # before: an exception on every page
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert "S3cret" not in page_text(at), page
    assert any("its port is not a number" in e.value for e in at.error)


def test_an_upload_named_dot_dot_is_imported(any_store: Store) -> None:
    assert [api.upload_name(n) for n in ("..", ".", "", "../../etc/x.pgn", "c:\\u\\a.pgn",
                                         "a\x00b.pgn", "g.pgn")] == [
        "upload", "upload", "upload", "x.pgn", "a.pgn", "upload", "g.pgn"]
    long = api.upload_name("x" * 300 + ".pgn.zst")
    assert len(long) == 100 and long.endswith("x.pgn.zst")
    summary = api.import_uploads([("..", CMRADE.read_bytes()),
                                  ("../" * 5 + "..", DB2013.read_bytes())], db=any_store)
    assert (summary.status, summary.new) == ("complete", 524)  # before: IsADirectoryError


def test_an_upload_named_dot_dot_is_imported_from_the_dashboard(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(str(tmp_path / "up.db"), monkeypatch)
    at.switch_page("views/import_.py").run()
    at.file_uploader(key="import_files").set_value(
        [("..", CMRADE.read_bytes(), "application/x-chess-pgn")])
    at.button[-1].click().run()
    assert not at.exception, [e.value for e in at.exception]  # before: IsADirectoryError
    assert any("new 474," in s.value for s in at.success), [s.value for s in at.success]


@pytest.mark.parametrize(("sig", "code", "word"), [(signal.SIGTERM, 143, "terminated"),
                                                   (signal.SIGINT, 130, "interrupted")])
def test_a_stopped_fide_link_says_so_with_its_exit_code(tmp_path: Path, sig: int, code: int,
                                                        word: str) -> None:
    db = tmp_path / "t.db"
    with Store(str(db)) as s:
        import_file(INDEXINATOR_LATER, store=s, user="indexinator")
    with socket.socket() as silent:  # a server that takes the request and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        proc = subprocess.Popen(
            [sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "fide", "link",
             "indexinator", "35009192", "--base-url",
             f"http://127.0.0.1:{silent.getsockname()[1]}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "NO_COLOR": "1"}, preexec_fn=default_sigint)
        conn, _ = silent.accept()
        time.sleep(0.5)  # the request sent, the answer awaited
        proc.send_signal(sig)
        _out, stderr = proc.communicate(timeout=60)
        conn.close()
    assert proc.returncode == code  # before: 130 for both, and not a word
    assert stderr == f"{word}: stopped before it finished\n"


@pytest.mark.parametrize("ms", [68_000_000_000_000_000_000, 6.8e19, 10**30, -(10**20),
                                253_402_300_800_000])
def test_a_timestamp_beyond_what_a_datetime_holds_is_a_value_error(ms: int | float) -> None:
    """A createdAt of 6.8e19 ms raised OSError (errno 75) from the platform's time functions,
    which the readers do not catch as bad input: it must be the ValueError they turn into a
    skipped game, as for every other bad timestamp."""
    from tracker.core.utc import ms_to_datetime

    with pytest.raises(ValueError, match="out of range"):
        ms_to_datetime(ms)
