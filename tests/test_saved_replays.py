"""Each scale's replay of the saved pass (tracker.report.scale_runs): the report read from what is
saved equals the one computed from the games, for ``--scale all`` (the median of the models)
and for each model and the Lichess scale; it is never read once a game was written after it;
the import saves the default scales' replays, so the first report under them replays nothing;
on PostgreSQL too."""

from __future__ import annotations

from array import array
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tests.conftest import INDEXINATOR, INDEXINATOR_LATER
from tracker import api
from tracker.fide.scale import MODELS
from tracker.importing import import_file
from tracker.report import saved_pass as report_pass
from tracker.report import scale_runs as report_runs
from tracker.report.replay import ReplayOptions, build_report
from tracker.report.settings import PlayerSettings
from tracker.store import snapshots
from tracker.store.db import Store

SCALES = ("all", "lebowitz", "mathtuition", "lichess")


def _report(store: Store, perf: str, **flags: Any) -> tuple[Any, ...]:
    r = build_report(store, "indexinator", perf, ReplayOptions(**flags))
    return (r.to_json(), [p.result for p in r.periods], [p.band for p in r.periods],
            r.start_ratings, list(r.lichess), r.player)


def _no_replay(*_: Any, **__: Any) -> Any:
    raise AssertionError("a scale was replayed although its replay was saved")


def _keys(store: Store, perf: str) -> set[snapshots.Key]:
    """The keys of the pass and replays of ``perf`` saved at the write counter now."""
    with store.engine.connect() as conn:
        return {snapshots.Key(k, o, v) for k, o, v in conn.execute(text(
            "SELECT kind, options, version FROM cache_entries WHERE perf = :p"
            " AND write_seq = (SELECT write_seq FROM store_state)"), {"p": perf})}


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("flags", [
    {},
    {"count_provisional": True},
    {"expected": "formula", "rules": "fide-2024-03"},  # Decimals in the saved periods
    {"start_rating": 1500, "start_scale": "lichess"},  # a start rating mapped per model
    {"start_rating": 1900, "birth_year": 2010, "chapter": "standard"},
])
def test_a_report_read_from_the_saved_replays_is_the_computed_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scale: str,
        flags: dict[str, Any]) -> None:
    db = tmp_path / "t.db"
    with Store(str(db)) as store:
        import_file(INDEXINATOR, store=store, user="indexinator")
        assert _keys(store, "blitz") == set()
        computed = _report(store, "blitz", scale=scale, **flags)  # nothing saved: computed
        scales = list(MODELS) if scale == "all" else [scale]
        settings = PlayerSettings(scale=scale, **flags).resolved("blitz")
        wanted = {report_pass.options(settings.count_provisional)} | {
            report_runs.run_options(s, settings) for s in scales
            if s == "lichess" or MODELS[s].covers("blitz")}
        assert _keys(store, "blitz") == wanted
        with monkeypatch.context() as m:
            m.setattr(report_runs, "replay_on", _no_replay)
            m.setattr(report_pass, "walk", _no_replay)
            assert _report(store, "blitz", scale=scale, **flags) == computed
    with Store(str(db)) as store, monkeypatch.context() as m:  # a new process's view
        m.setattr(report_runs, "replay_on", _no_replay)
        assert _report(store, "blitz", scale=scale, **flags) == computed


def test_the_median_is_the_models_median_read_back(tmp_path: Path) -> None:
    with Store(str(tmp_path / "t.db")) as store:
        import_file(INDEXINATOR, store=store, user="indexinator")
        computed = build_report(store, "indexinator", "blitz", ReplayOptions(scale="all"))
        read = build_report(store, "indexinator", "blitz", ReplayOptions(scale="all"))
        alone = {k: build_report(store, "indexinator", "blitz", ReplayOptions(scale=k))
                 for k in ("lebowitz", "mathtuition")}
    for i, row in enumerate(read.periods):
        models = {k: r.periods[i].result.rating_after for k, r in alone.items()}
        assert row.band is not None and row.band == computed.periods[i].band
        assert row.band.models == models
        rated = sorted(v for v in models.values() if v is not None)
        if len(rated) == 2:
            assert row.band.median == Fraction(sum(rated), 2)
    last = read.periods[-1].band
    assert last is not None and last.median is not None and 1000 < last.median < 2500


