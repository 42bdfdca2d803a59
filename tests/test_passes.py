"""A hand edit of the database needs tracker to be told (issue 19, item 15): ``tracker passes
--drop`` (``api.drop_passes``) drops the saved replay passes and moves the write counter on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.conftest import INDEXINATOR
from tracker import api
from tracker.importing import import_file
from tracker.store.db import Store
from tracker.store.queries import UnknownPlayerError
from tracker.store.snapshots import write_seq

FLIP = text("UPDATE games SET result = CASE result WHEN '1-0' THEN '0-1' WHEN '0-1' THEN '1-0' "
            "ELSE result END")


def test_a_hand_edit_shows_once_the_passes_are_dropped(any_store: Store) -> None:
    import_file(INDEXINATOR, store=any_store)
    before = api.replay("indexinator", "blitz", db=any_store)
    api.replay("indexinator", "bullet", db=any_store)
    listed = api.saved_passes(db=any_store)
    assert [(p.user_id, p.perf, p.current) for p in listed] == [
        ("indexinator", "blitz", True), ("indexinator", "bullet", True)]
    assert all(p.size > 100 for p in listed)
    with any_store.engine.begin() as conn:  # the hand edit: every decisive result reversed
        conn.execute(FLIP)
    stale = api.replay("indexinator", "blitz", db=any_store)
    assert stale.current_rating == before.current_rating  # the saved pass, not the games
    assert [p.result.score for p in stale.periods] == [p.result.score for p in before.periods]
    seq = write_seq(any_store)
    assert api.drop_passes(db=any_store) == 2
    assert write_seq(any_store) == seq + 1 and api.saved_passes(db=any_store) == []
    after = api.replay("indexinator", "blitz", db=any_store)
    scores_before = [p.result.score for p in before.periods]
    scores_after = [p.result.score for p in after.periods]
    assert scores_after != scores_before
    # each decisive game's point moved to the other side: the two add up to the games
    assert sum(scores_after) + sum(scores_before) == sum(p.result.games for p in before.periods)
    assert [(p.perf, p.current) for p in api.saved_passes("Indexinator", db=any_store)] == [
        ("blitz", True)]
    assert api.drop_passes("indexinator", db=any_store) == 1
    with pytest.raises(UnknownPlayerError):
        api.drop_passes("nobody", db=any_store)


def test_the_passes_command(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    api.import_file(INDEXINATOR, db=db)  # saves the passes of blitz and bullet ahead

    def tracker(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "tracker.cli.commands",
                               "--db", str(db), *args],
                              capture_output=True, text=True, check=True)
        return done.stdout

    listed = tracker("passes")
    assert "indexinator" in listed and "blitz" in listed and "current" in listed
    assert tracker("passes", "indexinator", "--drop").strip() == (
        "dropped 2 saved passes; the next replay of each player reads the games again")
    assert tracker("passes").strip() == "No saved passes."
