"""Claims on games for workers sharing one PostgreSQL database (``tracker analyse --worker``).

Several ``tracker analyse --worker`` processes, on as many machines, analyse one set of games
(a player's or a group's) each game once. No queue of tracker's own: PostgreSQL's row locks
decide who gets a game, and a lease decides when a game whose worker died is free again.

- :func:`claim_games`: in one transaction, the newest games without evals and without a live
  claim are locked with ``SELECT … FOR UPDATE SKIP LOCKED`` (on their ``games`` rows: another
  worker's locked games are passed over, never waited for), then claimed in
  ``analysis_claims`` (game key, worker id, lease end) by an ``INSERT … ON CONFLICT`` that
  takes a game only where it still has no evals and no live claim, as the newest committed
  rows say (the lock's snapshot may be older than another worker's claim or finished game).
- :func:`renew_claims`: the worker extends its leases while it works (a lease is short, so a
  dead worker's games come back soon; a slow game never loses its claim).
- :func:`finish_game`: the evals are stored and the claim deleted in one transaction, which
  first locks the game's row (waiting out a worker that is claiming it), so a claim never sees
  a game half finished; a game another worker finished first (after this worker's lease ended)
  is not written twice.
- :func:`skip_game` marks a game whose moves cannot be read (a claim that never ends);
  :func:`release_claims` gives a stopping worker's games back at once.

Every lease end is the database server's clock (``clock_timestamp()``), never a worker's: the
machines' clocks need not agree. All the PostgreSQL-only SQL of tracker is here; on SQLite
:func:`require_shared` refuses in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from sqlalchemy import Table, and_, bindparam, delete, exists, func, literal_column, select, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.exc import OperationalError
from sqlalchemy.types import Integer

from tracker.core.errors import ArgumentError
from tracker.core.records import Analysis
from tracker.store.analysis import (
    GameToAnalyse,
    games_by_key,
    insert_analysis,
    players_games,
    write_lichess_analyses,
)
from tracker.store.engine import Database
from tracker.store.models import AnalysisClaim, Game, GameAnalysis

T = TypeVar("T")

#: The database server's time, ms since the epoch (PostgreSQL).
_NOW_MS: Final = "(extract(epoch from clock_timestamp()) * 1000)::bigint"
#: The lease end of a claim that never ends: a game skipped for good.
FOREVER_MS: Final = 2**62
#: The longest worker id stored (the column's width).
WORKER_MAX: Final = 64


class SharedDatabaseError(ArgumentError):
    """``--worker`` on a database other workers cannot share (SQLite): exit code 2."""


def require_shared(db: Database) -> None:
    """Raise SharedDatabaseError (one line) unless ``db`` is PostgreSQL."""
    if db.dialect != "postgresql":
        raise SharedDatabaseError(
            f"--worker needs a PostgreSQL database that every worker shares; {db.display_url} "
            f"is {db.dialect}: drop --worker to analyse here alone, or give --db "
            "postgresql://…")


def _claims() -> Table:
    table = AnalysisClaim.__table__
    assert isinstance(table, Table)
    return table


@dataclass(frozen=True, slots=True)
class ClaimScope:
    """The games the workers share: those of ``user_ids`` (of ``perf``, started at or after
    ``since_ms``) without stored evals."""

    user_ids: tuple[str, ...]
    perf: str | None = None
    since_ms: int | None = None

    def games(self) -> Any:
        """``SELECT games.pk`` of the scope's games without evals (unordered)."""
        g = Game.__table__.c
        a = GameAnalysis.__table__.c
        return (players_games(self.user_ids, self.perf, since_ms=self.since_ms)
                .where(~exists().where(a.game_pk == g.pk)))


_CLAIM_SQL: Final = text(f"""
INSERT INTO analysis_claims (game_pk, worker, expires_at_ms)
SELECT p.pk, :worker, {_NOW_MS} + :lease_ms FROM unnest(:pks) AS p(pk)
WHERE NOT EXISTS (SELECT 1 FROM game_analysis a WHERE a.game_pk = p.pk)
ON CONFLICT (game_pk) DO UPDATE
SET worker = excluded.worker, expires_at_ms = excluded.expires_at_ms
WHERE analysis_claims.expires_at_ms < {_NOW_MS}
RETURNING game_pk
""").bindparams(bindparam("pks", type_=ARRAY(Integer)))


#: PostgreSQL's SQLSTATEs of a transaction it rolled back to break a deadlock or a
#: serialisation conflict: the transaction is tried again.
_RETRY_STATES: Final = ("40P01", "40001")
_TRIES: Final = 3


def _retried(fn: Callable[[], T]) -> T:
    """``fn()``, tried again (up to :data:`_TRIES` times) where PostgreSQL rolled it back to
    break a deadlock (two workers renewing and taking over each other's claims at once)."""
    for attempt in range(_TRIES):
        try:
            return fn()
        except OperationalError as exc:
            state = getattr(exc.orig, "sqlstate", None)
            if state not in _RETRY_STATES or attempt == _TRIES - 1:
                raise
    raise AssertionError("unreachable")  # the loop returns or raises


