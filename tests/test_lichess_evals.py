"""The API import asks Lichess for evals and accuracy, and analysed games arrive analysed; the
local Lichess serves a game's analysis only when asked, as Lichess does (real analysed games
from the shared set: tests/fixtures/lichess/analysed-reda46-rapid.ndjson)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import requests

from tests.conftest import ANALYSED
from tests.lichess_server import LichessServer, ndjson_lines
from tracker.core.config import USER_AGENT
from tracker.core.evals import from_lichess_entry
from tracker.importing.lichess import LichessOptions, import_user
from tracker.sources.pgn import read_pgn
from tracker.store import analysis as stored
from tracker.store.db import Store

LINES = ndjson_lines(ANALYSED)
FAST = {"retry_wait_429": 0.05, "retry_wait": 0.01, "timeout": (2.0, 2.0)}


def _with_accuracy(line: str) -> str:
    """The game as Lichess sends it with ``accuracy=true``: each player's accuracy too."""
    obj = json.loads(line)
    for side, acc in zip(obj["players"].values(), (81, 74), strict=True):
        side["analysis"]["accuracy"] = acc
    return json.dumps(obj)


@pytest.fixture
def lichess() -> Iterator[LichessServer]:
    with LichessServer() as server:
        server.add_user("reda46", [_with_accuracy(LINES[0]), *LINES[1:]])
        yield server


def _get(server: LichessServer, accept: str = "application/x-ndjson", **params: str
         ) -> requests.Response:
    return requests.get(f"{server.url}/api/games/user/reda46", params=params, timeout=10,
                        headers={"Accept": accept, "User-Agent": USER_AGENT})


def test_the_server_sends_analysis_only_when_asked(lichess: LichessServer) -> None:
    plain = [json.loads(x) for x in _get(lichess).text.splitlines()]
    assert len(plain) == 41
    assert not any("analysis" in g or "analysis" in g["players"]["white"] for g in plain)
    evals = [json.loads(x) for x in _get(lichess, evals="true").text.splitlines()]
    assert all(len(g["analysis"]) >= 1 for g in evals)
    assert evals[0]["players"]["white"]["analysis"] == {"inaccuracy": 2, "mistake": 3,
                                                        "blunder": 4, "acpl": 72}
    full = json.loads(_get(lichess, evals="true", accuracy="true").text.splitlines()[0])
    assert full["players"]["white"]["analysis"]["accuracy"] == 81


def test_the_server_writes_evals_into_a_pgn_when_asked(lichess: LichessServer) -> None:
    pgn = _get(lichess, accept="application/x-chess-pgn", evals="true").content
    records = list(read_pgn(pgn.splitlines(keepends=True)))
    assert len(records) == 41
    first = json.loads(LINES[0])
    assert records[0].id == first["id"] and records[0].analysis is not None
    assert [(e.cp, e.mate) for e in records[0].analysis.evals] == [
        (e.get("eval"), e.get("mate")) for e in first["analysis"]]
    plain = _get(lichess, accept="application/x-chess-pgn").content
    assert b"%eval" not in plain


def test_the_api_import_asks_for_evals_and_accuracy_and_keeps_them(
        lichess: LichessServer, store: Store) -> None:
    summary = import_user("reda46", store=store,
                          options=LichessOptions(base_url=lichess.url, **FAST))
    assert (summary.new, summary.evals, summary.status) == (41, 41, "complete")
    (request,) = lichess.game_requests()
    assert (request.query["evals"], request.query["accuracy"]) == ("true", "true")
    assert stored.count_analysed(store, "reda46") == {"lichess": 41}
    game = stored.game_analysis(store, json.loads(LINES[5])["id"])
    assert game is not None
    assert game.analysis.evals == tuple(
        from_lichess_entry(e) for e in json.loads(LINES[5])["analysis"])
