"""The dashboard's figure builders (pure: no Streamlit): the step line, its gaps and reasons."""

from __future__ import annotations

from datetime import datetime
from fractions import Fraction
from pathlib import Path

from dashboard import charts
from tracker import api
from tracker.fide import PeriodResult
from tracker.report.replay import PeriodRow


def row(period: str, before: int | None, after: int | None, note: str = "",
        performance: int | None = 1500, games: int = 10) -> PeriodRow:
    result = PeriodResult(period, games, Fraction(games, 2), None, None, before, None, after,
                          performance, games, note)
    return PeriodRow(result, {"casual": 2}, 1500)


HISTORY = [
    row("2024-01", None, None, "unrated: 3 games in pool (5 needed)"),
    row("2024-02", None, 1650, "initial rating 1650 published"),
    row("2024-03", 1650, 1620, "K 40 (fewer than 30 games)"),
    # no games in 2024-04: 1620 stays in force
    row("2024-05", 1620, None, "fell to 1390, below 1400: unrated from next period"),
    row("2024-06", None, None, "unrated: 4 games in pool (5 needed)"),
]


def test_rating_changes_are_the_moments_the_rating_in_force_changes() -> None:
    changes = charts.rating_changes(HISTORY)
    assert [(c.at, c.rating) for c in changes] == [
        (datetime(2024, 1, 1), None),
        (datetime(2024, 3, 1), 1650),
        (datetime(2024, 4, 1), 1620),
        (datetime(2024, 6, 1), None),
    ]
    assert changes[1].note == "initial rating 1650 published"


def test_fide_steps_are_flat_while_in_force_with_a_gap_while_unrated() -> None:
    xs, ys = charts.fide_steps(HISTORY)
    assert list(zip(xs, ys, strict=True)) == [
        (datetime(2024, 1, 1), None),
        (datetime(2024, 3, 1), 1650),
        (datetime(2024, 4, 1), 1650),  # flat through March…
        (datetime(2024, 4, 1), 1620),  # …then the jump
        (datetime(2024, 6, 1), 1620),  # 1620 in force through April (no games) and May
        (datetime(2024, 6, 1), None),  # unrated from June
    ]


def test_fide_steps_end_one_month_after_the_last_period_when_rated() -> None:
    xs, ys = charts.fide_steps([row("2023-12", 1500, 1510)])
    assert xs[-1] == datetime(2024, 2, 1) == charts.chart_end([row("2023-12", 1500, 1510)])
    assert ys == [1500, 1500, 1510, 1510]


def test_unrated_stretches_say_why_they_began_and_how_they_stand() -> None:
    stretches = charts.unrated_stretches(HISTORY, "unrated: 4 games in pool (5 needed)")
    assert [(s.start, s.end) for s in stretches] == [
        (datetime(2024, 1, 1), datetime(2024, 3, 1)),
        (datetime(2024, 6, 1), None),
    ]
    assert stretches[0].label() == (
        "2024-01 → 2024-02: started unrated: no FIDE rating yet "
        "(initial rating 1650 published)")
    assert stretches[1].label() == (
        "2024-06 → now: fell to 1390, below 1400 (unrated: 4 games in pool (5 needed))")


def test_a_rated_start_has_no_unrated_stretch() -> None:
    assert charts.unrated_stretches([row("2024-01", 1800, 1790)]) == []


def test_overview_figure_for_the_sample(indexinator_db: Path) -> None:
    report = api.replay("indexinator", "blitz", db=indexinator_db, scale="lichess")
    fig = charts.overview_figure(report)
    names = [t.name for t in fig.data]
    assert names == [charts.LICHESS_NAME, charts.FIDE_NAME, charts.PERFORMANCE_NAME,
                     charts.UNRATED_NAME, charts.COUNTED_NAME, charts.LEFT_OUT_NAME]
    lichess = fig.data[0]
    assert len(lichess.y) == len(report.lichess) == 2891
    assert str(lichess.x[0]).startswith("2023-04-19T19:30:48.110")
    # Two unrated stretches: 2023-04 (before the initial rating) and from 2025-11 (the fall).
    assert len(fig.layout.shapes) == 2
    assert [a.hovertext for a in fig.layout.annotations] == [
        "2023-04: started unrated: no FIDE rating yet (initial rating 1639 published)",
        "2025-11 → now: fell to 1361, below 1400",
    ]
    assert list(fig.layout.xaxis.range) == [datetime(2023, 4, 1), datetime(2025, 12, 1)]
    assert sum(fig.data[4].y) == report.counted
    assert sum(fig.data[5].y) == len(report.games) - report.counted


def test_overview_figure_by_default_draws_the_median_bold_and_each_model_on_demand(
        indexinator_db: Path) -> None:
    report = api.replay("indexinator", "blitz", db=indexinator_db)
    fig = charts.overview_figure(report)
    by_name = {t.name: t for t in fig.data}
    median = by_name[charts.MEDIAN_NAME]
    assert median.line.width == 3  # the bold line is the answer
    assert median.y[-1] == 1499 and 1606 in list(median.y)  # a median's .5 shown whole (1605.5)
    assert all(y is None or float(y).is_integer() for y in median.y)
    for key in ("lebowitz", "mathtuition"):
        own = by_name[charts.model_name(key)]
        assert own.visible == "legendonly"  # a toggle: drawn when clicked in the legend
    assert by_name[charts.model_name("lebowitz")].y[-1] == 1453
    assert by_name[charts.model_name("mathtuition")].y[-1] == 1545
    assert charts.BAND_NAME in by_name
    # rated to the end on the FIDE scale: one unrated stretch only, before the first rating
    assert [a.hovertext for a in fig.layout.annotations] == [
        "2023-04: started unrated: no FIDE rating yet (initial rating 1640 published (the "
        "models' median: lebowitz 1595, mathtuition 1685))"]
    # the legend lists only what is drawn, and its rows add height instead of squeezing
    shown = [t for t in fig.data if t.showlegend is not False]
    assert all(t.visible is not False for t in shown)
    assert fig.layout.height >= charts.PLOT_HEIGHT + charts.LEGEND_ROW_HEIGHT * 3


def test_one_covering_model_draws_no_band(indexinator_db: Path) -> None:
    report = api.replay("indexinator", "bullet", db=indexinator_db)
    names = [t.name for t in charts.overview_figure(report).data]
    assert charts.BAND_NAME not in names and not any(n.endswith(" alone") for n in names)
    assert charts.fide_name("FIDE scale (lebowitz)") in names