@pytest.mark.parametrize("scale", [None, "all", "lebowitz"])  # None: the product default
def test_the_import_saves_the_default_scales_so_the_first_report_replays_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scale: str | None) -> None:
    db = tmp_path / "t.db"
    if scale is not None:  # the player's saved scale, then an import of their games
        api.import_file(INDEXINATOR, db=str(db), user="indexinator")
        api.settings("indexinator", db=str(db), scale=scale)
        assert api.import_file(INDEXINATOR_LATER, db=str(db), user="indexinator").new == 10
    else:
        api.import_file(INDEXINATOR, db=str(db), user="indexinator")
    with Store(str(db)) as store:
        for perf in ("blitz", "bullet"):
            settings = PlayerSettings(scale=scale).resolved(perf)
            scales = report_runs.default_scales(settings, perf)
            assert _keys(store, perf) == {report_pass.options(False)} | {
                report_runs.run_options("lichess" if m is None else m.key, settings)
                for m in scales}
        with monkeypatch.context() as m:
            m.setattr(report_runs, "replay_on", _no_replay)
            m.setattr(report_pass, "walk", _no_replay)
            read = {p: _report(store, p) for p in ("blitz", "bullet")}
        with store.engine.begin() as conn:
            conn.execute(text("DELETE FROM cache_entries"))
        assert {p: _report(store, p) for p in ("blitz", "bullet")} == read
        with store.engine.begin() as conn:
            conn.execute(text("DELETE FROM cache_entries"))
        assert report_runs.refresh(store, "indexinator") == ["blitz", "bullet"]
        assert report_runs.refresh(store, "indexinator") == []  # all current


def test_a_write_makes_every_saved_replay_stale(tmp_path: Path) -> None:
    with Store(str(tmp_path / "t.db")) as store:
        import_file(INDEXINATOR, store=store, user="indexinator")
        before = _report(store, "blitz", scale="all")
        settings = PlayerSettings(scale="all").resolved("blitz")
        keys = [report_pass.options(False), report_runs.run_options("lebowitz", settings),
                report_runs.run_options("mathtuition", settings)]
        assert set(snapshots.saved_passes(store, "indexinator", "blitz", keys).payloads) == set(
            keys)
        assert import_file(INDEXINATOR_LATER, store=store, user="indexinator").new == 10
        assert snapshots.saved_passes(store, "indexinator", "blitz", keys).payloads == {}
        after = _report(store, "blitz", scale="all")
        assert after != before
        assert after[0]["periods"][-1]["games"] > before[0]["periods"][-1]["games"]
        with Store(str(tmp_path / "fresh.db")) as fresh:
            import_file([INDEXINATOR, INDEXINATOR_LATER], store=fresh, user="indexinator")
            assert _report(fresh, "blitz", scale="all") == after


def test_a_replay_is_keyed_on_its_scale_settings_and_code() -> None:
    s = PlayerSettings().resolved("blitz")
    keys = {report_runs.run_options(k, s) for k in ("lichess", *MODELS)}
    assert len(keys) == 1 + len(MODELS)
    for other in (PlayerSettings(start_rating=1500), PlayerSettings(birth_year=2012),
                  PlayerSettings(rules="fide-2024-03"), PlayerSettings(expected="formula"),
                  PlayerSettings(count_provisional=True), PlayerSettings(chapter="standard"),
                  PlayerSettings(start_rating=1500, start_scale="lichess")):
        assert report_runs.run_options("lebowitz", other.resolved("blitz")) != \
            report_runs.run_options("lebowitz", s)
    assert all(len(k.options) <= 32 for k in keys)  # cache_entries.options is String(32)
    assert {(k.kind, k.version) for k in keys} == {("run", report_runs.RUN_VERSION)}
    # its pass's version is in its options: a new pass version never reads an old replay
    now = report_runs.run_options("lebowitz", s)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(report_runs, "CODE_PRINT", "v0")
        assert report_runs.run_options("lebowitz", s).options != now.options


