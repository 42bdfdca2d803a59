"""End to end: ``tracker dashboard`` on the sample, loaded in headless Chromium.

Screenshots are saved under ``test-artifacts/`` (git-ignored): ``overview.png`` and one per
page. Skipped only when Debian's ``chromium`` is missing (``bash scripts/ensure-chromium.sh``
installs it; ``make test`` runs that first).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard import charts
from tests.browser import Browser, running_dashboard

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
WIDTH, HEIGHT = 1400, 1250

#: The page has drawn: a plotly chart with its SVG, the metrics, and the app is not running.
CHART_READY = (
    "!!document.querySelector('.js-plotly-plot .main-svg .legendtext')"
    " && document.querySelectorAll('[data-testid=\"stMetric\"]').length >= 4"
    " && !document.querySelector('[data-testid=\"stStatusWidget\"]')"
)
PAGE_READY = (
    "!!document.querySelector('[data-testid=\"stHeading\"]')"
    " && !document.querySelector('[data-testid=\"stStatusWidget\"]')"
    " && !document.querySelector('[data-testid=\"stSkeleton\"]')"
)
BAD_TEXT = ("Traceback", "Exception", "Error", "Page not found")
#: The sidebar's page links as shown (a material icon's name, then the page's title).
NAV_LINKS = ("[...document.querySelectorAll('[data-testid=\"stSidebarNav\"] a')]"
             ".map(a => a.textContent)")
TITLES = ("Overview", "Periods", "Games", "Group", "Calculator", "Import", "Settings")


@pytest.fixture(scope="module")
def dashboard_url(indexinator_db: Path, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[str]:
    """``tracker --db COPY dashboard --port FREE`` running; yields its URL."""
    tmp_path = tmp_path_factory.mktemp("dashboard")
    db = tmp_path / "sample.db"
    with sqlite3.connect(indexinator_db) as src, sqlite3.connect(db) as dst:
        src.backup(dst)
    with running_dashboard(db) as url:
        # Bound to the loopback interface only, as the CLI promises by default.
        port = url.rsplit(":", 1)[1]
        assert f"127.0.0.1:{port}" in (tmp_path / f"dashboard-{port}.log").read_text()
        yield url


def test_overview_renders_the_chart_without_errors(dashboard_url: str) -> None:
    with Browser(WIDTH, HEIGHT) as browser:
        browser.goto(dashboard_url)
        assert browser.wait_for(CHART_READY, timeout=60), "the Overview chart never rendered"
        time.sleep(0.5)  # let plotly finish drawing before the picture
        shot = browser.screenshot(ARTIFACTS / "overview.png")
        text = browser.evaluate("document.body.innerText")
        headline = browser.evaluate(
            "[...document.querySelectorAll('[data-testid=\"stMetric\"]')]"
            ".map(e => e.innerText).join(' | ')")
        legend = browser.evaluate(
            "[...document.querySelectorAll('.js-plotly-plot .legendtext')]"
            ".map(e => e.textContent)")
        lichess_path = browser.evaluate(
            "document.querySelector('.js-plotly-plot .scatterlayer .trace .js-line')"
            "?.getAttribute('d')?.length ?? 0")
    assert shot.stat().st_size > 50_000
    assert not [bad for bad in BAD_TEXT if bad in text], text
    # The default is the answer on the FIDE scale: the models' median, rated (issue 20)
    label = "FIDE scale (all models: lebowitz, mathtuition)"
    assert charts.LICHESS_NAME in legend and charts.MEDIAN_NAME in legend
    assert lichess_path > 1000  # the Lichess line is drawn, not just announced
    assert "indexinator — blitz" in text
    headline = " ".join(str(headline).split())
    assert "FIDE-style rating now 1499" in headline, headline
    assert "unrated" not in headline.lower() and "fell to 1361" not in text
    assert f"Figures on the {label}" in text
    assert "the models' median; band 1453–1545" in text


@pytest.mark.parametrize("page", ["periods", "games", "calculator", "import", "settings"])
def test_every_page_renders_without_errors(dashboard_url: str, page: str) -> None:
    with Browser(WIDTH, 1000) as browser:
        browser.goto(f"{dashboard_url}/{page}")
        assert browser.wait_for(PAGE_READY, timeout=60), f"{page} never rendered"
        time.sleep(0.3)
        browser.screenshot(ARTIFACTS / f"{page}.png")
        text = browser.evaluate("document.body.innerText")
    assert not [bad for bad in BAD_TEXT if bad in text], text


def test_a_direct_link_opens_its_page_without_page_not_found(dashboard_url: str) -> None:
    """Watched from the first paint: with the pages in a folder named ``pages/`` Streamlit's
    old multipage app showed the raw file names in the sidebar and "Page not found"."""
    with Browser(WIDTH, 1000) as browser:
        browser.goto(f"{dashboard_url}/import")
        seen_text: list[str] = []
        seen_nav: set[tuple[str, ...]] = set()
        deadline, ready_at = time.monotonic() + 60, None
        while time.monotonic() < deadline:
            seen_text.append(browser.evaluate("document.body.innerText") or "")
            seen_nav.add(tuple(browser.evaluate(NAV_LINKS) or ()))
            if ready_at is None and browser.evaluate(PAGE_READY):
                ready_at = time.monotonic()
            if ready_at is not None and time.monotonic() > ready_at + 1.5:
                break
            time.sleep(0.1)
        heading = browser.evaluate("document.querySelector('[data-testid=\"stHeading\"]')"
                                   "?.innerText")
        path = browser.evaluate("location.pathname")
    assert ready_at is not None, "the Import page never rendered"
    assert not [t for t in seen_text if "Page not found" in t]
    assert heading == "Import games" and path == "/import"
    for links in seen_nav - {()}:
        assert len(links) == len(TITLES) and all(
            link.endswith(title) for link, title in zip(links, TITLES, strict=True)), links


def test_the_url_holds_player_and_perf_keys(dashboard_url: str) -> None:
    """The README's example and the QA's: the URL names the player's id and the perf key, and
    keeps them, unchanged, across a page switch."""
    with Browser(WIDTH, HEIGHT) as browser:
        for query, heading in (("player=indexinator&perf=blitz", "indexinator — blitz"),
                               ("player=Indexinator&perf=BULLET", "indexinator — bullet")):
            browser.goto(f"{dashboard_url}/?{query}")
            assert browser.wait_for(CHART_READY, timeout=60), query
            assert browser.evaluate("document.querySelector('h2')?.textContent") == heading
            perf = heading.split(" — ")[1]
            assert browser.wait_for(
                f"location.search === '?player=indexinator&perf={perf}'", timeout=10), \
                browser.evaluate("location.search")
        browser.evaluate("[...document.querySelectorAll('[data-testid=\"stSidebarNav\"] a')]"
                         ".find(a => a.textContent.endsWith('Periods')).click()")
        assert browser.wait_for("document.querySelector('h2')?.textContent"
                                " === 'Rating periods — indexinator, bullet'", timeout=60)
        assert browser.evaluate("location.pathname + location.search") == \
            "/periods?player=indexinator&perf=bullet"
