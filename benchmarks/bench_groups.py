"""A club at scale: 200 players × 2,000 games, on SQLite and PostgreSQL.

Run: ``python -m benchmarks --only groups`` (``--quick``: 200 players × 200 games). The club
is the test roster's (``tests/club_roster.py``): each player's blitz games generated from a
seed, a Lichess rating that wanders, three players in four with a FIDE profile whose list
follows a known line; here every game gets a new id (:func:`benchmarks.synth.game_id`). The
games are written to one NDJSON file and imported with ``import-file``; every player's replay
passes are saved (as an import of one player does); the group ``club`` holds them all, with
their FIDE ids; a first ``tracker sync --group club`` against the local Lichess-compatible
server (``tests/lichess_server.py``, in a process of its own, no throttle) links the FIDE ids, and
the members' table summaries are saved (``api.group_refresh``, what a sync that wrote games
is followed by). Then, each the median of 3:

- the group table (``api.group_table``: 200 rows from the saved summaries), against the
  yardstick of one member's Overview report (``api.replay``, a saved pass) in the same run;
- the first Group page (the Streamlit script of ``dashboard/views/group.py`` run by AppTest
  after the app's first page), against the same yardstick;
- a sync of the 200 already-synced players (``api.sync(group)``: every player's account, the
  incremental games request and the correspondence pass, both finding nothing new; the linked
  FIDE ids were fetched by the first sync the same day, so they are not asked for again),
  against one such player's ``api.import_user`` (which does refresh its FIDE id).

Targets: the table and the page within 1 s; the sync under 30 s.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from benchmarks import RUNS, Row, median, row, synth

ROOT: Final = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TABLE_TARGET_S: Final = 1.0
SYNC_TARGET_S: Final = 30.0
GROUP: Final = "club"
PERF: Final = "blitz"
LINKED_SHARE: Final = 0.75
APP: Final = ROOT / "dashboard" / "app.py"


def _months(games: int, per_month: int) -> list[str]:
    """The months the games spread over, from 2023-01: ``per_month`` games each."""
    from tests.club_roster import month_range

    return month_range("2023-01", "2040-12")[:max(1, -(-games // per_month))]


#: Games are this far apart (ms): 2,000 games span about two years.
SPACING_MS: Final = 9 * 3_600_000
FIRST_MS: Final = 1_672_531_200_000  # 2023-01-01 UTC


def _club(players: int, games: int) -> Iterator[Any]:
    """The club's players one at a time (a roster of one each, seeded by its number), each
    with ``games`` blitz games (new ids) and, for three in four, a FIDE list."""
    from tests.club_roster import make_roster

    per_month = min(80, games)
    months = _months(games, per_month)
    counter = 0
    for i in range(players):
        base = 1300 + (1000 * i) // max(players - 1, 1)
        linked = 1 if (i % 4) < 4 * LINKED_SHARE else 0
        roster = make_roster(1, linked=linked, months=months, games_per_month=per_month,
                             ratings=(base, base), seed=1000 + i, prefix=f"club{i:03d}p")
        p = roster.players[0]
        p.games = p.games[:games]
        if p.fide_id is not None:
            p.fide_id = 91_000_000 + i
        for j, g in enumerate(p.games):  # a new id; evenly spaced, in order
            g["id"] = synth.game_id(counter)
            g["createdAt"] = FIRST_MS + j * SPACING_MS
            g["lastMoveAt"] = g["createdAt"] + 400_000
            counter += 1
        yield p


def _ndjson(players: int, games: int) -> tuple[Path, list[tuple[str, int | None]]]:
    """The club's games as one NDJSON file (cached) and the roster ``(username, FIDE id)``."""
    path = synth.DATA_DIR / f"club-v1-{players}x{games}.ndjson"
    roster_path = path.with_suffix(".roster.json")
    if path.exists() and roster_path.exists():
        return path, [tuple(r) for r in json.loads(roster_path.read_text())]  # type: ignore[misc]
    synth.DATA_DIR.mkdir(parents=True, exist_ok=True)
    roster: list[tuple[str, int | None]] = []
    tmp = path.with_suffix(".part")
    with tmp.open("w", encoding="utf-8") as f:
        for p in _club(players, games):
            roster.append((p.username, p.fide_id))
            for g in p.games:
                f.write(json.dumps(g, separators=(",", ":")) + "\n")
    tmp.replace(path)
    roster_path.write_text(json.dumps(roster))
    return path, roster


def _serve(server: Any, players: int, games: int) -> None:
    """The accounts (no games: every player is already synced) and the FIDE profiles."""
    from tests.club_roster import fide_answers

    for p in _club(players, games):
        server.add_user(p.username)
        if p.fide_id is not None:
            server.add_fide_player(p.fide_id, *fide_answers(p))


def _server_main(players: int, games: int, conn: Any) -> None:
    """The local Lichess in a process of its own (it shares no interpreter lock with the
    sync, as the real Lichess would not): serves the club until told to stop."""
    from tests.lichess_server import LichessServer

    with LichessServer() as server:
        _serve(server, players, games)
        conn.send(server.url)
        conn.recv()  # stop


