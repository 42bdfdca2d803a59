"""The replay's saved pass (tracker.report.saved_pass, tracker.store.snapshots): a report read from
it is the report computed from the games, and it is never read once a game was written after
it was saved."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tests.conftest import CMRADE, INDEXINATOR, INDEXINATOR_LATER
from tracker import api
from tracker.importing import import_file
from tracker.report import saved_pass as report_pass
from tracker.report import scale_runs as report_runs
from tracker.report.replay import ReplayOptions, build_report
from tracker.store import queries, snapshots
from tracker.store.db import Store


def _options(count_provisional: bool = False) -> snapshots.Key:
    return report_pass._options(count_provisional)


def _json(store: Store, user: str, perf: str, **flags: Any) -> object:
    report = build_report(store, user, perf, ReplayOptions(**flags))
    return report.to_json(), list(report.lichess), list(report.games), report.player


def _saved_rows(path: Path) -> list[tuple[str, str, str, int]]:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT user_id, perf, options, write_seq FROM cache_entries"
                           " ORDER BY perf, kind, options").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize(("path", "user", "perf"), [
    (INDEXINATOR, "indexinator", "blitz"),
    (INDEXINATOR, "indexinator", "bullet"),
    (CMRADE, "cmrade", "bullet"),
    (CMRADE, "cmrade", "correspondence"),
])
@pytest.mark.parametrize("count_provisional", [False, True])
def test_a_report_read_from_the_saved_pass_is_the_computed_report(
        tmp_path: Path, path: Path, user: str, perf: str, count_provisional: bool) -> None:
    db = tmp_path / "t.db"
    with Store(str(db)) as store:
        import_file(path, store=store, user=user)
        assert snapshots.saved_pass(store, user, perf, _options(count_provisional)).payload is None
        computed = _json(store, user, perf, count_provisional=count_provisional)
        saved = snapshots.saved_pass(store, user, perf, _options(count_provisional))
        assert saved.payload is not None
        assert saved.write_seq == snapshots.write_seq(store) >= 1  # one per batch written
        assert report_pass.decode(saved.payload) is not None
        assert _json(store, user, perf, count_provisional=count_provisional) == computed
    # and in a new process's view of the file (nothing cached in memory)
    with Store(str(db)) as store:
        assert _json(store, user, perf, count_provisional=count_provisional) == computed


def test_the_saved_pass_round_trips_every_field(tmp_path: Path) -> None:
    with Store(str(tmp_path / "t.db")) as store:
        import_file(INDEXINATOR, store=store, user="indexinator")
        rows = queries.replay_rows(store, "indexinator", "blitz")
        seen = report_pass.walk(rows, "indexinator", count_provisional=False)
        back = report_pass.decode(report_pass.encode(seen))
    assert back is not None
    # indexinator's blitz: 2,891 games, 2,861 counted, 30 left out, 31 months, a Lichess
    # point for each game (as tests/test_replay_report_fast.py checks against the records)
    assert (back.rows, back.games, back.name) == (2891, 2891, "indexinator")
    assert list(back.counted()) == list(seen.counted()) and len(back.counted_at) == 2861
    assert sum(sum(c.values()) for c in back.excluded.values()) == 30
    assert len(back.periods) == 31 and len(back.line) == len(back.line.game_ids) == 2891
    assert back.excluded == seen.excluded and back.periods == seen.periods
    assert (back.line.ends, back.line.ids, back.line.ratings) == (
        seen.line.ends, seen.line.ids, seen.line.ratings)
    assert back.monthly_last() == seen.line.monthly_last()
    assert [list(c.items()) for c in back.excluded.values()] == [
        list(c.items()) for c in seen.excluded.values()]  # reasons in the order first met


def test_a_write_makes_the_saved_pass_stale_and_the_next_report_sees_the_new_games(
        tmp_path: Path) -> None:
    with Store(str(tmp_path / "t.db")) as store:
        import_file(INDEXINATOR, store=store, user="indexinator")
        before = build_report(store, "indexinator", "blitz")
        seq = snapshots.write_seq(store)
        assert snapshots.is_current(store, "indexinator", "blitz", _options())
        later = import_file(INDEXINATOR_LATER, store=store, user="indexinator")
        assert later.new > 0
        assert snapshots.write_seq(store) > seq
        assert not snapshots.is_current(store, "indexinator", "blitz", _options())
        after = build_report(store, "indexinator", "blitz")
        assert len(after.games) > len(before.games)
        # the same as a database that never had a saved pass
        fresh = Store(str(tmp_path / "fresh.db"))
        import_file([INDEXINATOR, INDEXINATOR_LATER], store=fresh, user="indexinator")
        assert _json(store, "indexinator", "blitz") == _json(fresh, "indexinator", "blitz")
        fresh.close()


def test_an_import_that_changes_nothing_keeps_the_saved_pass(tmp_path: Path) -> None:
    with Store(str(tmp_path / "t.db")) as store:
        import_file(INDEXINATOR, store=store, user="indexinator")
        build_report(store, "indexinator", "blitz")
        seq = snapshots.write_seq(store)
        again = import_file(INDEXINATOR, store=store, user="indexinator")
        assert (again.new, again.updated, again.unchanged) == (0, 0, 2907)
        assert snapshots.write_seq(store) == seq
        assert snapshots.is_current(store, "indexinator", "blitz", _options())


def test_the_api_import_saves_the_tracked_players_passes_for_the_first_report(
        tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    summary = api.import_file(INDEXINATOR, db=str(db), user="indexinator")
    assert summary.new == 2907
    saved = _saved_rows(db)
    # the passes, and beside them each default scale's replay of them (tests/test_saved_replays.py)
    assert [(u, p, o) for u, p, o, _ in saved if o.startswith("p")] == [
        ("indexinator", "blitz", _options().options),
        ("indexinator", "bullet", _options().options)]
    seq = saved[0][3]
    assert seq >= 1 and all(s == seq for *_, s in saved)
    # a second import of the same file writes nothing, so nothing is computed again
    assert api.import_file(INDEXINATOR, db=str(db), user="indexinator").new == 0
    assert _saved_rows(db) == saved


def test_a_saved_pass_is_taken_for_the_players_saved_count_provisional(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    api.import_file(INDEXINATOR, db=str(db), user="indexinator")
    api.settings("indexinator", db=str(db), count_provisional=True)
    with Store(str(db)) as store:
        assert report_runs.refresh(store, "indexinator") == ["blitz", "bullet"]
        assert snapshots.is_current(store, "indexinator", "blitz", _options(True))
        assert report_runs.refresh(store, "indexinator") == []


def test_bytes_it_did_not_write_are_not_a_pass_and_the_report_is_computed(
        tmp_path: Path) -> None:
    with Store(str(tmp_path / "t.db")) as store:
        import_file(INDEXINATOR, store=store, user="indexinator")
        computed = _json(store, "indexinator", "blitz")
        assert report_pass.decode(b"\x93\x01\x02") is None
        assert report_pass.decode(b"not msgpack at all") is None
        with store.engine.begin() as conn:
            conn.execute(text("UPDATE cache_entries SET payload = :p"), {"p": b"\xc1junk"})
        assert _json(store, "indexinator", "blitz") == computed
        assert report_pass.decode(snapshots.saved_pass(
            store, "indexinator", "blitz", _options()).payload or b"") is not None


def test_a_read_only_database_still_gives_its_report(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    with Store(str(db)) as store:
        import_file(INDEXINATOR, store=store, user="indexinator")
        computed = _json(store, "indexinator", "blitz")
        with store.engine.begin() as conn:
            conn.execute(text("DELETE FROM cache_entries"))
    with Store(f"sqlite:///file:{db}?mode=ro&uri=true") as store:
        assert _json(store, "indexinator", "blitz") == computed
    assert _saved_rows(db) == []


def test_a_pass_is_keyed_on_the_version_of_the_code_that_computes_it() -> None:
    # PASS_VERSION, bumped by hand when the computation changes (tests/test_cache_versions.py
    # fails until it is), not a hash of some source files
    assert f"v{report_pass.PASS_VERSION}" == report_pass.CODE_PRINT
    assert report_pass._options(False) == snapshots.Key("pass", "p0", report_pass.PASS_VERSION)
    assert report_pass._options(True).options == "p1"


def test_counted_games_that_do_not_fit_the_periods_are_not_a_pass() -> None:
    from array import array

    seen = report_pass.Pass(periods=["2025-01"], counted_at=array("i", [0, 1]),
                            counted_opponents=array("i", [1500, 1600]),
                            counted_halves=array("b", [2, 0]))
    assert report_pass.decode(report_pass.encode(seen)) is None  # month 1 does not exist
    seen.counted_at[1] = 0
    back = report_pass.decode(report_pass.encode(seen))
    assert back is not None
    assert [tuple(g) for g in back.counted()] == [("2025-01", 1500, 2), ("2025-01", 1600, 0)]
