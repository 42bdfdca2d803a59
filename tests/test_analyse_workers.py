"""``tracker analyse --group`` and ``--worker``: a group's games each once, newest first; workers
on one PostgreSQL database claiming games under a lease (tracker/store/claims.py), each game
analysed once, a killed worker's game claimed again after its lease; ``--worker`` refused on
SQLite in one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import bindparam, select, text

from tests.conftest import ANALYSED, INDEXINATOR_LATER
from tests.test_analyse import NODES, bare_export, needs_engine
from tracker import api
from tracker.core.records import Analysis
from tracker.importing import import_file
from tracker.store import analysis as stored
from tracker.store import claims
from tracker.store.db import Store
from tracker.store.models import Game

#: The opponent reda46 met most in the fixture (2 games).
OPPONENT_GAMES = 2


def _opponent(store: Store) -> tuple[str, int]:
    """reda46's most frequent opponent in the fixture and their games together."""
    with store.engine.connect() as conn:
        rows = conn.execute(text(
            "SELECT o.user_id FROM game_sides o JOIN game_sides me ON me.game_pk = o.game_pk "
            "WHERE me.user_id = 'reda46' AND o.user_id <> 'reda46'")).scalars()
        (opponent, games), = Counter(rows).most_common(1)
    return opponent, games


def _newest_first(store: Store, user_ids: list[str]) -> list[tuple[str, bool]]:
    """The players' games, each once, newest first: ``(id, has evals)``."""
    with store.engine.connect() as conn:
        return [(gid, n > 0) for gid, n in conn.execute(text(
            "SELECT g.id, (SELECT count(*) FROM game_analysis a WHERE a.game_pk = g.pk) "
            "FROM games g WHERE EXISTS (SELECT 1 FROM game_sides s WHERE s.game_pk = g.pk "
            "AND s.user_id IN :ids) ORDER BY g.ended_at_ms DESC, g.id DESC").bindparams(
                bindparam("ids", expanding=True)), {"ids": user_ids})]


def test_a_groups_games_are_each_once_and_newest_first(any_store: Store) -> None:
    import_file(bare_export_path(), store=any_store)
    import_file(INDEXINATOR_LATER, store=any_store)
    opponent, together = _opponent(any_store)
    assert together == OPPONENT_GAMES
    group = ["reda46", opponent, "indexinator"]
    every = _newest_first(any_store, group)
    assert len(every) == 41 + 10  # the games with the opponent once, not twice
    todo, done = stored.games_to_analyse(any_store, group)
    assert [x.id for x in todo] == [gid for gid, has in every if not has]
    assert done == sum(has for _, has in every) > 0  # Lichess's evals in indexinator's
    alone, _ = stored.games_to_analyse(any_store, "reda46")
    assert len(alone) == 41
    newest, had = stored.games_to_analyse(any_store, group, last=5)
    assert [x.id for x in newest] == [gid for gid, has in every[:5] if not has]
    assert had == sum(has for _, has in every[:5])


_BARE: list[Path] = []


def bare_export_path() -> Path:
    """reda46's games without evals, written once per session."""
    if not _BARE:
        import tempfile

        _BARE.append(bare_export(Path(tempfile.mkdtemp(prefix="tracker-bare-"))))
    return _BARE[0]


@needs_engine
def test_analyse_group_takes_the_groups_newest_games_with_one_progress(store: Store) -> None:
    import_file(bare_export_path(), store=store)
    import_file(INDEXINATOR_LATER, store=store)
    api.group_create("club", db=store)
    api.group_add("club", ["reda46", "Indexinator"], db=store)
    seen: list[tuple[int, int]] = []
    done = api.analyse(group="club", db=store, last=4, nodes=NODES,
                       progress=lambda d, t: seen.append((d, t)))
    want, _ = stored.games_to_analyse(store, ["reda46", "indexinator"])  # what is left
    assert (done.player, done.asked, done.status) == ("club", 4, "complete")
    assert done.analysed + done.had_evals == 4 and done.analysed >= 1
    assert seen[0] == (0, done.analysed) and seen[-1] == (done.analysed, done.analysed)
    newest, had = stored.games_to_analyse(store, ["reda46", "indexinator"], last=4)
    assert (newest, had) == ([], 4)  # the group's four newest games all have evals now
    assert len(want) == 41 + 10 - stored.count_analysed(store, "indexinator").get(
        "lichess", 0) - done.analysed
    with pytest.raises(api.ArgumentError, match="not both"):
        api.analyse("reda46", group="club", db=store)
    with pytest.raises(api.ArgumentError, match=r"--group NAME$"):
        api.analyse(db=store)
    with pytest.raises(api.UnknownGroupError):
        api.analyse(group="nope", db=store)


