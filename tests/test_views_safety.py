"""The dashboard's views on data they cannot trust (issue 19, items 7, 9, 10, 12): a write the
import runs did not record still shows, a broken stored game is one line, a name from a file
is text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import INDEXINATOR
from tracker.sources.ndjson import record_from_json
from tracker.store.db import Store
from tracker.store.games import write_games

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
    query = {"player": "indexinator", "perf": "blitz"}
    before = metrics(open_app(db, monkeypatch, query))
    lines = [ln for ln in INDEXINATOR.read_text().splitlines() if '"blitz"' in ln]
    with Store(str(db)) as store:
        from tracker.store.runs import data_version
        version = data_version(store)
        counts = write_games(store, [record_from_json(json.loads(flipped(ln)), raw=flipped(ln))
                                     for ln in lines])
        assert counts.updated > 1000 and counts.new == 0
        assert data_version(store)[:2] == version[:2]  # what the old key saw: nothing new
        from tracker import api
        cli_now = api.replay("indexinator", "blitz", db=store).current_rating
    after = metrics(open_app(db, monkeypatch, query))
    assert after["Games counted"] == before["Games counted"]
    assert cli_now is not None and before["FIDE-style rating now"] == "unrated"
    assert after["FIDE-style rating now"] == str(cli_now)
