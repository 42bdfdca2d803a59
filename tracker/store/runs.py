"""Import runs in the store: one row per import, what it read, stored and skipped, how it ended.

Times are milliseconds since the epoch, UTC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

from sqlalchemy import func, select

from tracker.core.utc import now_ms
from tracker.store.engine import Database, DatabaseError
from tracker.store.models import Game, ImportRun

#: How an import run stands: ``running`` until it ends ``complete``, ``partial`` (stopped
#: early, what was read is kept) or ``failed``; ``interrupted`` when its process was found gone
#: (:mod:`tracker.importing.run_liveness`). ``import_runs.status`` holds the longest.
RunStatus = Literal["running", "complete", "partial", "failed", "interrupted"]
RUN_STATUSES: Final[tuple[str, ...]] = get_args(RunStatus)
INTERRUPTED: Final = "interrupted"


@dataclass(frozen=True, slots=True)
class RunInfo:
    """An import run as stored (times in ms since the epoch, UTC)."""

    id: int
    source: str
    target: str
    player_id: str | None
    started_at_ms: int
    finished_at_ms: int | None
    status: str
    read: int
    new: int
    updated: int
    unchanged: int
    skipped: dict[str, int]
    message: str | None
    repaired: dict[str, int] = field(default_factory=dict)  # reason -> games imported repaired


def storable_text(text: str) -> str:
    """``text`` as a database can store it: a file name's undecodable bytes (Python's
    surrogate escapes) and lone surrogates as U+FFFD, a NUL as U+FFFD (PostgreSQL refuses it
    in text). Unchanged in the usual case (ASCII without NUL, or valid text)."""
    if "\x00" not in text:
        if text.isascii():
            return text
        try:
            text.encode("utf-8")
            return text
        except UnicodeEncodeError:
            pass
    try:
        data = text.encode("utf-8", "surrogateescape")  # a file name's bytes back
    except UnicodeEncodeError:
        data = text.encode("utf-8", "surrogatepass")
    return data.decode("utf-8", "replace").replace("\x00", "\ufffd")


def start_run(db: Database, source: str, target: str, player_id: str | None = None,
              message: str | None = None) -> int:
    """Record an import run as ``running`` (with ``message``, e.g. which process runs it), in
    one transaction; returns its id. ``target`` and ``message`` are stored as
    :func:`storable_text` makes them (a file name need not be UTF-8)."""
    with db.session() as session:
        run = ImportRun(
            source=source,
            target=storable_text(target),
            message=None if message is None else storable_text(message),
            player_id=player_id,
            started_at_ms=now_ms(),
            status="running",
            read=0,
            new=0,
            updated=0,
            unchanged=0,
            skipped={},
            repaired={},
        )
        session.add(run)
        session.flush()
        return run.id


def update_run(db: Database, run_id: int, **fields: Any) -> None:
    """Set fields of an import run (counts, status, message, player_id, finished_at_ms).

    Raises ValueError for a status that is not one of :data:`RUN_STATUSES`."""
    if "status" in fields and fields["status"] not in RUN_STATUSES:
        raise ValueError(f"not an import run status: {fields['status']!r}")
    for key in ("message", "target"):  # may name a file, or quote what a file holds
        if isinstance(fields.get(key), str):
            fields[key] = storable_text(fields[key])
    with db.session() as session:
        run = session.get(ImportRun, run_id)
        if run is None:
            raise DatabaseError(f"import run {run_id} does not exist")
        for key, value in fields.items():
            setattr(run, key, value)


def import_runs(db: Database, limit: int = 20) -> list[RunInfo]:
    """The most recent import runs, newest first."""
    with db.session() as s:
        runs = s.scalars(select(ImportRun).order_by(ImportRun.id.desc()).limit(limit)).all()
        return [
            RunInfo(
                r.id, r.source, r.target, r.player_id, r.started_at_ms, r.finished_at_ms,
                r.status, r.read, r.new, r.updated, r.unchanged, dict(r.skipped or {}), r.message,
                dict(r.repaired or {}),
            )
            for r in runs
        ]


def data_version(db: Database) -> tuple[int, int, int]:
    """A cheap fingerprint of the database state: (games, newest import run's end in ms, the
    store's write counter).

    The write counter (:func:`tracker.store.snapshots.write_seq`, what a saved replay pass is
    keyed on) moves with every batch of games written, also by an import killed before its
    run was finished and by one that only changed stored games: caches keyed on the
    fingerprint are invalidated by every write of games and by nothing else.
    """
    from tracker.store.snapshots import write_seq

    with db.session() as s:
        games = s.execute(select(func.count()).select_from(Game)).scalar_one()
        run = s.execute(select(func.max(ImportRun.finished_at_ms))).scalar_one()
    return games, run or 0, write_seq(db)
