"""The Overview chart tells the truth, on the histories where it used to mislead (pure figure
builders, no browser): cmrade's one-game correspondence months, cmrade's bullet gap and fall
below 1400, Lance5500's single game."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dashboard import charts
from tests.conftest import CMRADE, SINGLE
from tracker import api
from tracker.api import LichessPoint, ReplayReport


@pytest.fixture(scope="module")
def fixtures_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("charts") / "charts.db"
    api.import_file(CMRADE, db=db, user="cmrade")
    api.import_file(SINGLE, db=db, user="Lance5500")
    return db


def replay(db: Path, user: str, perf: str) -> ReplayReport:
    """The replay on the Lichess scale: these truths are about the raw numbers' chart."""
    return api.replay(user, perf, db=db, scale="lichess")


def lines_range(report: ReplayReport) -> tuple[int, int]:
    """The rating lines' own range: the Lichess line and the FIDE-style ratings in force."""
    values = [p.rating for p in report.lichess] + [
        x for row in report.periods for x in (row.result.rating_before, row.result.rating_after)
        if x is not None]
    return min(values), max(values)


def trace(fig: object, name: str, mode: str | None = None) -> object:
    found = [t for t in fig.data if t.name == name and (mode is None or t.mode == mode)]  # type: ignore[attr-defined]
    assert found, name
    return found[0]


# --- performance markers do not squash the lines --------------------------------------------

def test_cmrade_correspondence_y_range_fits_the_rating_lines(fixtures_db: Path) -> None:
    report = replay(fixtures_db, "cmrade", "correspondence")
    low, high = lines_range(report)
    assert (low, high) == (1261, 1835)
    fig = charts.overview_figure(report)
    y0, y1 = fig.layout.yaxis.range
    span = high - low
    assert low - 0.1 * span <= y0 <= low and high <= y1 <= high + 0.1 * span
    # The one- and three-game months (performance 2499, 2289, 2345) are off the scale: drawn
    # at the top edge as triangles, their value on hover.
    perf = trace(fig, charts.PERFORMANCE_NAME)
    clipped = {c[0]: c[2] for c, s in zip(perf.customdata, perf.marker.symbol, strict=True)
               if s == "triangle-up"}
    assert clipped == {"2018-09": 2499, "2019-05": 2289, "2020-06": 2345}
    assert all(y0 < y < y1 for y in perf.y)
    assert "off the scale above" in perf.customdata[2][3]


def test_a_month_of_many_games_is_never_clipped(fixtures_db: Path) -> None:
    report = replay(fixtures_db, "cmrade", "bullet")
    marks = charts.performance_marks(report.periods, charts.rating_range(report))
    many = [m for m in marks if m.games >= charts.MIN_PERFORMANCE_GAMES]
    assert many and all(m.clipped == "" and m.y == m.value for m in many)


# --- the Lichess line breaks over gaps ------------------------------------------------------

def test_cmrade_bullet_line_breaks_over_the_2018_2020_gap(fixtures_db: Path) -> None:
    report = replay(fixtures_db, "cmrade", "bullet")
    xs, ys, alone = charts.lichess_segments(report.lichess)
    breaks = [i for i, y in enumerate(ys) if y is None]
    assert len(breaks) == 1
    before, after = xs[breaks[0] - 1], xs[breaks[0] + 1]
    assert before is not None and after is not None
    assert (before.date().isoformat(), after.date().isoformat()) == ("2018-07-30", "2020-09-12")
    assert alone == []
    lichess = trace(charts.overview_figure(report), charts.LICHESS_NAME)
    assert len(lichess.y) == len(report.lichess) + 1
    assert math.isnan(lichess.y[breaks[0]])


def test_segments_of_synthetic_points() -> None:
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    pts = [LichessPoint(t0 + timedelta(days=d), f"g{d}", 1500 + d) for d in (0, 1, 40, 90, 91)]
    _, ys, alone = charts.lichess_segments(pts)
    assert ys == [1500, 1501, None, 1540, None, 1590, 1591]
    assert [p.game_id for p in alone] == ["g40"]  # between two breaks: a marker
    assert charts.lichess_segments(pts[:1])[2] == pts[:1]
    assert charts.lichess_segments([]) == ([], [], [])


# --- the fall into "unrated" is drawn -------------------------------------------------------

def test_cmrade_bullet_fall_below_1400_is_a_labelled_marker(fixtures_db: Path) -> None:
    report = replay(fixtures_db, "cmrade", "bullet")
    marks = charts.unpublished_marks(report.periods)
    assert [(m.period, m.rating, m.at) for m in marks] == [
        ("2020-10", 1240, datetime(2020, 11, 1)),
        ("2020-11", 1246, datetime(2020, 12, 1)),
    ]
    assert marks[0].label == "fell to 1240, below 1400: not published"
    fide = trace(charts.overview_figure(report), charts.FIDE_NAME)
    assert "fell to 1240" in fide.text and "pool: 1246" in fide.text
    at = list(fide.y).index(1240)
    assert fide.marker.size[at] > 0 and fide.x[at] == datetime(2020, 11, 1)
    y0, _ = charts.overview_figure(report).layout.yaxis.range
    assert y0 < 1240  # the marker is inside the range


# --- one game is still a point on the chart -------------------------------------------------

def test_lance5500_single_game_is_a_lichess_marker(fixtures_db: Path) -> None:
    report = replay(fixtures_db, "lance5500", "blitz")
    assert len(report.lichess) == 1
    fig = charts.overview_figure(report)
    lichess = [t for t in fig.data if t.name == charts.LICHESS_NAME]
    assert [t.mode for t in lichess] == ["markers"]
    assert list(lichess[0].y) == [report.lichess[0].rating] and lichess[0].showlegend


# --- "unrated" said once --------------------------------------------------------------------

def test_unrated_is_said_once(fixtures_db: Path) -> None:
    report = replay(fixtures_db, "cmrade", "bullet")
    assert api.unrated_text(report) == (
        "unrated: pool of 63 games gives 1246, below 1400: not published")
    assert api.unrated_text(replay(fixtures_db, "cmrade", "correspondence")) is None


# --- the real FIDE rating beside the replay -------------------------------------------------

def test_real_fide_lines_are_labelled_steps_within_the_chart(fixtures_db: Path) -> None:
    report = replay(fixtures_db, "cmrade", "bullet")
    real = {"standard": [("2017-01", 1500), ("2018-07", 1510), ("2020-09", 1530)],
            "blitz": [("2020-10", 1450)]}
    fig = charts.overview_figure(report, real)
    standard = trace(fig, charts.real_fide_name("standard"))
    blitz = trace(fig, charts.real_fide_name("blitz"))
    # 2017-01 is before the chart (2018-07 on): left out; each month a flat step.
    assert list(standard.y) == [1510, 1510, 1530, 1530]
    assert list(standard.x) == [datetime(2018, 7, 1), datetime(2018, 8, 1),
                                datetime(2020, 9, 1), datetime(2020, 10, 1)]
    assert list(blitz.y) == [1450, 1450]
    assert charts.real_fide_name("standard") == "Real FIDE rating (standard list)"
    # Far-off real ratings stay on the chart: the y-range takes them in.
    far = charts.overview_figure(report, {"standard": [("2019-01", 2700)]})
    assert far.layout.yaxis.range[1] > 2700
