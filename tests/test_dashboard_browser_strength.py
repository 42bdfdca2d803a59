"""End to end: the Games page of an analysed game in headless Chromium shows the eval graph,
the turning point's board and both sides' levels; the Overview draws the monthly levels; the
analyse panel shows the time left and its Stop button stops the run, keeping finished games.
Screenshots in ``test-artifacts/`` (``games-strength.png``, ``overview-strength.png``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import Browser, running_dashboard
from tests.conftest import ANALYSED
from tests.test_analyse import NODES, bare_export, needs_engine
from tests.test_dashboard_browser import ARTIFACTS, BAD_TEXT
from tracker.importing import import_file
from tracker.store import analysis as stored
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
        # both sides' levels: an estimate and its range each, the range under the estimate
        levels = browser.evaluate(
            "[...document.querySelectorAll('[data-testid=\"stMetric\"]')]"
            ".filter(m => m.innerText.includes('Level shown')).map(m => m.innerText)")
        assert len(levels) == 2, levels
        assert "10–90 % range 1287–2338" in text and "10–90 % range 1277–2327" in text
        # the judgments are marked on the graph: Lichess judged blunders in this game
        legend = browser.evaluate("[...document.querySelectorAll('.legendtext')]"
                                  ".map(e => e.textContent)")
        assert "Blunder (??)" in legend, legend


def test_at_800_px_no_level_is_cut_short(dashboard_url: str) -> None:
    """At 800 px a side's "Level shown" was a metric cut to "1733 (1659–…": the range, what
    holds, was the part lost. Every metric value on the game's page shows whole."""
    with Browser(800, HEIGHT) as browser:
        browser.goto(f"{dashboard_url}/games?player=reda46&perf=rapid&game={GAME}")
        ready = browser.wait_for(GAME_READY, timeout=90)
        browser.screenshot(ARTIFACTS / "games-strength-800.png")
        assert ready, "the game's strength section never rendered"
        cut = browser.evaluate(
            "[...document.querySelectorAll('[data-testid=\"stMetricValue\"]')]"
            ".filter(e => e.scrollWidth > e.clientWidth + 1 || [...e.querySelectorAll('*')]"
            ".some(c => c.scrollWidth > c.clientWidth + 1)).map(e => e.innerText)")
        assert cut == [], cut
        text = browser.evaluate("document.body.innerText")
        assert "10–90 % range 1287–2338" in text and "10–90 % range 1277–2327" in text


#: The eval graph's toolbar and its turning point's label: their boxes on the page.
EVAL_BOXES = """(() => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')].find(
    g => [...g.querySelectorAll('.legendtext')].some(e => e.textContent.includes("White's")));
  const bar = gd && gd.querySelector('.modebar');
  const label = gd && gd.querySelector('.annotation');
  if (!bar || !label) return null;
  const b = bar.getBoundingClientRect(), l = label.getBoundingClientRect();
  return {barBottom: b.bottom, barLeft: b.left, labelTop: l.top, labelRight: l.right,
          text: label.textContent};
})()"""


@pytest.mark.parametrize("width", [800, 1280])
def test_the_turning_points_label_is_not_under_the_toolbar(dashboard_url: str,
                                                           width: int) -> None:
    """The eval graph's "turning point" label sat at the top of the graph, where plotly's
    toolbar is drawn: at 800 px the toolbar's icons covered it."""
    with Browser(width, HEIGHT) as browser:
        browser.goto(f"{dashboard_url}/games?player=reda46&perf=rapid&game={GAME}")
        assert browser.wait_for(GAME_READY, timeout=90)
        boxes = None
        for _ in range(40):
            boxes = browser.evaluate(EVAL_BOXES)
            if boxes:
                break
            time.sleep(0.25)
        assert boxes is not None and boxes["text"] == "turning point", boxes
        assert boxes["labelTop"] >= boxes["barBottom"], boxes


