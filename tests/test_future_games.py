"""A game dated in the future (issue 19, item 12): left out of the replay under its own reason,
so "Now" stays what the games played say."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from tests.conftest import INDEXINATOR
from tracker import api
from tracker.report.saved_pass import _options, walk
from tracker.report.selection import FUTURE, REASONS
from tracker.store import queries, snapshots
from tracker.store.db import Store

Y2999 = int(datetime(2999, 6, 1, tzinfo=UTC).timestamp() * 1000)


def blitz_lines() -> list[str]:
    return [ln for ln in INDEXINATOR.read_text().splitlines() if '"blitz"' in ln]


def future_copy(line: str) -> str:
    """A game of indexinator's, with another id, played in June 2999."""
    obj = json.loads(line)
    obj.update(id="FUTURE01", createdAt=Y2999, lastMoveAt=Y2999 + 300_000)
    return json.dumps(obj)


def test_a_game_dated_2999_is_left_out_and_now_is_unchanged(tmp_path: Path) -> None:
    lines = blitz_lines()
    plain, dated = tmp_path / "plain.ndjson", tmp_path / "future.ndjson"
    plain.write_text("\n".join(lines) + "\n")
    dated.write_text("\n".join([*lines, future_copy(lines[0])]) + "\n")
    reports, answers = {}, {}
    for path in (plain, dated):
        db = tmp_path / f"{path.stem}.db"
        api.import_file(path, db=db, user="indexinator")
        reports[path.stem] = api.replay("indexinator", "blitz", db=db, scale="lichess")
        answers[path.stem] = api.replay("indexinator", "blitz", db=db)  # the default: all
    before, after = reports["plain"], reports["future"]
    assert answers["plain"].current_rating == answers["future"].current_rating == 1499
    assert api.unrated_text(before) == "unrated: fell to 1361, below 1400"
    assert api.unrated_text(after) == api.unrated_text(before)  # not "1 game in pool"
    assert [p.period for p in after.periods] == [p.period for p in before.periods]
    assert after.periods[-1].period == "2025-10"
    assert after.periods[-1].excluded == {**before.periods[-1].excluded, FUTURE: 1}
    assert after.counted == before.counted and len(after.games) == len(before.games) + 1
    future = [s for s in after.games if s.game.id == "FUTURE01"]
    assert [(s.reason, s.period) for s in future] == [(FUTURE, "2025-10")]
    listed = after.period_games("2025-10")  # the Games page: the month's rows, with it
    assert len(listed) == after.periods[-1].result.games + sum(
        after.periods[-1].excluded.values())
    assert [d.selected.reason for d in listed].count(FUTURE) == 1
    assert after.current_lichess == before.current_lichess  # no Lichess point in 2999
    assert REASONS[0] == FUTURE


def test_a_future_game_counts_once_its_date_is_past(tmp_path: Path) -> None:
    """The pass is not saved while a game waits for its date (it would go stale with time
    alone, no write to move the counter); with ``now`` after the date the game counts."""
    lines = blitz_lines()[:40]
    dated = tmp_path / "future.ndjson"
    dated.write_text("\n".join([*lines, future_copy(lines[0])]) + "\n")
    db = tmp_path / "f.db"
    api.import_file(dated, db=db, user="indexinator")
    with Store(str(db)) as store:
        api.replay("indexinator", "blitz", db=store)
        assert not snapshots.is_current(store, "indexinator", "blitz", _options(False))
        rows = list(queries.replay_rows(store, "indexinator", "blitz"))
    today = walk(rows, "indexinator", count_provisional=False)
    later = walk(rows, "indexinator", count_provisional=False, now=Y2999 + 10**9)
    assert sum(c[FUTURE] for c in today.excluded.values()) == 1
    assert len(later.counted_at) == len(today.counted_at) + 1
    assert later.periods[-1] == "2999-06" and today.periods[-1] != "2999-06"
