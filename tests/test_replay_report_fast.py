"""build_report's one pass over plain rows gives exactly the report the records give.

The reference below is the straightforward computation (every game as a GameRecord, then
select_games, the engine and lichess_line); the report must match it period for period, point
for point and game for game, on real histories with every kind of left-out game.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import CMRADE, DB2013, INDEXINATOR
from tracker.core.records import month_of
from tracker.fide import CountedGame, replay
from tracker.importing import import_file
from tracker.report.lichess_line import lichess_line
from tracker.report.replay import PeriodRow, ReplayOptions, build_report
from tracker.report.replay_pass import LazySelected, MonthOf, utc
from tracker.report.selection import select_games
from tracker.report.settings import get_settings
from tracker.store import queries
from tracker.store.db import Store


def _reference(store: Store, uid: str, perf: str, count_provisional: bool):  # type: ignore[no-untyped-def]
    settings = get_settings(store, uid).override(count_provisional=count_provisional).resolved()
    games = list(queries.player_games(store, uid, perf))
    selected = select_games(games, uid, perf, count_provisional=count_provisional)
    selected.sort(key=lambda s: s.period)
    excluded: dict[str, Counter[str]] = {}
    counted = []
    for sel in selected:
        if sel.reason is None:
            counted.append(CountedGame(sel.period, sel.opponent_rating, sel.score_halves))
        else:
            excluded.setdefault(sel.period, Counter())[sel.reason] += 1
    results = replay(counted, settings.engine(), periods=sorted({s.period for s in selected}))
    line = lichess_line(games, uid)
    by_month = {month_of(p.at): p.rating for p in line}
    rows, last = [], None
    for r in results:
        last = by_month.get(r.period, last)
        rows.append(PeriodRow(r, dict(excluded.get(r.period, {})), last))
    name = next((g.side(c).name for g in games if (c := g.color_of(uid)) and g.side(c).name), uid)
    return rows, line, selected, name


@pytest.mark.parametrize(
    ("path", "user", "perfs"),
    [
        (INDEXINATOR, "indexinator", ("blitz", "bullet")),
        (CMRADE, "cmrade", ("bullet", "blitz", "rapid", "classical", "correspondence")),
        (DB2013, None, ("classical", "blitz", "bullet")),
    ],
)
@pytest.mark.parametrize("count_provisional", [False, True])
def test_report_matches_the_record_by_record_reference(
    tmp_path: Path, path: Path, user: str | None, perfs: tuple[str, ...],
    count_provisional: bool,
) -> None:
    store = Store(str(tmp_path / "t.db"))
    summary = import_file(path, store=store)
    uid = user or summary.player
    assert uid is not None
    compared = 0
    for perf in perfs:
        if not list(queries.replay_rows(store, uid, perf)):
            continue
        report = build_report(store, uid, perf, ReplayOptions(
            count_provisional=count_provisional, scale="lichess"))
        rows, line, selected, name = _reference(store, uid, perf, count_provisional)
        assert report.periods == rows
        assert report.lichess == line
        assert len(report.games) == len(selected)
        assert list(report.games) == selected
        assert report.player == name
        compared += 1
    assert compared >= 1


def test_games_are_read_on_first_use_and_counted_before() -> None:
    loads = []

    def load() -> list[str]:
        loads.append(1)
        return ["a", "b"]

    games = LazySelected(2, load)  # type: ignore[arg-type]
    assert len(games) == 2 and loads == []
    assert games[0] == "a" and list(games) == ["a", "b"] and loads == [1]


def test_month_of_milliseconds_agrees_with_month_of_datetimes() -> None:
    month = MonthOf()
    for ms in (0, 1, -1, 951_782_399_999, 951_782_400_000, 1_704_067_199_999, 1_704_067_200_000,
               1_760_077_961_951, 1_700_000_000_000, 1_704_067_200_000):
        assert month(ms) == month_of(utc(ms))


def test_the_replay_options_are_the_stored_settings_and_a_real_list() -> None:
    """One list of the replay's settings: the report's options are the store's settings row
    (each ``None``: the saved setting) and the real FIDE list, in that order."""
    from dataclasses import fields

    from tracker.report.settings import SETTING_NAMES
    from tracker.store.players import SettingsRow

    assert issubclass(ReplayOptions, SettingsRow)
    assert [f.name for f in fields(SettingsRow)] == list(SETTING_NAMES)
    assert [f.name for f in fields(ReplayOptions)] == [*SETTING_NAMES, "real", "real_list"]
    assert ReplayOptions(1800, 2008, scale="all") == ReplayOptions(
        start_rating=1800, birth_year=2008, scale="all")
