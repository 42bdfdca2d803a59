"""The replay service: stored games → selection → engine → report (issue 3)."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from tests.conftest import CASES
from tracker import api
from tracker.core.perfs import PerfError
from tracker.fide import round_half_away
from tracker.importing import import_file
from tracker.report.presentation import PERIOD_KEYS
from tracker.report.replay import NoGamesError
from tracker.report.settings import SettingsError
from tracker.store.db import Store
from tracker.store.queries import UnknownPlayerError


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands", *args],
                          capture_output=True, text=True)


@pytest.fixture
def c06(store: Store) -> Store:
    import_file(CASES / "C06.ndjson", store=store, user="tempo_tactician")
    return store


def test_c06_counts_no_game_by_default(c06: Store) -> None:
    report = api.replay("tempo_tactician", "blitz", db=c06, start_rating=1600)
    (row,) = report.periods
    assert row.result.games == 0
    assert row.excluded == {
        "casual": 1,
        "provisional opponent": 1,
        "rated without rating change": 1,
        "variant or from position": 1,
    }
    assert row.result.rating_after == 1600


def test_c06_with_provisional_opponents_counted_gains_23(c06: Store) -> None:
    report = api.replay("tempo_tactician", "blitz", db=c06, start_rating=1600,
                        count_provisional=True, scale="lichess")
    (row,) = report.periods
    assert (row.result.games, row.result.k) == (1, 40)
    assert row.result.expected_score == Decimal("0.43") or float(row.result.expected_score) == 0.43
    assert report.to_json()["periods"][0]["change"] == Decimal("22.80")
    assert row.result.rating_after == 1623


def test_c06_chess960_is_its_own_perf_and_never_replayed(c06: Store) -> None:
    from tracker.store import queries

    perfs = {p.perf: p.games for p in queries.player_perfs(c06, "tempo_tactician")}
    assert perfs == {"blitz": 4, "chess960": 1}
    with pytest.raises(PerfError, match="chess960 is a variant: FIDE rates standard chess only"):
        api.replay("tempo_tactician", "chess960", db=c06, start_rating=1600)


def test_perf_is_matched_in_any_case_and_unknown_perfs_are_refused(c06: Store) -> None:
    report = api.replay("tempo_tactician", "Blitz", db=c06, start_rating=1600)
    assert report.perf == "blitz"
    with pytest.raises(PerfError, match="unknown perf 'blits'"):
        api.replay("tempo_tactician", "blits", db=c06)


def test_c03_games_against_the_ai_are_skipped_as_computer(store: Store) -> None:
    import_file(CASES / "C03.ndjson", store=store, user="rook_lover_77")
    for perf in ("blitz", "rapid"):
        report = api.replay("rook_lover_77", perf, db=store, start_rating=1600)
        assert report.counted == 0
        # both were casual too; who the opponent was is the first reason (tracker.report.selection)
        assert [g.reason for g in report.games] == ["opponent is the computer"]


@pytest.fixture(scope="module")
def indexinator_report(indexinator_db: Path):
    return api.replay("indexinator", "blitz", db=str(indexinator_db), scale="lichess")


def test_indexinator_blitz_replay_runs_end_to_end_with_invariants(indexinator_report) -> None:
    report = indexinator_report
    rows = report.periods
    assert rows[0].period == "2023-04" and rows[-1].period == "2025-10"
    blitz_games = 2891
    assert sum(r.result.games + sum(r.excluded.values()) for r in rows) == blitz_games
    assert len(report.games) == blitz_games
    previous_after = None
    for r in rows:
        res = r.result
        assert res.rating_before == previous_after
        if res.rating_before is not None:
            assert res.k is not None and res.k * max(res.games, 1) <= 700
            computed = res.rating_before + round_half_away(res.change)
            if computed >= 1400:
                assert res.rating_after == computed
            else:
                assert res.rating_after is None
        previous_after = res.rating_after
    # the first month: 24 counted games publish an initial rating
    first = rows[0].result
    assert (first.games, first.rating_after, first.performance) == (24, 1639, 1618)


def test_indexinator_lichess_rating_is_the_real_post_game_rating(indexinator_report) -> None:
    # The newest game of the export: indexinator 1401 +7 → 1408 (2025-10-10).
    assert indexinator_report.current_lichess == 1408
    assert indexinator_report.periods[-1].lichess_rating == 1408


def test_replay_json_has_exactly_the_contract_keys(indexinator_db: Path) -> None:
    proc = run_cli("--db", str(indexinator_db), "replay", "indexinator", "--perf", "blitz",
                   "--scale", "lichess", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"player", "perf", "rules", "expected", "periods"}
    assert (data["player"], data["perf"], data["rules"], data["expected"]) == (
        "indexinator", "blitz", "fide-2025-10", "table"
    )
    for p in data["periods"]:
        assert tuple(p) == PERIOD_KEYS
    assert data["periods"][1]["change"] == -123.78
    assert '"change": -123.78' in proc.stdout


def test_unknown_player_and_empty_perf_are_one_line_errors(indexinator_db: Path) -> None:
    with pytest.raises(UnknownPlayerError):
        api.replay("nobody", "blitz", db=str(indexinator_db))
    with pytest.raises(NoGamesError, match="blitz \\(2891\\), bullet \\(16\\)"):
        api.replay("indexinator", "rapid", db=str(indexinator_db))
    for args in (("nobody", "--perf", "blitz"), ("indexinator", "--perf", "rapid")):
        proc = run_cli("--db", str(indexinator_db), "replay", *args)
        assert proc.returncode == 1
        assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


def test_saved_settings_are_used_and_flags_override_them(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    import_file(CASES / "C06.ndjson", store=Store(db), user="tempo_tactician")
    api.settings("tempo_tactician", db=db, start_rating=1600, count_provisional=True,
                 scale="lichess")
    assert api.replay("tempo_tactician", "blitz", db=db).periods[0].result.rating_after == 1623
    flagged = api.replay("tempo_tactician", "blitz", db=db, count_provisional=False)
    assert flagged.periods[0].result.rating_after == 1600
    proc = run_cli("--db", db, "settings", "tempo_tactician", "--json")
    assert json.loads(proc.stdout)["start_rating"] == 1600
    proc = run_cli("--db", db, "settings", "tempo_tactician", "--unrated")
    assert "start unrated" in proc.stdout
    assert api.settings("tempo_tactician", db=db).start_rating is None


def test_out_of_range_settings_are_refused(store: Store) -> None:
    import_file(CASES / "C06.ndjson", store=store, user="tempo_tactician")
    with pytest.raises(SettingsError, match="out of range"):
        api.settings("tempo_tactician", db=store, start_rating=900)
    with pytest.raises(SettingsError, match="unknown rules version"):
        api.replay("tempo_tactician", "blitz", db=store, rules="fide-1970")