@needs_engine
def test_a_groups_run_reads_the_games_a_batch_at_a_time_newest_first(
        any_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29: ``analyse --group`` reads the members' texts a batch at a time as the engine
    needs them, not every game up front (memory grew with the club), in the same order and
    with the same one progress."""
    from tracker.importing import analyse as runner

    import_file(bare_export_path(), store=any_store)
    import_file(INDEXINATOR_LATER, store=any_store)
    api.group_create("club", db=any_store)
    api.group_add("club", ["reda46", "Indexinator"], db=any_store)
    want = [g.id for g in stored.games_to_analyse(any_store, ["reda46", "indexinator"],
                                                  last=20)[0]]
    monkeypatch.setattr(runner, "BATCH", 4, raising=False)
    read: list[str] = []
    reader = runner.read_game_text
    monkeypatch.setattr(runner, "read_game_text",
                        lambda raw, source: (read.append(raw), reader(raw, source))[1])
    written: list[int] = []
    writer = runner.write_engine_analysis
    monkeypatch.setattr(runner, "write_engine_analysis",
                        lambda db, pk, a: (written.append(pk), writer(db, pk, a))[1])
    at_first: list[int] = []
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done == 1:
            at_first.append(len(read))

    done = api.analyse(group="club", db=any_store, last=20, nodes=NODES, jobs=1,
                       progress=progress)
    assert len(want) > 8 and done.status == "complete" and done.analysed == len(want)
    assert at_first[0] <= 2 * 4 < len(want)  # a batch or two read, not the whole club's
    assert len(read) == len(want)  # each text read once
    with any_store.engine.connect() as conn:
        ids = dict(conn.execute(select(Game.pk, Game.id).where(Game.pk.in_(written))).all())
    assert [ids[pk] for pk in written] == want  # newest first, one job
    assert seen == [(n, len(want)) for n in range(len(want) + 1)]


def test_worker_on_sqlite_is_refused_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    import_file(ANALYSED, store=Store(str(db)))
    done = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "analyse",
                           "reda46", "--worker"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--worker needs a PostgreSQL database" in lines[0], lines
    with pytest.raises(claims.SharedDatabaseError, match="PostgreSQL"):
        api.analyse("reda46", db=Store(str(db)), worker=True)
    for bad in ({"last": 3}, {"lease": 0.1}):
        with pytest.raises(api.ArgumentError):
            api.analyse("reda46", db=Store(str(db)), worker=True, **bad)  # type: ignore[arg-type]


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[Store]:
    store = Store(pg_url)
    try:
        yield store
    finally:
        with store.engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        store.close()


def _claims(store: Store) -> dict[int, str]:
    with store.engine.connect() as conn:
        return dict(conn.execute(text("SELECT game_pk, worker FROM analysis_claims")).all())


def test_claims_are_disjoint_renewed_taken_again_after_the_lease_and_end_with_the_game(
        pg_store: Store) -> None:
    import_file(bare_export_path(), store=pg_store)
    scope = claims.ClaimScope(("reda46",))
    assert claims.scope_state(pg_store, scope) == claims.ScopeState(41, 0)
    a = claims.claim_games(pg_store, "a", scope, 60_000, 3)
    b = claims.claim_games(pg_store, "b", scope, 60_000, 2)
    newest, _ = stored.games_to_analyse(pg_store, "reda46")
    assert [g.id for g in a + b] == [g.id for g in newest[:5]]  # newest first, disjoint
    assert claims.scope_state(pg_store, scope) == claims.ScopeState(41, 5)
    # a dead worker's lease ends: its games are claimed again, and it renews nothing
    dead = claims.claim_games(pg_store, "dead", scope, 1, 2)
    time.sleep(0.05)
    again = claims.claim_games(pg_store, "c", scope, 60_000, 2)
    assert [g.pk for g in again] == [g.pk for g in dead]
    assert claims.renew_claims(pg_store, "dead", [g.pk for g in dead], 60_000) == set()
    assert claims.renew_claims(pg_store, "a", [g.pk for g in a], 60_000) == {g.pk for g in a}
    # finished: stored, claim gone; a second finish of the same game writes nothing
    evals = Analysis((), "engine", "Fake", "1", NODES)
    assert claims.finish_game(pg_store, a[0].pk, evals) is True
    assert claims.finish_game(pg_store, a[0].pk, evals) is False
    assert a[0].pk not in _claims(pg_store)
    claims.skip_game(pg_store, "a", a[1].pk, "moves not readable")
    claims.release_claims(pg_store, "b", [g.pk for g in b])
    assert claims.scope_state(pg_store, scope) == claims.ScopeState(39, 3)  # a[2], again×2
    assert {g.pk for g in claims.claim_games(pg_store, "d", scope, 60_000, 50)}.isdisjoint(
        {a[0].pk, a[1].pk, a[2].pk} | {g.pk for g in again})


def test_concurrent_claims_never_share_a_game(pg_store: Store) -> None:
    import_file(bare_export_path(), store=pg_store)
    scope = claims.ClaimScope(("reda46",))
    got: dict[str, list[int]] = {}

    def claimer(name: str) -> None:
        mine: list[int] = []
        while batch := claims.claim_games(pg_store, name, scope, 60_000, 2):
            mine += [g.pk for g in batch]
        got[name] = mine

    threads = [threading.Thread(target=claimer, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    every = [pk for mine in got.values() for pk in mine]
    assert len(every) == len(set(every)) == 41
    assert len(got) == 4


def _game_lines(out: str) -> list[tuple[str, str]]:
    """A worker's log: ``(game id, what happened)`` per line about a game."""
    lines = []
    for line in out.splitlines():
        gid, _, what = line.partition(" ")
        if what in ("analysed", "found", "already analysed") or what.startswith("skipped"):
            lines.append((gid, what))
    return lines


@needs_engine
def test_three_workers_one_killed_mid_game_analyse_every_game_exactly_once(
        pg_store: Store) -> None:
    import_file(bare_export_path(), store=pg_store)
    api.group_create("club", db=pg_store)
    api.group_add("club", ["reda46"], db=pg_store)
    ids = {g.id for g in stored.games_to_analyse(pg_store, "reda46")[0]}
    assert len(ids) == 41
    cmd = [sys.executable, "-m", "tracker.cli.commands", "--db", pg_store.url, "analyse", "--group",
           "club", "--worker", "--lease", "3", "--nodes", str(NODES)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env) for _ in range(3)]
    victim = procs[0]
    try:
        deadline = time.monotonic() + 120
        held: list[int] = []
        while time.monotonic() < deadline and victim.poll() is None:
            held = [pk for pk, w in _claims(pg_store).items()
                    if f"/{victim.pid}-" in w]
            if held and stored.count_analysed(pg_store, "reda46").get("engine", 0) >= 3:
                break
            time.sleep(0.02)
        assert held, "the first worker never held a game"
        victim.send_signal(signal.SIGKILL)  # mid-game: its claim stays until the lease ends
        killed_at = time.monotonic()
        victim.wait(timeout=30)
        # what it held when it died (it may have finished the game polled above just before)
        held = [pk for pk, w in _claims(pg_store).items() if f"/{victim.pid}-" in w]
        outs = [p.communicate(timeout=600) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert victim.returncode == -signal.SIGKILL
    for p, (_, err) in zip(procs[1:], outs[1:], strict=True):
        assert p.returncode == 0, err
        assert "Traceback" not in err
    logs = [_game_lines(out) for out, _ in outs]
    printed = Counter(gid for log in logs for gid, _ in log)
    assert max(printed.values()) == 1  # no game analysed twice
    assert all(what == "analysed" for log in logs for _, what in log)
    # every game stored once; at most one unprinted: stored by the victim as it was killed
    assert stored.count_analysed(pg_store, "reda46") == {"engine": 41}
    assert set(printed) <= ids and len(ids - set(printed)) <= 1
    assert _claims(pg_store) == {}
    g = Game.__table__.c
    with pg_store.engine.connect() as conn:
        lost = conn.execute(select(g.id).where(g.pk.in_(held))).scalars().all()
    survivors = {gid for log in logs[1:] for gid, _ in log}
    assert set(lost) <= survivors  # the victim's game, claimed again after its lease
    assert time.monotonic() - killed_at >= 2  # a lease renewed ≤ 1 s before the kill


def test_migration_0012_up_and_down(tmp_path: Path) -> None:
    from alembic import command
    from sqlalchemy import create_engine, inspect

    from tracker.store.engine import alembic_config

    url = f"sqlite:///{tmp_path / 'm.db'}"
    Store(url).close()
    engine = create_engine(url)
    assert "analysis_claims" in inspect(engine).get_table_names()
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0011")  # the revision before 0012
    assert "analysis_claims" not in inspect(engine).get_table_names()
    engine.dispose()
    with Store(url) as s, s.engine.connect() as conn:  # upgraded again on open
        assert conn.execute(text("SELECT count(*) FROM analysis_claims")).scalar() == 0


def test_a_transaction_postgres_rolled_back_for_a_deadlock_is_tried_again() -> None:
    from sqlalchemy.exc import OperationalError

    class Orig(Exception):
        def __init__(self, sqlstate: str) -> None:
            super().__init__(sqlstate)
            self.sqlstate = sqlstate

    calls: list[int] = []

    def twice_deadlocked() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("UPDATE analysis_claims …", {}, Orig("40P01"))
        return "done"

    assert claims._retried(twice_deadlocked) == "done" and len(calls) == 3
    calls.clear()

    def always() -> str:
        calls.append(1)
        raise OperationalError("UPDATE analysis_claims …", {}, Orig("40P01"))

    with pytest.raises(OperationalError):
        claims._retried(always)
    assert len(calls) == 3  # given up after three tries

    def other() -> str:
        calls.append(1)
        raise OperationalError("SELECT 1", {}, Orig("08006"))  # the connection lost

    calls.clear()
    with pytest.raises(OperationalError):
        claims._retried(other)
    assert len(calls) == 1  # not a deadlock: not tried again


@needs_engine
def test_a_worker_finds_lichess_evals_in_the_text_and_a_stopped_one_gives_its_games_back(
        pg_store: Store) -> None:
    import_file(ANALYSED, store=pg_store)
    with pg_store.engine.begin() as conn:  # as in a database written before evals were kept
        conn.execute(text("DELETE FROM game_analysis"))
    said: list[tuple[str, str]] = []
    found = api.analyse("reda46", db=pg_store, worker=True, lease=5,
                        on_game=lambda gid, what: said.append((gid, what)))
    assert (found.status, found.asked, found.found, found.analysed) == ("complete", 41, 41, 0)
    assert sorted(what for _, what in said) == ["found"] * 41
    assert stored.count_analysed(pg_store, "reda46") == {"lichess": 41} and not _claims(pg_store)

    with pg_store.engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    store = Store(pg_store.url)
    import_file(bare_export_path(), store=store)
    stop = threading.Event()
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done >= 1:
            stop.set()

    partial = api.analyse("reda46", db=store, worker=True, nodes=NODES, jobs=2, stop=stop,
                          progress=progress)
    assert partial.status == "partial" and 1 <= partial.analysed < 41
    assert seen[0] == (0, 41)
    assert _claims(store) == {}  # the games in flight given back at once, not at lease end
    rest = api.analyse("reda46", db=store, worker=True, nodes=NODES, jobs=2)
    assert rest.status == "complete" and partial.analysed + rest.analysed == 41
    # Every game of the set, those analysed already too, as a run alone counts them.
    assert (rest.asked, rest.had_evals) == (41, partial.analysed)
    assert stored.count_analysed(store, "reda46") == {"engine": 41}
    # A worker that comes when the work is done: the set's games, all analysed, exit 0; it
    # said "0 games, 0 already analysed" (and exited 1, as for a set with no game at all).
    late = api.analyse("reda46", db=store, worker=True, nodes=NODES)
    assert (late.status, late.asked, late.had_evals, late.analysed) == ("complete", 41, 41, 0)
    assert late.line().startswith("reda46: 41 games, 41 already analysed, 0 with Lichess evals "
                                  "found, 0 analysed in ")
    assert late.line().endswith("s — complete")
    store.close()


def test_a_worker_id_fits_its_column_whatever_the_host_name(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.importing import workers

    monkeypatch.setattr(workers.socket, "gethostname", lambda: "h" * 300)
    long = workers.worker_id()
    assert len(long) == claims.WORKER_MAX and f"/{os.getpid()}-" in long
    monkeypatch.setattr(workers.socket, "gethostname", lambda: "box")
    a, b = workers.worker_id(), workers.worker_id()
    assert a.startswith(f"box/{os.getpid()}-") and a != b  # two runs in one process differ
