"""A name from a file is text on every page, never Markdown (issue 19, item 9): a player
named ``![p](http://127.0.0.1:PORT/px.png)`` would be an image the viewer's browser fetches.

A tiny HTTP server on 127.0.0.1 counts every request; the dashboard runs on a database whose
player, events, openings and comments all carry such an image; headless Chromium renders the
Overview, Periods and Games pages; the server must have seen no request, and the headings must
show the name as its characters. Skipped only when Debian's ``chromium`` is missing.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from tests.browser import Browser, running_dashboard
from tests.test_dashboard_browser import ARTIFACTS, CHART_READY, PAGE_READY
from tracker import api

pytestmark = pytest.mark.browser

#: What the dashboard puts into ``://``, ``www.`` and ``@`` of a text from data
#: (``dashboard/ui.py``): invisible, it keeps Markdown from making a link of it.
WORD_JOINER = "\u2060"


class Counter(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Counter.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def injected_pgn(port: int) -> tuple[str, str]:
    """(PGN of 8 rated blitz games of the player named like an image, that name)."""
    host = f"http://127.0.0.1:{port}"
    name = f"![p]({host}/px.png)"
    games = []
    for i in range(8):
        white, black = (name, f"opp{i}") if i % 2 == 0 else (f"opp{i}", name)
        result = ("1-0", "0-1", "1/2-1/2")[i % 3]
        day = f"2024.0{1 + i // 4}.1{i}"
        games.append(
            f'[Event "Rated blitz game ![e]({host}/event.png)"]\n'
            f'[Site "https://lichess.org/abcdef{i:02d}"]\n[Date "{day}"]\n'
            f'[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n'
            f'[UTCDate "{day}"]\n[UTCTime "12:00:00"]\n[WhiteElo "1500"]\n[BlackElo "1500"]\n'
            f'[WhiteRatingDiff "+5"]\n[BlackRatingDiff "-5"]\n[ECO "C20"]\n'
            f'[Opening "<img src=\'{host}/opening.png\'>"]\n[TimeControl "180+0"]\n\n'
            f"1. e4 e5 2. Nf3 Nc6 {{ ![c]({host}/comment.png) }} 3. Bb5 a6 {result}\n")
    return "\n".join(games), name


@pytest.fixture(scope="module")
def counting_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Counter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def injected_dashboard(counting_server: int, tmp_path_factory: pytest.TempPathFactory
                       ) -> Iterator[tuple[str, str]]:
    """``tracker dashboard`` on the injected database; yields (its URL, the player's name)."""
    tmp_path = tmp_path_factory.mktemp("injected")
    pgn, name = injected_pgn(counting_server)
    (tmp_path / "injected.pgn").write_text(pgn)
    db = tmp_path / "injected.db"
    summary = api.import_file(tmp_path / "injected.pgn", db=db)
    assert summary.new == 8 and summary.player == name.lower()
    with running_dashboard(db) as url:
        yield url, name


def test_a_name_like_an_image_is_shown_as_text_and_fetches_nothing(
        injected_dashboard: tuple[str, str]) -> None:
    url, name = injected_dashboard
    Counter.hits.clear()
    query = urllib.parse.urlencode({"player": name.lower(), "perf": "blitz"})
    headings: dict[str, str] = {}
    images: list[str] = []
    links: list[str] = []
    with Browser(1400, 1000) as browser:
        for page, ready in (("", CHART_READY), ("periods", PAGE_READY), ("games", PAGE_READY)):
            browser.goto(f"{url}/{page}?{query}")
            assert browser.wait_for(ready, timeout=60), f"{page or 'overview'} never rendered"
            time.sleep(1.0)  # any image in the page would have been requested by now
            browser.screenshot(ARTIFACTS / f"injected-{page or 'overview'}.png")
            headings[page] = browser.evaluate("document.querySelector('h2')?.textContent")
            links += browser.evaluate("[...document.querySelectorAll('h2 a, h3 a')]"
                                      ".map(a => a.href)") or []
            images += browser.evaluate("[...document.images].map(i => i.src)") or []
    assert Counter.hits == []
    assert not [src for src in images if "127.0.0.1" in src and "px.png" in src]
    # not even a link (Streamlit's own heading anchors, into the page, aside)
    assert [href for href in links if not href.startswith(url)] == []
    shown = {page: text.replace(WORD_JOINER, "") for page, text in headings.items()}
    assert shown == {"": f"{name} — blitz", "periods": f"Rating periods — {name}, blitz",
                     "games": f"Games — {name}, blitz"}