def test_the_overview_draws_only_narrow_monthly_levels(dashboard_url: str) -> None:
    """reda46's months: 2022-11's 32 games give a range of 323 points (level model 5), drawn;
    the others have 1–7 games and wider ranges: not drawn, and the page says so."""
    with Browser(WIDTH, 1250) as browser:
        browser.goto(f"{dashboard_url}/?player=reda46&perf=rapid")
        ready = browser.wait_for(OVERVIEW_READY, timeout=90)
        browser.screenshot(ARTIFACTS / "overview-strength.png")
        assert ready, "the Overview never drew its chart"
        text = browser.evaluate("document.body.innerText")
        assert "Green squares: the level each month's analysed games show" in text
        assert "with too few analysed games for a range narrower than 400 points not drawn" in text
        assert "The last 20 analysed games show 1635 (1478–1839)" in text
        legend = browser.evaluate("[...document.querySelectorAll('.legendtext')]"
                                  ".map(e => e.textContent)")
        assert sum(1 for x in legend if x.startswith("Level shown in the moves")) == 1, legend
        assert not any(bad in text for bad in BAD_TEXT), text[:2000]


def _click(browser: Browser, text: str, selector: str = "button") -> bool:
    """Click (a real mouse click, at its place on the screen) the first ``selector`` whose
    text ends with ``text`` (after any icon's name); False if there is none."""
    box = browser.evaluate(
        f"(() => {{ const b = [...document.querySelectorAll('{selector}')]"
        f".find(e => e.innerText.trim().endsWith({text!r})); if (!b) return null; "
        "b.scrollIntoView({block: 'center'}); const r = b.getBoundingClientRect(); "
        "return [r.x + r.width / 2, r.y + r.height / 2]; })()")
    if not box:
        return False
    x, y = box
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        browser.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                     clickCount=1)
    return True


def _wait_click(browser: Browser, text: str, selector: str = "button",
                timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _click(browser, text, selector):
            return True
        time.sleep(0.25)
    return False


@needs_engine
def test_the_analyse_panel_shows_the_time_left_and_its_stop_button_stops_the_run(
        tmp_path: Path) -> None:
    db = tmp_path / "bare.db"
    with Store(str(db)) as store:
        import_file(bare_export(tmp_path), store=store, user="reda46")
    with running_dashboard(db) as url, Browser(WIDTH, 1400) as browser:
        browser.goto(f"{url}/games?player=reda46&perf=rapid")
        ready = browser.wait_for("!document.querySelector('[data-testid=\"stStatusWidget\"]')"
                                 " && document.querySelectorAll('summary').length > 0", 90)
        nodes_input = ("(() => { const i = [...document.querySelectorAll('input')].find(e => "
                       "e.getAttribute('aria-label') === 'Nodes per position'); if (!i) return "
                       "false; i.focus(); i.select(); return document.activeElement === i; })()")
        assert ready, "the Games page never finished drawing"
        panel_open = ("[...document.querySelectorAll('details')].some(d => d.open && "
                      "d.innerText.includes(\"Analyse reda46's rapid games\"))")
        for _ in range(3):  # a click landing while the page still moves is clicked again
            if not browser.evaluate(panel_open):
                assert _click(browser, "Analyse reda46's rapid games with Stockfish",
                              "summary"), "no analyse panel"
            if browser.wait_for(nodes_input, 20):
                break
        # a small budget, typed as a person would: a game in seconds, 20 in a minute or more
        assert browser.wait_for(nodes_input, 30)
        browser.send("Input.insertText", text=str(NODES * 10))
        started = "document.body.innerText.includes('Analysed ')"
        for _ in range(3):  # a click landing while the page still moves is clicked again
            assert _wait_click(browser, "Analyse"), "no Analyse button"
            if browser.wait_for(started, 20):
                break
        assert browser.wait_for(started, 40), browser.evaluate("document.body.innerText")[-800:]
        # the bar says the rate and the time left once a game is done
        eta = browser.wait_for("document.body.innerText.includes('games/s · about')",
                               timeout=240)
        browser.screenshot(ARTIFACTS / "analyse-running.png")
        assert eta, browser.evaluate("document.body.innerText")[-1500:]
        assert _click(browser, "Stop")
        stopped = browser.wait_for("document.body.innerText.includes('Stopped: ')", timeout=90)
        browser.screenshot(ARTIFACTS / "analyse-stopped.png")
        text = browser.evaluate("document.body.innerText")
        assert stopped, text[-1500:]
        assert "partial" in text and not any(bad in text for bad in BAD_TEXT)
        with Store(str(db)) as store:
            kept = stored.count_analysed(store, "reda46").get("engine", 0)
            assert 1 <= kept < 20  # the finished games kept, the rest not analysed
            time.sleep(3)
            assert stored.count_analysed(store, "reda46").get("engine", 0) == kept  # ended