@contextmanager
def _server(players: int, games: int) -> Iterator[str]:
    import multiprocessing

    ctx = multiprocessing.get_context("fork")  # the child needs nothing the parent opened
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_server_main, args=(players, games, child), daemon=True)
    proc.start()
    try:
        if not parent.poll(300):
            raise RuntimeError("the local Lichess server did not start")
        yield str(parent.recv())
    finally:
        parent.send("stop")
        proc.join(30)
        if proc.is_alive():
            proc.kill()


def _timed(fn: Callable[[], Any], runs: int = RUNS) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(runs):
        started = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - started)
    return median(times), out


def _page_seconds(url: str, runs: int = RUNS) -> float:
    """The first Group page: the app started on its first page (untimed), then the Group
    page's script run, timed; a new app each time (nothing cached in Streamlit)."""
    import os

    from streamlit.testing.v1 import AppTest

    os.environ["TRACKER_DB"] = url
    times = []
    for _ in range(runs):
        at = AppTest.from_file(str(APP), default_timeout=300)
        at.query_params["player"] = "club000p01"
        at.run()
        started = time.perf_counter()
        at.switch_page("views/group.py").run()
        times.append(time.perf_counter() - started)
        assert not at.exception, [e.value for e in at.exception]
        assert len(at.dataframe) == 1 and len(at.dataframe[0].value) > 0
    return median(times)


def _one_backend(label: str, url: str, players: int, games: int) -> list[Row]:
    from tracker import api
    from tracker.report.saved_pass import refresh

    path, roster = _ndjson(players, games)
    size = f"{players}×{games:,}"
    store = api.open_store(url, create=True)
    started = time.perf_counter()
    summary = api.import_file(path, db=store, user=[u for u, _ in roster])
    imported = time.perf_counter() - started
    assert summary.new == players * games, summary.line()
    started = time.perf_counter()
    for user, _ in roster:
        refresh(store, user)
    passes = time.perf_counter() - started
    api.group_create(GROUP, db=store)
    api.group_add(GROUP, [u for u, _ in roster],
                  fide={u: f for u, f in roster if f is not None}, db=store)
    with _server(players, games) as server_url:
        first = api.sync(GROUP, db=store, base_url=server_url)
        failed = [p for p in first.players if p.status != "synced"]
        assert not failed, failed[:3]
        started = time.perf_counter()
        computed = api.group_refresh(GROUP, [PERF], db=store)
        summaries = time.perf_counter() - started
        sync_s, again = _timed(lambda: api.sync(GROUP, db=store, base_url=server_url), runs=1)
        assert all(p.status == "synced" and p.new == 0 for p in again.players)
        one_s, _ = _timed(lambda: api.import_user(roster[0][0], db=store,
                                                  base_url=server_url))
    overview_s, _ = _timed(lambda: api.replay(roster[0][0], PERF, db=store))
    table_s, table = _timed(lambda: api.group_table(GROUP, PERF, db=store))
    rated = sum(r.fide is not None for r in table.rows)
    linked = sum(r.real_fide is not None for r in table.rows)
    page_s = _page_seconds(url)
    store.close()
    yard = f"one Overview report {overview_s * 1000:,.0f} ms"
    setup = (f"setup: import {imported:.0f} s, passes {passes:.0f} s, {computed} summaries "
             f"saved in {summaries:.1f} s")
    return [
        row(f"group table ({label})", size, f"{table_s * 1000:,.0f} ms",
            f"≤ {TABLE_TARGET_S * 1000:.0f} ms", table_s <= TABLE_TARGET_S,
            f"{len(table.rows)} rows, {rated} rated, {linked} with a real FIDE rating; {setup}",
            yardstick=yard, ratio=f"{table_s / overview_s:.1f}× one Overview"),
        row(f"first Group page ({label})", size, f"{page_s * 1000:,.0f} ms",
            f"≤ {TABLE_TARGET_S * 1000:.0f} ms", page_s <= TABLE_TARGET_S,
            "AppTest: the Group page's script after the app's first page",
            yardstick=yard, ratio=f"{page_s / overview_s:.1f}× one Overview"),
        row(f"sync of {players} already-synced players ({label})", size, f"{sync_s:.1f} s",
            f"< {SYNC_TARGET_S:.0f} s", sync_s < SYNC_TARGET_S,
            f"local server in its own process; {sum(1 for _, f in roster if f)} FIDE ids "
            "linked by the first sync today, not asked for again",
            yardstick=f"one player's import {one_s * 1000:,.0f} ms",
            ratio=f"{sync_s / one_s:.0f}× one import"),
    ]


def run(players: int = 200, games: int = 2000) -> list[Row]:
    """The rows for SQLite and, when a server can be started, PostgreSQL."""
    from tests.pg_server import postgres_url

    db = synth.scratch(f"club-{players}x{games}.db")
    rows = _one_backend("SQLite", f"sqlite:///{db}", players, games)
    for leftover in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        leftover.unlink(missing_ok=True)
    with postgres_url() as (url, reason):
        if url is None:
            rows.append(row("group table (PostgreSQL)", f"{players}×{games:,}", "not run",
                            note=reason))
        else:
            rows += _one_backend("PostgreSQL", url, players, games)
    return rows


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    for r in run(200, 200 if quick else 2000):
        print(" | ".join(str(v) for v in r.values() if v))
