"""Saved results (replay passes, their replays on each scale, group summaries) and the write
counter that says whether one is still current.

The replay report's pass over a player's games of a perf (which games count, why the others do
not, the Lichess line) costs a read of every game: about 0.5-0.8 s at 100k games. It is saved
here as an opaque ``payload`` (what :mod:`tracker.report.saved_pass` encodes; the store does
not look inside) beside the ``write_seq`` of the database when it was computed, and so are the
results built on it, each under a :class:`Key`: its kind, its options and the version of the
code that computed it. Every batch of games written bumps ``write_seq`` in its own transaction
(:func:`bump_write_seq`), so a saved result is current exactly while the counter has not moved
since (no game can change without the counter changing with it) and its version is the code's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy import ColumnElement, Connection, Table, and_, delete, func, select, update
from sqlalchemy.exc import DBAPIError

from tracker.store.engine import Database
from tracker.store.models import CacheEntry, StoreState

#: ``store_state``'s one row.
_STATE_ID = 1


def _table(model: type[StoreState] | type[CacheEntry]) -> Table:
    table = model.__table__
    assert isinstance(table, Table)
    return table


#: The kinds of saved results: a replay's pass over the games, its replay on one scale, a
#: group member's summary (their versions: :mod:`tracker.report.saved_pass`,
#: :mod:`tracker.report.scale_runs`, :mod:`tracker.report.group`).
PASS: Final = "pass"
RUN: Final = "run"
GROUP: Final = "group"
#: A player's per-game strength results (:mod:`tracker.report.strength`): current per game,
#: by each game's fingerprint inside the payload, not by the write counter
#: (:func:`saved_any`, :func:`save_only`).
STRENGTH: Final = "strength"


@dataclass(frozen=True, slots=True)
class Key:
    """What a result is saved under besides the player and the perf: its ``kind``, its
    ``options`` (what it depends on besides the games; at most 32 characters) and the
    ``version`` of the code of its kind that computed it."""

    kind: str
    options: str
    version: int


def _is(snap: Table, key: Key) -> ColumnElement[bool]:
    return and_(snap.c.kind == key.kind, snap.c.options == key.options,
                snap.c.version == key.version)


@dataclass(frozen=True, slots=True)
class SavedPass:
    """The database's ``write_seq`` now and the saved payload, if one was saved at that
    ``write_seq`` (``payload`` ``None``: none saved, or saved before a later write)."""

    write_seq: int
    payload: bytes | None


@dataclass(frozen=True, slots=True)
class SavedPasses:
    """The database's ``write_seq`` now and, by :class:`Key`, the payloads saved at that
    ``write_seq`` (one missing: none saved, or saved before a later write or by another
    version)."""

    write_seq: int
    payloads: dict[Key, bytes] = field(default_factory=dict)


def bump_write_seq(db: Database, conn: Connection) -> None:
    """Move the write counter on, in ``conn``'s transaction (the one that writes the games;
    it holds the write lock, so two writers never read the same value)."""
    bumped = conn.execute(update(StoreState).where(StoreState.id == _STATE_ID)
                          .values(write_seq=StoreState.write_seq + 1))
    if bumped.rowcount == 0:
        conn.execute(db.insert(_table(StoreState)).values(id=_STATE_ID, write_seq=1))


def write_seq(db: Database) -> int:
    """The write counter now (0 before the first write)."""
    state = _table(StoreState)
    with db.engine.connect() as conn:
        now = conn.execute(select(state.c.write_seq).where(state.c.id == _STATE_ID)).scalar()
    return int(now or 0)


def saved_pass(db: Database, user_id: str, perf: str, key: Key) -> SavedPass:
    """The write counter and, if current, the result saved for ``(user_id, perf, key)``:
    one query, so the two are read in one state of the database."""
    snap = _table(CacheEntry)
    state = _table(StoreState)
    # Counter and payload in one statement: a write between two reads could otherwise pair
    # an old payload with a new counter.
    stmt = (
        select(state.c.write_seq, snap.c.write_seq, snap.c.payload)
        .select_from(state.outerjoin(snap, and_(
            snap.c.user_id == user_id, snap.c.perf == perf, _is(snap, key))))
        .where(state.c.id == _STATE_ID)
    )
    with db.engine.connect() as conn:
        row: Any = conn.execute(stmt).first()
    if row is None:  # no counter row (the migration makes it): nothing is ever current
        return SavedPass(0, None)
    now, at, payload = row
    return SavedPass(int(now), bytes(payload) if at == now else None)


def saved_passes(db: Database, user_id: str, perf: str, keys: Sequence[Key]) -> SavedPasses:
    """The write counter and the current payloads saved for ``(user_id, perf, k)``, ``k`` in
    ``keys`` (a report's pass and its replays on each scale): one query, so all are read
    in one state of the database, and a payload saved before the last write is not read."""
    snap, state = _table(CacheEntry), _table(StoreState)
    stmt = (
        select(state.c.write_seq, snap.c.kind, snap.c.options, snap.c.version, snap.c.payload)
        .select_from(state.outerjoin(snap, and_(
            snap.c.user_id == user_id, snap.c.perf == perf,
            snap.c.kind.in_({k.kind for k in keys}),
            snap.c.options.in_({k.options for k in keys}),
            snap.c.write_seq == state.c.write_seq)))
        .where(state.c.id == _STATE_ID)
    )
    with db.engine.connect() as conn:
        rows: list[Any] = list(conn.execute(stmt))
    if not rows:  # no counter row (the migration makes it): nothing is ever current
        return SavedPasses(0)
    wanted = set(keys)
    found = {Key(kind, options, version): bytes(payload)
             for _, kind, options, version, payload in rows if kind is not None}
    return SavedPasses(int(rows[0][0]), {k: p for k, p in found.items() if k in wanted})


def saved_any(db: Database, user_id: str, perf: str, key: Key) -> bytes | None:
    """The payload saved for ``(user_id, perf, key)`` whatever the write counter, or ``None``:
    for results whose payload says itself which of its parts are current (the kind
    :data:`STRENGTH`)."""
    snap = _table(CacheEntry)
    stmt = select(snap.c.payload).where(snap.c.user_id == user_id, snap.c.perf == perf,
                                        _is(snap, key))
    with db.engine.connect() as conn:
        payload = conn.execute(stmt).scalar()
    return None if payload is None else bytes(payload)


def save_only(db: Database, user_id: str, perf: str, key: Key, payload: bytes) -> bool:
    """Save ``payload`` for ``(user_id, perf, key)`` in place of every result of its kind
    saved for ``(user_id, perf)`` (under other options or versions: a result for another
    model is never read again), in one transaction. Returns False, having saved nothing, when
    the database refuses the write (read-only): a saved result only saves time."""
    if db.read_only:
        return False
    snap, state = _table(CacheEntry), _table(StoreState)
    try:
        with db.engine.begin() as conn:
            now = conn.execute(select(state.c.write_seq)
                               .where(state.c.id == _STATE_ID)).scalar()
            conn.execute(delete(snap).where(
                snap.c.user_id == user_id, snap.c.perf == perf, snap.c.kind == key.kind,
                ~and_(snap.c.options == key.options, snap.c.version == key.version)))
            stmt = db.insert(snap).values(user_id=user_id, perf=perf, kind=key.kind,
                                          options=key.options, version=key.version,
                                          write_seq=int(now or 0), payload=payload)
            conn.execute(stmt.on_conflict_do_update(
                index_elements=["user_id", "perf", "kind", "options"],
                set_={"version": stmt.excluded.version, "write_seq": stmt.excluded.write_seq,
                      "payload": stmt.excluded.payload}))
    except DBAPIError:
        return False
    return True


def is_current(db: Database, user_id: str, perf: str, key: Key) -> bool:
    """Whether a result is saved for ``(user_id, perf, key)`` at the write counter now."""
    snap, state = _table(CacheEntry), _table(StoreState)
    stmt = (
        select(snap.c.write_seq)
        .join(state, and_(state.c.id == _STATE_ID, state.c.write_seq == snap.c.write_seq))
        .where(snap.c.user_id == user_id, snap.c.perf == perf, _is(snap, key))
    )
    with db.engine.connect() as conn:
        return conn.execute(stmt).first() is not None


def save_pass(db: Database, user_id: str, perf: str, key: Key, write_seq: int,
              payload: bytes) -> bool:
    """Save a result computed from the games as they were at ``write_seq`` (read *before* the
    games were read: a write in between leaves it stale, never wrong). Returns False, having
    saved nothing, when the database refuses the write (a read-only file or role): a saved
    pass only saves time, so a report is never refused for it."""
    return save_passes(db, user_id, perf, write_seq, {key: payload})


def save_passes(db: Database, user_id: str, perf: str, write_seq: int,
                payloads: Mapping[Key, bytes]) -> bool:
    """:func:`save_pass` of several payloads by :class:`Key`, in one transaction."""
    if not payloads:
        return True
    if db.read_only:
        return False  # a read-only store writes nothing, a saved pass neither
    table = _table(CacheEntry)
    try:
        with db.engine.begin() as conn:
            for key, payload in payloads.items():
                stmt = db.insert(table).values(user_id=user_id, perf=perf, kind=key.kind,
                                               options=key.options, version=key.version,
                                               write_seq=write_seq, payload=payload)
                stmt = stmt.on_conflict_do_update(
                    index_elements=["user_id", "perf", "kind", "options"],
                    set_={"version": stmt.excluded.version,
                          "write_seq": stmt.excluded.write_seq,
                          "payload": stmt.excluded.payload},
                )
                conn.execute(stmt)
    except DBAPIError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class SavedPassInfo:
    """One saved pass as listed: the player's lowercase Lichess id, the perf, the selection
    options it was computed with, the version of the code that computed it, whether it is
    current (saved at the write counter now) and its size in bytes."""

    user_id: str
    perf: str
    options: str
    version: int
    current: bool
    size: int


def list_passes(db: Database, user_id: str | None = None) -> list[SavedPassInfo]:
    """The saved passes (kind :data:`PASS`; of ``user_id`` only, when given), by player and
    perf: not the results built on them (their replays, the group summaries)."""
    snap, state = _table(CacheEntry), _table(StoreState)
    stmt = (
        select(snap.c.user_id, snap.c.perf, snap.c.options, snap.c.version, snap.c.write_seq,
               func.length(snap.c.payload), select(state.c.write_seq)
               .where(state.c.id == _STATE_ID).scalar_subquery())
        .where(snap.c.kind == PASS)
        .order_by(snap.c.user_id, snap.c.perf, snap.c.options)
    )
    if user_id is not None:
        stmt = stmt.where(snap.c.user_id == user_id)
    with db.engine.connect() as conn:
        rows = conn.execute(stmt).all()
    return [SavedPassInfo(uid, perf, options, int(version), at == now, int(size or 0))
            for uid, perf, options, version, at, size, now in rows]


def drop_passes(db: Database, user_id: str | None = None) -> int:
    """Drop the saved results (of ``user_id`` only, when given) and move the write counter on,
    in one transaction: what was computed from the games before is stale from this commit on
    (every saved result, every cache keyed on the counter). For a database edited by hand,
    which moves no counter. Returns the passes dropped (the results built on them go too,
    uncounted)."""
    snap = _table(CacheEntry)
    stmt = delete(snap)
    if user_id is not None:
        stmt = stmt.where(snap.c.user_id == user_id)
    with db.engine.begin() as conn:
        db.lock_writes(conn)
        # the others first, uncounted: what is left to delete are the passes
        conn.execute(stmt.where(snap.c.kind != PASS))
        dropped = conn.execute(stmt).rowcount
        bump_write_seq(db, conn)
    return int(dropped or 0)
