"""The Overview chart's fixes, seen in headless Chromium as plotly drew them: cmrade's
correspondence y-range fits the rating lines, cmrade's bullet line is broken over the
2018–2020 gap, Lance5500's single game is a Lichess marker. Screenshots in test-artifacts/."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from dashboard import charts
from tests.browser import Browser, chromium_path, running_dashboard
from tests.conftest import CMRADE, SINGLE
from tests.test_dashboard_browser import ARTIFACTS, BAD_TEXT, CHART_READY
from tracker import api

pytestmark = pytest.mark.browser
WIDTH, HEIGHT = 1400, 1250

#: The drawn figure's y-range and its traces (name, mode, number of rendered line pieces and
#: marker points), read from plotly's own state and the SVG.
FIGURE = """(() => {
  const gd = document.querySelector('.js-plotly-plot');
  const traces = [...gd.querySelectorAll('.scatterlayer .trace')];
  return {
    range: gd._fullLayout.yaxis.range,
    traces: gd._fullData.map((t, i) => ({name: t.name, mode: t.mode || '', index: i})),
    lines: traces.map(t => [...t.querySelectorAll('.js-line')]
                           .map(p => (p.getAttribute('d') || '').split('M').length - 1)
                           .reduce((a, b) => a + b, 0)),
    points: traces.map(t => t.querySelectorAll('.points path').length),
    labels: [...gd.querySelectorAll('.textpoint')].map(e => e.textContent),
    legend: [...gd.querySelectorAll('.legendtext')].map(e => e.textContent),
  };
})()"""


@pytest.fixture(scope="module")
def fixtures_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if chromium_path() is None:
        pytest.skip("chromium is not installed: run `bash scripts/ensure-chromium.sh` (as root)")
    db = tmp_path_factory.mktemp("chart-browser") / "fixtures.db"
    api.import_file(CMRADE, db=db, user="cmrade")
    api.import_file(SINGLE, db=db, user="Lance5500")
    with running_dashboard(db) as url:
        yield url


def overview(url: str, player: str, perf: str, shot: str, scale: str | None = None
             ) -> dict[str, object]:
    with Browser(WIDTH, HEIGHT) as browser:
        browser.goto(f"{url}/?player={player}&perf={perf}"
                     + (f"&scale={scale}" if scale else ""))
        assert browser.wait_for(CHART_READY, timeout=90), f"{player} {perf} never rendered"
        time.sleep(0.5)
        browser.screenshot(ARTIFACTS / shot)
        text = browser.evaluate("document.body.innerText")
        figure = browser.evaluate(FIGURE)
    assert not [bad for bad in BAD_TEXT if bad in text], text
    assert isinstance(figure, dict)
    figure["text"] = text
    return figure


def lichess_index(figure: dict[str, object], mode: str) -> int:
    traces = figure["traces"]
    assert isinstance(traces, list)
    return next(t["index"] for t in traces if t["name"] == charts.LICHESS_NAME
                and t["mode"] == mode)


def test_cmrade_correspondence_y_range_within_the_rating_lines(fixtures_url: str) -> None:
    figure = overview(fixtures_url, "cmrade", "correspondence", "overview-cmrade-corr.png")
    low, high = 1261, 1835  # the Lichess and FIDE-style lines (test_dashboard_chart_truth)
    y0, y1 = figure["range"]  # type: ignore[misc]
    span = high - low
    assert low - 0.1 * span <= y0 <= low and high <= y1 <= high + 0.1 * span


def test_cmrade_bullet_line_is_broken_over_the_gap(fixtures_url: str) -> None:
    figure = overview(fixtures_url, "cmrade", "bullet", "overview-cmrade-bullet.png",
                      scale="lichess")  # the fall below 1400 is the raw numbers' chart
    pieces = figure["lines"][lichess_index(figure, "lines")]  # type: ignore[index]
    assert pieces == 2  # 2018-07, then 2020-09 on: no diagonal across the gap
    # The fall below 1400 (and the pool's unpublished rating after it) are labelled markers.
    assert {"fell to 1240", "pool: 1246"} <= set(figure["labels"])  # type: ignore[arg-type]


def test_lance5500_single_game_shows_a_lichess_marker(fixtures_url: str) -> None:
    figure = overview(fixtures_url, "lance5500", "blitz", "overview-lance5500.png")
    points = figure["points"][lichess_index(figure, "markers")]  # type: ignore[index]
    assert points == 1
    assert charts.LICHESS_NAME in figure["legend"]  # type: ignore[operator]