def claim_games(db: Database, worker: str, scope: ClaimScope, lease_ms: int, n: int = 1
                ) -> list[GameToAnalyse]:
    """Claim up to ``n`` of the scope's newest games without evals or a live claim for
    ``worker`` until ``lease_ms`` from now (see the module's docstring); [] when none is
    free. PostgreSQL only."""
    return _retried(lambda: _claim_games(db, worker, scope, lease_ms, n))


def _claim_games(db: Database, worker: str, scope: ClaimScope, lease_ms: int, n: int
                 ) -> list[GameToAnalyse]:
    g = Game.__table__.c
    c = _claims().c
    live = exists().where(c.game_pk == g.pk, c.expires_at_ms >= literal_column(_NOW_MS))
    stmt = (scope.games().where(~live)
            .order_by(g.ended_at_ms.desc(), g.id.desc()).limit(n)
            .with_for_update(of=Game.__table__, skip_locked=True))
    with db.engine.begin() as conn:
        locked = list(conn.execute(stmt).scalars())
        if not locked:
            return []
        claimed = list(conn.execute(_CLAIM_SQL, {"pks": locked, "worker": worker,
                                                 "lease_ms": lease_ms}).scalars())
        return games_by_key(conn, claimed) if claimed else []


def renew_claims(db: Database, worker: str, pks: Sequence[int], lease_ms: int) -> set[int]:
    """Extend ``worker``'s claims on ``pks`` to ``lease_ms`` from now; the keys it still
    held (a claim taken over after its lease ended is not renewed)."""
    if not pks:
        return set()
    c = _claims().c
    stmt = (_claims().update()
            .where(c.worker == worker, c.game_pk.in_(sorted(pks)))
            .values(expires_at_ms=literal_column(_NOW_MS) + lease_ms)
            .returning(c.game_pk))

    def renew() -> set[int]:
        with db.engine.begin() as conn:
            return set(conn.execute(stmt).scalars())

    return _retried(renew)


def finish_game(db: Database, game_pk: int, analysis: Analysis) -> bool:
    """Store a claimed game's evals (an engine's, or Lichess's found in its text) and delete
    its claim, in one transaction. False (nothing written) where the game has evals already
    (another worker finished it after this one's lease ended, or Lichess's arrived)."""
    g = Game.__table__.c
    a = GameAnalysis.__table__.c
    with db.engine.begin() as conn:
        db.lock_writes(conn)  # the write lock first, as every writer takes it: no deadlock
        conn.execute(select(g.pk).where(g.pk == game_pk).with_for_update())
        conn.execute(delete(_claims()).where(_claims().c.game_pk == game_pk))
        if conn.execute(select(a.game_pk).where(a.game_pk == game_pk)).first() is not None:
            return False
        if analysis.source == "lichess":
            write_lichess_analyses(conn, [(game_pk, analysis, False)])
        else:
            insert_analysis(conn, game_pk, analysis)
    return True


def skip_game(db: Database, worker: str, game_pk: int, reason: str) -> None:
    """Mark a claimed game as not analysable (``reason``, e.g. its moves cannot be read): a
    claim that never ends, so no worker claims it again."""
    c = _claims().c
    with db.engine.begin() as conn:
        conn.execute(_claims().update().where(c.game_pk == game_pk, c.worker == worker)
                     .values(worker=f"skipped: {reason}"[:WORKER_MAX],
                             expires_at_ms=FOREVER_MS))


def release_claims(db: Database, worker: str, pks: Sequence[int]) -> None:
    """Give ``worker``'s claims on ``pks`` back at once (a worker stopping cleanly)."""
    if not pks:
        return
    c = _claims().c
    with db.engine.begin() as conn:
        conn.execute(delete(_claims()).where(c.worker == worker, c.game_pk.in_(list(pks))))


@dataclass(frozen=True, slots=True)
class ScopeState:
    """Where the shared work stands: ``to_do`` games without evals (skipped ones not
    counted), of which ``claimed`` are held under a live lease by a worker."""

    to_do: int
    claimed: int


def scope_analysed(db: Database, scope: ClaimScope) -> int:
    """The scope's games that have evals already (one query): with :func:`scope_state`'s
    ``to_do``, every game of the scope."""
    g = Game.__table__.c
    a = GameAnalysis.__table__.c
    games = players_games(scope.user_ids, scope.perf, since_ms=scope.since_ms).where(
        exists().where(a.game_pk == g.pk)).subquery()
    with db.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(games)).scalar_one())


def scope_state(db: Database, scope: ClaimScope) -> ScopeState:
    """The scope's games left to analyse and those claimed now (one query)."""
    c = _claims().c
    games = scope.games().subquery()
    live = and_(c.game_pk == games.c.pk, c.expires_at_ms >= literal_column(_NOW_MS),
                c.expires_at_ms < FOREVER_MS)
    k = _claims().alias("skipped").c
    skipped = exists().where(k.game_pk == games.c.pk, k.expires_at_ms == FOREVER_MS)
    stmt = (select(func.count(), func.count(c.game_pk))
            .select_from(games.outerjoin(_claims(), live))
            .where(~skipped))
    with db.engine.connect() as conn:
        row = conn.execute(stmt).one()
    return ScopeState(int(row[0]), int(row[1]))
