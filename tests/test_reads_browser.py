"""What a player reads on the dashboard (issue 30, items 2 and 6-10), seen in headless Chromium
at 1280 and 1920 px as the browser drew it. Screenshots in test-artifacts/reads-*.png."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import Browser, chromium_path, running_dashboard
from tests.conftest import CMRADE, INDEXINATOR
from tests.test_dashboard_browser import ARTIFACTS, BAD_TEXT, CHART_READY, PAGE_READY
from tracker import api

pytestmark = pytest.mark.browser
WIDTHS = (1280, 1920)
HEIGHT = 1100

#: Every trace of the rating axis (its y values) and the axis range, where the plot area
#: starts on the page and where plotly's toolbar ends.
CHART = """(() => {
  const gd = document.querySelector('.js-plotly-plot');
  const fl = gd._fullLayout;
  const traces = gd._fullData
    .filter(t => (t.yaxis || 'y') === 'y' && t.visible !== false)
    .map(t => ({name: t.name, ys: Array.from(t.y || [])
                  .filter(v => v !== null && v !== undefined && Number.isFinite(+v))
                  .map(Number)}))
    .filter(t => t.ys.length);
  const bar = gd.querySelector('.modebar');
  return {range: fl.yaxis.range, traces: traces,
          plotTop: gd.getBoundingClientRect().top + fl._size.t,
          barBottom: bar ? bar.getBoundingClientRect().bottom : null};
})()"""

#: The first data frame's scroller: (scrollWidth, clientWidth, scrollHeight, clientHeight),
#: and the text of its accessible table (what the canvas shows, row by row).
GRID = """(() => {
  const frame = document.querySelector('[data-testid="stDataFrame"]');
  const s = frame && frame.querySelector('.dvn-scroller');
  const t = frame && frame.querySelector('table');
  if (!s || !t || !t.querySelector('tr')) return null;  // not drawn yet
  return {size: [s.scrollWidth, s.clientWidth, s.scrollHeight, s.clientHeight],
          rows: t ? [...t.querySelectorAll('tr')].map(r => [...r.children]
                      .map(c => c.innerText.trim())) : []};
})()"""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if chromium_path() is None:
        pytest.skip("chromium is not installed: run `bash scripts/ensure-chromium.sh` (as root)")
    path = tmp_path_factory.mktemp("reads-browser") / "reads.db"
    api.import_file(INDEXINATOR, db=path, user="indexinator")
    api.import_file(CMRADE, db=path, user="cmrade")
    api.group_create("club", db=path)
    api.group_add("club", ["indexinator", "cmrade", "nobodyhere"], db=path)
    return path


@pytest.fixture(scope="module")
def url(db: Path) -> Iterator[str]:
    with running_dashboard(db) as served:
        yield served


def visit(url: str, path: str, shot: str, width: int, ready: str = PAGE_READY,
          probe: str | None = None) -> tuple[str, Any]:
    """Open ``path`` at ``width`` px, wait until drawn, save ``reads-{shot}-{width}.png``;
    the page's text and ``probe``'s value."""
    with Browser(width, HEIGHT) as browser:
        browser.goto(url + path)
        assert browser.wait_for(ready, timeout=90), f"{path} never rendered"
        time.sleep(1.5)  # the grid and plotly finish drawing
        found = browser.evaluate(probe) if probe else None
        deadline = time.monotonic() + 60
        while probe and (found is None or (isinstance(found, list) and None in found)) \
                and time.monotonic() < deadline:
            time.sleep(0.5)  # on a loaded machine the grid draws late
            found = browser.evaluate(probe)
        browser.screenshot(ARTIFACTS / f"reads-{shot}-{width}.png")
        text = browser.evaluate("document.body.innerText")
    assert not [bad for bad in BAD_TEXT if bad in text], text
    return text, found


# 6. Every plotted point inside the axes, the toolbar off the plot area.

@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(("player", "perf", "scale"), [
    ("cmrade", "correspondence", ""),  # the Lichess line ends at 1835, its highest
    ("cmrade", "bullet", "&scale=lichess"),
    ("indexinator", "blitz", ""),
])
def test_every_trace_ends_inside_the_axes_below_the_toolbar(
        url: str, player: str, perf: str, scale: str, width: int) -> None:
    _, chart = visit(url, f"/?player={player}&perf={perf}{scale}", f"{player}-{perf}", width,
                     CHART_READY, CHART)
    low, high = chart["range"]
    margin = 0.01 * (high - low)
    assert chart["traces"]
    for trace in chart["traces"]:
        last = trace["ys"][-1]
        assert low + margin <= last <= high - margin, (trace["name"], last, low, high)
        assert low <= min(trace["ys"]) and max(trace["ys"]) <= high, trace["name"]
    assert chart["barBottom"] is not None and chart["barBottom"] <= chart["plotTop"] + 1


# 2. The Group page's missing figures read "—", as the CLI prints them.

@pytest.mark.parametrize("width", WIDTHS)
def test_the_group_table_shows_no_none(url: str, width: int) -> None:
    _, found = visit(url, "/group?group=club&perf=blitz", "group", width,
                     PAGE_READY + " && !!document.querySelector('.js-plotly-plot .legendtext')",
                     f"[{GRID}, {CHART}]")
    grid, chart = found
    cells = [c for row in grid["rows"] for c in row]
    assert "indexinator" in cells and "cmrade" in cells
    assert "None" not in cells and "nan" not in cells
    # The group's chart too: every line inside the axes, the toolbar above the plot.
    low, high = chart["range"]
    for trace in chart["traces"]:
        assert low + 0.01 * (high - low) <= min(trace["ys"]), trace["name"]
        assert max(trace["ys"]) <= high - 0.01 * (high - low), trace["name"]
    assert chart["barBottom"] is not None and chart["barBottom"] <= chart["plotTop"] + 1


# 7. Periods: newest first, every month in view (the page scrolls, not a box), every column
#    inside the page at 1280 px.

@pytest.mark.parametrize("width", WIDTHS)
def test_periods_newest_first_every_row_and_column_in_view(url: str, db: Path,
                                                           width: int) -> None:
    report = api.replay("indexinator", "blitz", db=db)
    text, grid = visit(url, "/periods?player=indexinator&perf=blitz", "periods", width,
                       probe=GRID)
    scroll_w, client_w, scroll_h, client_h = grid["size"]
    assert scroll_w <= client_w + 1, "a column is cut at the right edge"
    assert scroll_h <= client_h + 1, "months hidden in an inner scroll box"
    months = [c for row in grid["rows"] for c in row if re.fullmatch(r"\d{4}-\d{2}", c)]
    assert months == [p.period for p in reversed(report.periods)], grid["rows"][:3]
    assert "What happened, month by month" in text


# 8. Games: "Expected", not PD; ΔR in view at 1280 px.

GAMES_FIRST = {"_selector": 32, "date": 95, "colour": 55, "opponent": 130,
               "opponent_rating": 90, "opponent_on_scale": 80, "outcome": 60, "expected": 75,
               "delta": 65, "points": 70}


@pytest.mark.parametrize("width", WIDTHS)
def test_games_say_expected_and_show_delta_r(url: str, width: int) -> None:
    _, grid = visit(url, "/games?player=indexinator&perf=blitz", "games", width, probe=GRID)
    header = grid["rows"][0]
    assert "Expected" in header and "ΔR" in header and "PD" not in header
    assert header.index("ΔR") < header.index("Counted, or why not")
    # The columns up to K × ΔR fit in the grid's width: ΔR is not cut at the edge.
    assert sum(GAMES_FIRST.values()) <= grid["size"][1]


# 9. Settings: "Start: unrated" greys out the start rating and its scale.

SETTINGS = """(() => ({
  rating: document.querySelector('input[aria-label^="Start rating"]').disabled,
  scale: [...document.querySelectorAll('[data-testid="stRadio"]')]
    .filter(r => r.innerText.startsWith('The start rating is'))
    .map(r => [...r.querySelectorAll('input')].every(i => i.disabled))[0],
}))()"""


@pytest.mark.parametrize("width", WIDTHS)
def test_settings_unrated_greys_out_the_start_rating(url: str, width: int) -> None:
    _, state = visit(url, "/settings?player=indexinator", "settings", width, probe=SETTINGS)
    assert state == {"rating": True, "scale": True}


# 10. The read-only server's /import says it is read-only, no "Page not found".

@pytest.fixture(scope="module")
def read_only_url(db: Path) -> Iterator[str]:
    with running_dashboard(db, "--read-only") as served:
        yield served


@pytest.mark.parametrize("width", WIDTHS)
def test_read_only_import_says_the_server_is_read_only(read_only_url: str, width: int) -> None:
    text, _ = visit(read_only_url, "/import", "read-only-import", width)
    assert "Importing is off on this server" in text
    assert "served read-only" in text and "tracker import USERNAME" in text
    assert "Page not found" not in text

