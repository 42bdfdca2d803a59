"""End to end in headless Chromium: the Group page of a club of 12 (the test roster, synced
from the local Lichess-compatible server) with three players overlaid, and the same database
served read-only (``--host 0.0.0.0 --read-only``) with no import controls anywhere.

Screenshots: ``test-artifacts/group.png``, ``group-picked.png``, ``read-only.png``,
``read-only-settings.png``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import Browser, chromium_path, running_dashboard
from tests.club_roster import make_roster, serve_roster
from tests.lichess_server import LichessServer
from tracker import api

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
WIDTH, HEIGHT = 1400, 1300

READY = ("!!document.querySelector('[data-testid=\"stHeading\"]')"
         " && !document.querySelector('[data-testid=\"stStatusWidget\"]')"
         " && !document.querySelector('[data-testid=\"stSkeleton\"]')")
CHART_READY = READY + " && !!document.querySelector('.js-plotly-plot .main-svg .legendtext')"
LEGEND = ("[...document.querySelectorAll('.js-plotly-plot .legendtext')]"
          ".map(e => e.textContent)")
NAV = ("[...document.querySelectorAll('[data-testid=\"stSidebarNav\"] a')]"
       ".map(a => a.textContent)")
BAD_TEXT = ("Traceback", "Exception", "Error", "Page not found")


@pytest.fixture(scope="module")
def club_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The roster's 12 players synced into a new database, all in the group ``club``."""
    if chromium_path() is None:
        pytest.skip("chromium is not installed: run `bash scripts/ensure-chromium.sh` (as root)")
    tmp = tmp_path_factory.mktemp("club")
    db = tmp / "club.db"
    roster = make_roster(12, linked=10)
    csv = tmp / "roster.csv"
    csv.write_text(roster.csv())
    api.group_create("club", db=db)
    assert len(api.group_add("club", from_csv=csv, db=db).added) == 12
    with LichessServer() as server:
        serve_roster(server, roster)
        result = api.sync("club", db=db, base_url=server.url)
    assert [p.status for p in result.players] == ["synced"] * 12
    return db


def _serve(db: Path, *args: str) -> Iterator[str]:
    with running_dashboard(db, *args) as url:
        yield url


@pytest.fixture(scope="module")
def writable_url(club_db: Path) -> Iterator[str]:
    yield from _serve(club_db)


@pytest.fixture(scope="module")
def read_only_url(club_db: Path) -> Iterator[str]:
    yield from _serve(club_db, "--host", "0.0.0.0", "--read-only")


def _rows_shown(browser: Browser) -> int:
    """The data rows of the page's table (the grid's accessible rows, header left out)."""
    return int(browser.evaluate(
        "document.querySelectorAll('[data-testid=\"stDataFrame\"] [role=\"row\"]').length")
        or 0) - 1


def test_the_group_page_with_12_players_and_a_3_player_overlay(writable_url: str) -> None:
    with Browser(WIDTH, HEIGHT) as browser:
        browser.goto(f"{writable_url}/group?group=club&perf=blitz")
        assert browser.wait_for(CHART_READY, timeout=90), "the Group page never rendered"
        time.sleep(0.8)
        browser.screenshot(ARTIFACTS / "group.png")
        text = browser.evaluate("document.body.innerText")
        legend = browser.evaluate(LEGEND)
        rows = _rows_shown(browser)
        lines = browser.evaluate(
            "[...document.querySelectorAll('.js-plotly-plot .scatterlayer .trace .js-line')]"
            ".map(p => ((p.getAttribute('d') || '').match(/[HV]/g) || []).length)")
    assert not [bad for bad in BAD_TEXT if bad in text], text
    assert "club — blitz" in text and "Players on the chart" in text
    assert rows == 12
    assert len(legend) == 3 and all(name.startswith("member") for name in legend)
    # Three step lines drawn, not only announced: a step (H then V) for each of the 12 months.
    assert len(lines) == 3 and all(n >= 20 for n in lines), lines


def test_the_read_only_dashboard_has_no_import_controls(read_only_url: str) -> None:
    with Browser(WIDTH, 1000) as browser:
        browser.goto(f"{read_only_url}/group?group=club&perf=blitz")
        assert browser.wait_for(CHART_READY, timeout=90), "the read-only Group page"
        time.sleep(0.5)
        browser.screenshot(ARTIFACTS / "read-only.png")
        nav = browser.evaluate(NAV)
        text = browser.evaluate("document.body.innerText")
        browser.goto(f"{read_only_url}/settings")
        assert browser.wait_for(READY, timeout=90), "the read-only Settings page"
        time.sleep(0.5)
        browser.screenshot(ARTIFACTS / "read-only-settings.png")
        settings_text = browser.evaluate("document.body.innerText")
        controls = browser.evaluate(
            "[...document.querySelectorAll('button, input, textarea')]"
            ".filter(e => e.closest('[data-testid=\"stMain\"]'))"
            ".map(e => e.innerText || e.getAttribute('aria-label') || e.type)")
        browser.goto(f"{read_only_url}/import")
        assert browser.wait_for(READY, timeout=90)
        import_text = browser.evaluate("document.body.innerText")
    assert [n for n in nav if n.endswith("Import")] == []
    assert any(n.endswith("Group") for n in nav) and any(n.endswith("Settings") for n in nav)
    for page in (text, settings_text):
        assert "Read-only: this dashboard shows the database and changes nothing" in page
    assert "Import games" not in settings_text and "Link and fetch" not in settings_text
    assert not [c for c in controls if c in ("Save", "Import from Lichess", "Import file")]
    assert "Lichess username" not in import_text and "Import games" not in import_text
