"""End to end: the Games page of an analysed game in headless Chromium shows the eval graph,
the turning point's board and both sides' levels; the Overview draws the monthly levels.
Screenshots in ``test-artifacts/`` (``games-strength.png``, ``overview-strength.png``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.browser import Browser, running_dashboard
from tests.conftest import ANALYSED
from tests.test_dashboard_browser import ARTIFACTS, BAD_TEXT
from tracker.importing import import_file
from tracker.store.db import Store

pytestmark = pytest.mark.browser

GAME = "ZWcbDCnz"  # reda46's newest game: black's turning point 43…d2?? (Rh8 was better)
WIDTH, HEIGHT = 1400, 2600

#: The game's section has drawn: the eval graph's legend, the board, two "Level shown"
#: metrics, and the app is idle.
GAME_READY = (
    "[...document.querySelectorAll('.js-plotly-plot .legendtext')]"
    ".some(e => e.textContent.includes(\"White's Win%\"))"
    " && [...document.querySelectorAll('[data-testid=\"stImage\"] img')].length >= 2"
    " && [...document.querySelectorAll('[data-testid=\"stMetricLabel\"]')]"
    ".filter(e => e.textContent.includes('Level shown')).length === 2"
    " && !document.querySelector('[data-testid=\"stStatusWidget\"]')"
)
#: The Overview has drawn its chart and said which months' levels it leaves out.
OVERVIEW_READY = (
    "document.querySelectorAll('.js-plotly-plot').length > 0"
    " && document.body.innerText.includes('Green squares')"
    " && !document.querySelector('[data-testid=\"stStatusWidget\"]')"
)


@pytest.fixture(scope="module")
def dashboard_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp_path = tmp_path_factory.mktemp("dashboard-strength")
    db = tmp_path / "analysed.db"
    with Store(str(db)) as store:
        import_file(ANALYSED, store=store, user="reda46")
    with running_dashboard(db) as url:
        yield url


def test_the_games_page_of_an_analysed_game_shows_graph_board_and_both_levels(
        dashboard_url: str) -> None:
    with Browser(WIDTH, HEIGHT) as browser:
        browser.goto(f"{dashboard_url}/games?player=reda46&perf=rapid&game={GAME}")
        ready = browser.wait_for(GAME_READY, timeout=90)
        browser.screenshot(ARTIFACTS / "games-strength.png")
        assert ready, "the game's strength section never rendered"
        text = browser.evaluate("document.body.innerText")
        assert not any(bad in text for bad in BAD_TEXT), text[:2000]
        assert "Turning point for black: 43…d2??" in text
        assert "Better was Rh8" in text
        # both sides' levels: an estimate and its range each
        levels = browser.evaluate(
            "[...document.querySelectorAll('[data-testid=\"stMetric\"]')]"
            ".filter(m => m.innerText.includes('Level shown')).map(m => m.innerText)")
        assert len(levels) == 2 and all("–" in x for x in levels), levels
        # the judgments are marked on the graph: Lichess judged blunders in this game
        legend = browser.evaluate("[...document.querySelectorAll('.legendtext')]"
                                  ".map(e => e.textContent)")
        assert "Blunder (??)" in legend, legend


def test_the_overview_draws_only_narrow_monthly_levels(dashboard_url: str) -> None:
    """reda46's months: 2022-11's 32 games give a range of 404 points, the others fewer games
    and wider ranges: none is narrower than 400, so none is drawn, and the page says so."""
    with Browser(WIDTH, 1250) as browser:
        browser.goto(f"{dashboard_url}/?player=reda46&perf=rapid")
        ready = browser.wait_for(OVERVIEW_READY, timeout=90)
        browser.screenshot(ARTIFACTS / "overview-strength.png")
        assert ready, "the Overview never drew its chart"
        text = browser.evaluate("document.body.innerText")
        assert "Green squares: the level each month's analysed games show" in text
        assert "with too few analysed games for a range narrower than 400 points not drawn" in text
        assert "The last 20 analysed games show 1629 (1410–1841)" in text
        legend = browser.evaluate("[...document.querySelectorAll('.legendtext')]"
                                  ".map(e => e.textContent)")
        assert not any(x.startswith("Level shown in the moves") for x in legend), legend
        assert not any(bad in text for bad in BAD_TEXT), text[:2000]