def test_a_saved_replay_round_trips_exactly_with_games_below_the_model() -> None:
    # classical through chessdojo-2024: no value below Lichess 1665, so games are left out
    seen = report_pass.Pass(
        periods=["2025-01", "2025-02"], counted_at=array("i", [0, 0, 0, 1, 1, 1, 1, 1, 1]),
        counted_opponents=array("i", [1600, 1800, 1900, 2000, 1700, 1650, 2100, 1990, 1870]),
        counted_halves=array("b", [2, 1, 0, 2, 2, 1, 0, 2, 1]))
    months = ["2025-01", "2025-02"]
    for expected in ("table", "formula"):
        settings = PlayerSettings(expected=expected, start_rating=1800,  # type: ignore[arg-type]
                                  start_scale="lichess").resolved("classical")
        run = report_runs.replay_on(MODELS["chessdojo-2024"], "classical", seen, months,
                                    settings)
        assert run.below == {"2025-01": 1, "2025-02": 1}
        assert [r.games for r in run.results] == [2, 5]
        assert run.start_rating == 1555  # 1550 + 5 × 50/55 = 1554.5, half away from zero
        back = report_runs.decode_run(report_runs.encode_run(run), months)
        assert back == run
        kind = Decimal if expected == "formula" else Fraction
        assert isinstance(back.results[-1].expected_score, kind)
        assert report_runs.decode_run(report_runs.encode_run(run), ["2025-01"]) is None


@pytest.mark.parametrize("junk", [b"", b"\xc1", b"\x93\x01\x02\x03", b"\x93\x91\x90\x90\xc0"])
def test_bytes_it_did_not_write_are_not_a_replay_and_the_report_is_computed(
        tmp_path: Path, junk: bytes) -> None:
    assert report_runs.decode_run(junk, ["2025-01"]) is None
    with Store(str(tmp_path / "t.db")) as store:
        import_file(INDEXINATOR, store=store, user="indexinator")
        computed = _report(store, "blitz", scale="all")
        with store.engine.begin() as conn:
            conn.execute(text("UPDATE cache_entries SET payload = :p WHERE kind = 'run'"),
                         {"p": junk})
        assert _report(store, "blitz", scale="all") == computed


def test_default_scales() -> None:
    def keys(scale: str | None, perf: str) -> list[str | None]:
        settings = PlayerSettings(scale=scale).resolved(perf)
        return [None if m is None else m.key for m in report_runs.default_scales(settings, perf)]

    assert keys("all", "blitz") == ["lebowitz", "mathtuition"]
    assert keys("all", "bullet") == ["lebowitz"]
    assert keys("all", "correspondence") == [None]  # no model covers it: the Lichess scale
    assert keys("lichess", "blitz") == [None]
    assert keys("mathtuition", "blitz") == ["mathtuition"]
    assert keys("mathtuition", "bullet") == ["lebowitz"]  # not covered: the perf's default
    assert keys("club:friends", "blitz") == []  # a club model is data: its replay not saved


def test_postgres_saves_every_scale_and_a_write_makes_them_stale(
        pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pg = Store(pg_url)
    try:
        import_file(INDEXINATOR, store=pg, user="indexinator")
        computed = {s: _report(pg, "blitz", scale=s) for s in SCALES}
        with monkeypatch.context() as m:
            m.setattr(report_runs, "replay_on", _no_replay)
            assert {s: _report(pg, "blitz", scale=s) for s in SCALES} == computed
        with Store(str(tmp_path / "lite.db")) as lite:
            import_file(INDEXINATOR, store=lite, user="indexinator")
            assert {s: _report(lite, "blitz", scale=s) for s in SCALES} == computed
        assert import_file(INDEXINATOR_LATER, store=pg, user="indexinator").new == 10
        settings = PlayerSettings(scale="all").resolved("blitz")
        assert snapshots.saved_passes(pg, "indexinator", "blitz", [
            report_runs.run_options("lebowitz", settings)]).payloads == {}
        later = _report(pg, "blitz", scale="all")
        assert later[0]["periods"][-1]["games"] > computed["all"][0]["periods"][-1]["games"]
        report_runs.refresh(pg, "indexinator")
        with monkeypatch.context() as m:
            m.setattr(report_runs, "replay_on", _no_replay)
            assert _report(pg, "blitz", scale="all") == later
    finally:
        with pg.engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        pg.close()


def test_a_pass_with_a_game_dated_in_the_future_saves_no_replay(tmp_path: Path) -> None:
    # such a pass changes with time (the game counts once its date is past): nor it, nor a
    # scale's replay of it, is saved; the report is computed each time, the same
    from tests.test_future_games import blitz_lines, future_copy

    lines = blitz_lines()
    dated = tmp_path / "future.ndjson"
    dated.write_text("\n".join([*lines, future_copy(lines[0])]) + "\n")
    db = tmp_path / "t.db"
    api.import_file(dated, db=str(db), user="indexinator")
    with Store(str(db)) as store:
        first = _report(store, "blitz", scale="all")
        assert _keys(store, "blitz") == set()
        assert _report(store, "blitz", scale="all") == first
        assert first[0]["periods"][-1]["excluded"].get("dated in the future") == 1
