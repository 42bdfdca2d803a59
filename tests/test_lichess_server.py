"""The local Lichess server follows the spec (shared/spec/LICHESS.md), point by point: the
importer's tests are only as good as the server they run against."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Iterator

import chess.pgn
import pytest
import requests

from tests.conftest import CASES, INDEXINATOR
from tests.lichess_server import LichessServer, game_to_pgn, iter_pgn_games, ndjson_lines
from tracker.core.config import USER_AGENT

NDJSON = {"Accept": "application/x-ndjson", "User-Agent": USER_AGENT}
LINES = ndjson_lines(INDEXINATOR)
GAMES = [json.loads(line) for line in LINES]


@pytest.fixture
def lichess() -> Iterator[LichessServer]:
    with LichessServer() as server:
        server.add_user("indexinator", LINES)
        yield server


def get(server: LichessServer, path: str, headers: dict[str, str] | None = None,
        **params: object) -> requests.Response:
    return requests.get(server.url + path, params=params, headers=headers or NDJSON, timeout=10)


def ids(resp: requests.Response) -> list[str]:
    return [json.loads(line)["id"] for line in resp.text.splitlines() if line]


def test_ndjson_is_chunked_newest_first_and_the_export_byte_for_byte(
    lichess: LichessServer,
) -> None:
    resp = get(lichess, "/api/games/user/indexinator")
    assert resp.status_code == 200
    assert resp.headers["Transfer-Encoding"] == "chunked"
    assert resp.headers["Content-Type"].startswith("application/x-ndjson")
    assert resp.content == INDEXINATOR.read_bytes()
    created = [json.loads(line)["createdAt"] for line in resp.text.splitlines()]
    assert created == sorted(created, reverse=True) and len(created) == 2907
    assert lichess.served_games == 2907


def test_sort_date_asc_gives_oldest_first(lichess: LichessServer) -> None:
    resp = get(lichess, "/api/games/user/indexinator", sort="dateAsc", max=3)
    assert ids(resp) == [g["id"] for g in GAMES[::-1][:3]]


def test_since_is_inclusive_and_until_exclusive_in_integer_ms(lichess: LichessServer) -> None:
    t = GAMES[100]["createdAt"]
    since = ids(get(lichess, "/api/games/user/indexinator", since=t))
    until = ids(get(lichess, "/api/games/user/indexinator", until=t))
    assert since[-1] == GAMES[100]["id"] and len(since) == 101
    assert until[0] == GAMES[101]["id"] and len(until) == 2907 - 101


def test_a_window_that_is_not_integer_ms_is_silently_ignored(lichess: LichessServer) -> None:
    t = GAMES[100]["createdAt"]
    assert len(ids(get(lichess, "/api/games/user/indexinator", since=f"{t}.0"))) == 2907


def test_max_perftype_rated_and_every_spelling_of_true(lichess: LichessServer) -> None:
    path = "/api/games/user/indexinator"
    assert len(ids(get(lichess, path, max=5))) == 5
    assert len(ids(get(lichess, path, perfType="bullet"))) == 16
    assert len(ids(get(lichess, path, perfType="bullet,blitz"))) == 2907
    for spelling in ("true", "True", "1"):
        assert len(ids(get(lichess, path, rated=spelling))) == 2907
    assert ids(get(lichess, path, rated="false")) == []


def test_a_filter_switches_window_and_order_to_last_move_at() -> None:
    early_long = {"id": "corr0001", "createdAt": 1_700_000_000_000,
                  "lastMoveAt": 1_720_000_000_000, "perf": "correspondence", "rated": True,
                  "status": "mate", "players": {}}
    late_short = {"id": "blitz001", "createdAt": 1_710_000_000_000,
                  "lastMoveAt": 1_710_000_300_000, "perf": "blitz", "rated": True,
                  "status": "mate", "players": {}}
    with LichessServer() as server:
        server.add_user("someone", [early_long, late_short])
        path = "/api/games/user/someone"
        assert ids(get(server, path)) == ["blitz001", "corr0001"]  # createdAt order
        assert ids(get(server, path, rated="true")) == ["corr0001", "blitz001"]  # lastMoveAt
        assert ids(get(server, path, since=1_715_000_000_000)) == []
        assert ids(get(server, path, since=1_715_000_000_000,
                       perfType="correspondence,blitz")) == ["corr0001"]


def test_ongoing_games_only_with_ongoing_true() -> None:
    playing = {"id": "playing1", "createdAt": 1_700_000_000_000, "lastMoveAt": 1_700_000_100_000,
               "perf": "blitz", "status": "started", "players": {}}
    with LichessServer() as server:
        server.add_user("someone", [playing])
        assert ids(get(server, "/api/games/user/someone")) == []
        assert ids(get(server, "/api/games/user/someone", ongoing="true")) == ["playing1"]


def test_anything_but_ndjson_gets_pgn_that_parses_into_the_same_games(
    lichess: LichessServer,
) -> None:
    resp = get(lichess, "/api/games/user/indexinator", headers={"User-Agent": USER_AGENT})
    assert resp.headers["Content-Type"].startswith("application/x-chess-pgn")
    games = list(iter_pgn_games(resp.text))
    assert len(games) == 2907
    assert [g.split('[GameId "')[1][:8] for g in games] == [g["id"] for g in GAMES]
    first = chess.pgn.read_game(io.StringIO(games[0]))
    assert first is not None and not first.errors
    assert first.headers["Event"] == "Rated Blitz game"
    assert first.headers["WhiteRatingDiff"] == "+7" and first.headers["TimeControl"] == "300+0"
    assert first.end().board().is_checkmate()


def test_unknown_and_closed_users_are_404() -> None:
    with LichessServer() as server:
        server.add_user("gone", LINES[:3], disabled=True)
        games = get(server, "/api/games/user/nobody")
        assert (games.status_code, games.content) == (404, b"")
        assert get(server, "/api/games/user/gone").status_code == 404
        user = get(server, "/api/user/nobody")
        assert (user.status_code, user.json()) == (404, {"error": "Not found"})
        closed = get(server, "/api/user/gone")
        assert closed.status_code == 200 and closed.json()["disabled"] is True
        assert "perfs" not in closed.json()
        assert get(server, "/api/user/gone/rating-history").status_code == 404


@pytest.mark.parametrize(
    "agent", ["python-requests/2.32.3", "Python-urllib/3.11", "curl/8.5.0", "python-urllib3/2.2"]
)
def test_generic_user_agents_get_an_html_404(lichess: LichessServer, agent: str) -> None:
    for path in ("/api/games/user/indexinator", "/api/user/indexinator"):
        resp = get(lichess, path, headers={"User-Agent": agent, "Accept": "application/x-ndjson"})
        assert resp.status_code == 404
        assert resp.headers["Content-Type"].startswith("text/html")


def test_profile_counts_games_for_a_progress_total(lichess: LichessServer) -> None:
    user = get(lichess, "/api/user/indexinator").json()
    assert user["id"] == "indexinator" and user["count"]["all"] == 2907
    assert user["perfs"]["blitz"]["games"] == 2891 and user["perfs"]["bullet"]["games"] == 16


def test_rating_history_is_served_to_token_requests_only() -> None:
    history = json.loads((CASES / "C01.json").read_text())
    with LichessServer() as server:
        server.add_user("indexinator", LINES[:1], rating_history=history)
        path = "/api/user/indexinator/rating-history"
        assert get(server, path).json() == []
        token = {**NDJSON, "Authorization": "Bearer lip_test"}
        assert get(server, path, headers=token).json() == history


def test_a_wrong_token_is_401_when_the_server_knows_its_tokens() -> None:
    with LichessServer(tokens=["lip_good"]) as server:
        server.add_user("indexinator", LINES[:1])
        resp = get(server, "/api/user/indexinator",
                   headers={**NDJSON, "Authorization": "Bearer lip_bad"})
        assert resp.status_code == 401


def test_a_second_download_at_once_is_429_one_at_a_time() -> None:
    with LichessServer(throttle=200) as server:
        server.add_user("indexinator", LINES[:100])
        first = requests.get(server.url + "/api/games/user/indexinator", headers=NDJSON,
                             stream=True, timeout=10)
        lines = first.iter_lines()
        next(lines)  # the first download is running
        second = get(server, "/api/games/user/indexinator")
        assert second.status_code == 429
        assert second.json() == {"error": "Please only run 1 request(s) at a time"}
        assert len(list(lines)) == 99
        first.close()


def test_429_fault_hits_the_next_downloads_after_skip(lichess: LichessServer) -> None:
    lichess.fail_429(times=2, skip=1)
    statuses = [get(lichess, "/api/games/user/indexinator", max=1).status_code for _ in range(4)]
    assert statuses == [200, 429, 429, 200]
    assert get(lichess, "/api/user/indexinator").status_code == 200  # only downloads


def test_cut_fault_drops_the_connection_mid_stream(lichess: LichessServer) -> None:
    lichess.cut_after(1000)
    resp = requests.get(lichess.url + "/api/games/user/indexinator", headers=NDJSON,
                        stream=True, timeout=10)
    got = []
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        for line in resp.iter_lines():
            got.append(line)
    assert len(got) == 1000
    assert len(ids(get(lichess, "/api/games/user/indexinator"))) == 2907  # once only


def test_stall_fault_is_silent_longer_than_a_read_timeout(lichess: LichessServer) -> None:
    lichess.stall_after(10, seconds=5)
    resp = requests.get(lichess.url + "/api/games/user/indexinator", headers=NDJSON,
                        stream=True, timeout=(2, 0.3))
    got = []
    started = time.monotonic()
    with pytest.raises(requests.exceptions.ConnectionError, match="timed out"):
        for line in resp.iter_lines():
            got.append(line)
    assert len(got) == 10 and time.monotonic() - started < 3
    resp.close()
    # the server notices the hang-up and frees the download slot
    deadline = time.monotonic() + 2
    while get(lichess, "/api/games/user/indexinator", max=1).status_code == 429:
        assert time.monotonic() < deadline


def test_truncate_fault_reproduces_case_c08_byte_for_byte() -> None:
    c08 = (CASES / "C08.ndjson").read_bytes()
    lines = c08.split(b"\n")
    assert len(lines) == 3 and not c08.endswith(b"\n")
    with LichessServer() as server:
        server.add_user("stream_sally", [*(line.decode() for line in lines[:2]), C08_THIRD])
        server.truncate_after(2, keep=len(lines[2]))
        resp = get(server, "/api/games/user/stream_sally")
        assert resp.status_code == 200 and resp.content == c08
        assert resp.content.endswith(b'"lastMoveAt":17198')
        assert len(ids(get(server, "/api/games/user/stream_sally"))) == 3  # once only


def test_pgn_tags_escape_quotes_and_name_the_ai() -> None:
    game = {"id": "x1234567", "createdAt": 1_700_000_000_000, "rated": False, "speed": "blitz",
            "status": "resign", "winner": "black", "moves": "e4 e5",
            "players": {"white": {"user": {"name": 'Sam "The Rook"', "id": "sam"}},
                        "black": {"aiLevel": 5}}}
    text = game_to_pgn(game)
    assert '[White "Sam \\"The Rook\\""]' in text and '[Black "lichess AI level 5"]' in text
    assert '[BlackElo "?"]' in text and text.rstrip().endswith("1. e4 e5 0-1")


def test_downloads_are_recorded_with_their_user_agent(lichess: LichessServer) -> None:
    def worker() -> None:
        get(lichess, "/api/user/indexinator")

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.user_agent for r in lichess.requests] == [USER_AGENT] * 3


#: Case C08's third game, whole: the truncated line of the case completed.
C08_THIRD = (
    '{"id":"Strm0001","rated":true,"variant":"standard","speed":"blitz","perf":"blitz",'
    '"createdAt":1719864000000,"lastMoveAt":1719864420000,"status":"resign","players":'
    '{"white":{"user":{"name":"stream_sally","id":"stream_sally"},"rating":1805,"ratingDiff":5},'
    '"black":{"user":{"name":"rook_rita","id":"rook_rita"},"rating":1795,"ratingDiff":-5}},'
    '"winner":"white"}'
)
