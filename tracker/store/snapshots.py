"""Saved replay passes and the write counter that says whether one is still current.

The replay report's pass over a player's games of a perf (which games count, why the others do
not, the Lichess line) costs a read of every game: about 0.5-0.8 s at 100k games. It is saved
here as an opaque ``payload`` (what :mod:`tracker.report.replay_pass` encodes; the store does not
look inside) beside the ``write_seq`` of the database when it was computed. Every batch of
games written bumps ``write_seq`` in its own transaction (:func:`bump_write_seq`), so a saved
pass is current exactly while the counter has not moved since: no game can change without the
counter changing with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Table, and_, delete, func, select, update
from sqlalchemy.exc import DBAPIError

from tracker.store.engine import Database
from tracker.store.models import ReplaySnapshot, StoreState

#: ``store_state``'s one row.
_STATE_ID = 1


def _table(model: type[StoreState] | type[ReplaySnapshot]) -> Table:
    table = model.__table__
    assert isinstance(table, Table)
    return table


@dataclass(frozen=True, slots=True)
class SavedPass:
    """The database's ``write_seq`` now and the saved payload, if one was saved at that
    ``write_seq`` (``payload`` ``None``: none saved, or saved before a later write)."""

    write_seq: int
    payload: bytes | None


@dataclass(frozen=True, slots=True)
class SavedPasses:
    """The database's ``write_seq`` now and, by ``options``, the payloads saved at that
    ``write_seq`` (one missing: none saved, or saved before a later write)."""

    write_seq: int
    payloads: dict[str, bytes] = field(default_factory=dict)


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


def saved_pass(db: Database, user_id: str, perf: str, options: str) -> SavedPass:
    """The write counter and, if current, the pass saved for ``(user_id, perf, options)``:
    one query, so the two are read in one state of the database."""
    snap = _table(ReplaySnapshot)
    state = _table(StoreState)
    # Counter and payload in one statement: a write between two reads could otherwise pair
    # an old payload with a new counter.
    stmt = (
        select(state.c.write_seq, snap.c.write_seq, snap.c.payload)
        .select_from(state.outerjoin(snap, and_(
            snap.c.user_id == user_id, snap.c.perf == perf, snap.c.options == options)))
        .where(state.c.id == _STATE_ID)
    )
    with db.engine.connect() as conn:
        row: Any = conn.execute(stmt).first()
    if row is None:  # no counter row (the migration makes it): nothing is ever current
        return SavedPass(0, None)
    now, at, payload = row
    return SavedPass(int(now), bytes(payload) if at == now else None)


def saved_passes(db: Database, user_id: str, perf: str,
                 options: Sequence[str]) -> SavedPasses:
    """The write counter and the current payloads saved for ``(user_id, perf, o)``, ``o`` in
    ``options`` (a report's pass and its replays on each scale): one query, so all are read
    in one state of the database, and a payload saved before the last write is not read."""
    snap, state = _table(ReplaySnapshot), _table(StoreState)
    stmt = (
        select(state.c.write_seq, snap.c.options, snap.c.payload)
        .select_from(state.outerjoin(snap, and_(
            snap.c.user_id == user_id, snap.c.perf == perf, snap.c.options.in_(list(options)),
            snap.c.write_seq == state.c.write_seq)))
        .where(state.c.id == _STATE_ID)
    )
    with db.engine.connect() as conn:
        rows: list[Any] = list(conn.execute(stmt))
    if not rows:  # no counter row (the migration makes it): nothing is ever current
        return SavedPasses(0)
    return SavedPasses(int(rows[0][0]), {o: bytes(p) for _, o, p in rows if o is not None})


def is_current(db: Database, user_id: str, perf: str, options: str) -> bool:
    """Whether a pass is saved for ``(user_id, perf, options)`` at the write counter now."""
    snap, state = _table(ReplaySnapshot), _table(StoreState)
    stmt = (
        select(snap.c.write_seq)
        .join(state, and_(state.c.id == _STATE_ID, state.c.write_seq == snap.c.write_seq))
        .where(snap.c.user_id == user_id, snap.c.perf == perf, snap.c.options == options)
    )
    with db.engine.connect() as conn:
        return conn.execute(stmt).first() is not None


def save_pass(db: Database, user_id: str, perf: str, options: str, write_seq: int,
              payload: bytes) -> bool:
    """Save a pass computed from the games as they were at ``write_seq`` (read *before* the
    games were read: a write in between leaves it stale, never wrong). Returns False, having
    saved nothing, when the database refuses the write (a read-only file or role): a saved
    pass only saves time, so a report is never refused for it."""
    return save_passes(db, user_id, perf, write_seq, {options: payload})


def save_passes(db: Database, user_id: str, perf: str, write_seq: int,
                payloads: Mapping[str, bytes]) -> bool:
    """:func:`save_pass` of several payloads by ``options``, in one transaction."""
    if not payloads:
        return True
    if db.read_only:
        return False  # a read-only store writes nothing, a saved pass neither
    table = _table(ReplaySnapshot)
    try:
        with db.engine.begin() as conn:
            for options, payload in payloads.items():
                stmt = db.insert(table).values(user_id=user_id, perf=perf, options=options,
                                               write_seq=write_seq, payload=payload)
                stmt = stmt.on_conflict_do_update(
                    index_elements=["user_id", "perf", "options"],
                    set_={"write_seq": stmt.excluded.write_seq,
                          "payload": stmt.excluded.payload},
                )
                conn.execute(stmt)
    except DBAPIError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class SavedPassInfo:
    """One saved pass as listed: the player's lowercase Lichess id, the perf, the selection
    options it was computed with, whether it is current (saved at the write counter now) and
    its size in bytes."""

    user_id: str
    perf: str
    options: str
    current: bool
    size: int


#: The start of the ``options`` of a scale's replay of a pass (:mod:`tracker.report.scale_runs`),
#: saved beside the pass: listed and counted with it, not as a pass of its own.
REPLAY_PREFIX = "r-"
#: The start of the ``options`` of a group member's saved summary (:mod:`tracker.report.group`):
#: not a pass either.
GROUP_PREFIX = "group-"


def list_passes(db: Database, user_id: str | None = None) -> list[SavedPassInfo]:
    """The saved passes (of ``user_id`` only, when given), by player and perf (not the
    scales' replays of them, see :data:`REPLAY_PREFIX`, nor the group summaries,
    :data:`GROUP_PREFIX`)."""
    snap, state = _table(ReplaySnapshot), _table(StoreState)
    stmt = (
        select(snap.c.user_id, snap.c.perf, snap.c.options, snap.c.write_seq,
               func.length(snap.c.payload), select(state.c.write_seq)
               .where(state.c.id == _STATE_ID).scalar_subquery())
        .where(snap.c.options.not_like(f"{REPLAY_PREFIX}%"),
               snap.c.options.not_like(f"{GROUP_PREFIX}%"))
        .order_by(snap.c.user_id, snap.c.perf, snap.c.options)
    )
    if user_id is not None:
        stmt = stmt.where(snap.c.user_id == user_id)
    with db.engine.connect() as conn:
        rows = conn.execute(stmt).all()
    return [SavedPassInfo(uid, perf, options, at == now, int(size or 0))
            for uid, perf, options, at, size, now in rows]


def drop_passes(db: Database, user_id: str | None = None) -> int:
    """Drop the saved passes (of ``user_id`` only, when given) and move the write counter on,
    in one transaction: what was computed from the games before is stale from this commit on
    (every saved pass, every cache keyed on the counter). For a database edited by hand,
    which moves no counter. Returns the passes dropped (the scales' replays of them go too,
    uncounted)."""
    snap = _table(ReplaySnapshot)
    stmt = delete(snap)
    if user_id is not None:
        stmt = stmt.where(snap.c.user_id == user_id)
    with db.engine.begin() as conn:
        db.lock_writes(conn)
        # the replays first, uncounted: what is left to delete are the passes
        conn.execute(stmt.where(snap.c.options.like(f"{REPLAY_PREFIX}%")))
        dropped = conn.execute(stmt).rowcount
        bump_write_seq(db, conn)
    return int(dropped or 0)
