"""The FIDE client against a hostile server (issue 19, item 6): every profile value checked
before it is stored, each answer bounded in size and time, a 429 said, and a failed FIDE
refresh never fails the game import it follows. Real HTTP against the local test server; the
store on SQLite and PostgreSQL."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from tests.conftest import INDEXINATOR_LATER
from tests.lichess_server import LichessServer, ndjson_lines
from tracker import api
from tracker.importing import import_file
from tracker.sources.fide import FideError
from tracker.sources.fide_api import fetch_fide_player
from tracker.sources.lichess import make_session
from tracker.store.db import Store
from tracker.store.models import FidePlayerRow, FideRatingRow

ARJUN = 35009192
HOSTILE = {
    "id": 7, "name": "Test Player", "federation": "F" * 20, "title": "T" * 9,
    "year": 10**19, "standard": 10**30, "rapid": 2**31 + 1, "blitz": -5,
}


@pytest.fixture
def lichess() -> Iterator[LichessServer]:
    with LichessServer() as server:
        server.add_user("indexinator", ndjson_lines(INDEXINATOR_LATER))
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def tracked(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A store where indexinator is tracked (10 games), on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        store = Store(str(tmp_path / "t.db"))
    else:
        store = Store(request.getfixturevalue("pg_url"))
    assert import_file(INDEXINATOR_LATER, store=store, user="indexinator").new == 10
    yield store
    if request.param == "postgresql":
        with store.engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    store.close()


def fide_counts(store: Store) -> tuple[int, int]:
    with store.session() as s:
        return (s.scalar(select(func.count()).select_from(FidePlayerRow)) or 0,
                s.scalar(select(func.count()).select_from(FideRatingRow)) or 0)


def test_out_of_range_profile_values_are_left_out_with_a_line_each(
        lichess: LichessServer, tracked: Store) -> None:
    lichess.add_fide_player(7, HOSTILE, {"standard": [2020011500, 2020022**10, 2199011500],
                                         "blitz": [2**31 + 5, 2020011600]})
    result = api.fide_link("indexinator", 7, db=tracked, base_url=lichess.url)
    p = result.link.profile
    assert (p.name, p.federation, p.title, p.birth_year, p.standard, p.rapid, p.blitz) == (
        "Test Player", None, None, None, None, None, None)
    assert result.warnings == [
        "FIDE profile: federation left out: 'FFFFFFFFFFFFFFFFFFFF' is 20 characters long "
        "(at most 8)",
        "FIDE profile: year left out: 10000000000000000000 is out of range "
        f"(1900–{_next_year()})",
        "FIDE profile: title left out: 'TTTTTTTTT' is 9 characters long (at most 8)",
        "FIDE profile: standard left out: 1000000000000000000000000000000 is out of range "
        "(1–3500)",
        "FIDE profile: rapid left out: 2147483649 is out of range (1–3500)",
        "FIDE profile: blitz left out: -5 is not a positive integer",
        f"FIDE standard list: entry left out: year {2020022**10 // 1_000_000} out of range "
        f"in {2020022**10}",
        "FIDE standard list: entry left out: year 2199 out of range in 2199011500",
        f"FIDE blitz list: entry left out: year 2147 out of range in {2**31 + 5}",
    ]
    assert fide_counts(tracked) == (1, 2)
    api.import_user("indexinator", db=tracked, base_url=lichess.url)  # the refresh too


def _next_year() -> int:
    from datetime import UTC, datetime

    return datetime.now(UTC).year + 1


@pytest.mark.parametrize(("profile", "why"), [
    ({"id": 7, "name": "N" * 250}, "the FIDE player 7's name is 250 characters long (at most "
                                   "200)"),
    ({"id": 7, "name": "nul\x00name"}, "the FIDE player 7's name holds a NUL character"),
    ({"id": 7, "name": "jes\ud800108"}, "the FIDE player 7's name is not valid text (a lone "
                                        "surrogate)"),
    ({"id": 10**30, "name": "x"}, "a FIDE player without a valid id: "
                                  "1000000000000000000000000000000"),
])
def test_a_profile_that_cannot_be_stored_is_one_line_and_stores_nothing(
        lichess: LichessServer, tracked: Store, profile: dict[str, object], why: str) -> None:
    lichess.add_fide_player(7, profile, {"standard": [2020011500]})
    with pytest.raises(FideError) as info:
        api.fide_link("indexinator", 7, db=tracked, base_url=lichess.url)
    assert str(info.value) == f"Lichess sent no usable profile for FIDE player 7: {why}"
    assert fide_counts(tracked) == (0, 0)


def test_a_gzip_bomb_is_cut_off_at_the_cap_in_bounded_memory(lichess: LichessServer) -> None:
    """200 MB of zeros in a 200 KB gzip body: refused at 1 MB decompressed; the fetch never
    holds much more than that (berserk read it whole: 200 MB and more)."""
    lichess.fault_fide("gzip-bomb", 200 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(FideError) as info:
            fetch_fide_player(make_session(), lichess.url, ARJUN)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(info.value) == (f"the profile of FIDE player {ARJUN}: Lichess sent an answer "
                               "over 1024 KB (decompressed): not a FIDE answer, left unread")
    assert peak < 8 << 20


def test_a_trickled_answer_meets_the_deadline(lichess: LichessServer) -> None:
    """One byte every 0.3 s never trips the read timeout (30 s); the answer's deadline
    (1 s here, 60 s by default) ends it with one line (before: the whole answer waited for,
    a 141-byte profile in 42 s, a byte every 20 s for ever)."""
    lichess.fault_fide("trickle", 0.3)
    with pytest.raises(FideError) as info:
        fetch_fide_player(make_session(), lichess.url, ARJUN, deadline_s=1.0)
    assert str(info.value) == (f"the profile of FIDE player {ARJUN}: Lichess did not answer "
                               "within 1 s (gave up)")


def test_an_answer_cut_short_is_one_line(lichess: LichessServer) -> None:
    lichess.fault_fide("cut", 40)
    with pytest.raises(FideError) as info:
        fetch_fide_player(make_session(), lichess.url, ARJUN)
    assert str(info.value) == (f"the profile of FIDE player {ARJUN}: the answer broke off "
                               "(ProtocolError)")


def test_a_429_says_it_is_waiting(lichess: LichessServer) -> None:
    said: list[str] = []
    waits: list[float] = []
    lichess.fail_fide(429, times=1)
    data = fetch_fide_player(make_session(), lichess.url, ARJUN, retry_wait_429=7.0,
                             sleep=waits.append, on_wait=said.append)
    assert data.profile.fide_id == ARJUN and waits == [7.0]
    assert said == [f"Lichess asks to wait (HTTP 429): fetching the profile of FIDE player "
                    f"{ARJUN} again in 7 s"]


def test_a_failed_fide_refresh_never_fails_the_import(
        lichess: LichessServer, tracked: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    api.fide_link("indexinator", ARJUN, db=tracked, base_url=lichess.url)
    lichess.add_user("indexinator", ndjson_lines(INDEXINATOR_LATER))
    lichess.add_fide_player(ARJUN, {"id": ARJUN, "name": "N" * 300}, {"standard": []})
    summary = api.import_user("indexinator", db=tracked, base_url=lichess.url)
    assert summary.status == "complete"
    assert summary.warnings == [
        f"FIDE rating not refreshed: Lichess sent no usable profile for FIDE player {ARJUN}: "
        f"the FIDE player {ARJUN}'s name is 300 characters long (at most 200)"]
    # a failure below the checks (here the store's) is one line too, the run complete
    from tracker.importing import real_fide

    def broken(*args: object, **kwargs: object) -> object:
        raise OverflowError("Python int too large to convert to SQLite INTEGER")

    monkeypatch.setattr(real_fide, "save_fide_player", broken)
    lichess.add_fide_player(ARJUN, {"id": ARJUN, "name": "Erigaisi Arjun"}, {"standard": []})
    summary = api.import_user("indexinator", db=tracked, base_url=lichess.url)
    assert summary.status == "complete"
    assert summary.warnings == ["FIDE rating not refreshed: OverflowError: Python int too "
                                "large to convert to SQLite INTEGER"]
    assert api.runs(db=tracked)[0].status == "complete"
