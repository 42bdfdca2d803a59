"""The API importer's state in the store: sync cursors and the Lichess rating-history series.

A :class:`~tracker.store.models.SyncCursor` row says how far the games of one player (for one
perf filter) are known to be stored; :mod:`tracker.sources.lichess.sync` decides what the
values mean and when they move. Times are milliseconds since the epoch, UTC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

from sqlalchemy import delete, select

from tracker.core.cursor import Cursor
from tracker.store.engine import Database
from tracker.store.models import RatingHistoryPoint, SyncCursor


def load_cursor(db: Database, player_id: str, perf_filter: str = "") -> Cursor | None:
    """The cursor of ``player_id`` for ``perf_filter`` (``""``: all perfs), or ``None``."""
    with db.session() as s:
        row = s.get(SyncCursor, (player_id.lower(), perf_filter))
        if row is None:
            return None
        return Cursor(row.newest_created_at_ms, row.resume_until_ms, row.last_sync_at_ms,
                      row.resume_top_ms)


def save_cursor(db: Database, player_id: str, perf_filter: str, cursor: Cursor) -> None:
    """Create or replace the cursor (the player must exist: ``Store.ensure_player``).

    An upsert: two imports of the same player at once (two ``tracker sync`` runs) both save
    theirs, the last one wins, and either only covers games its own run stored."""
    values = {"newest_created_at_ms": cursor.newest_ms,
              "resume_until_ms": cursor.resume_until_ms,
              "resume_top_ms": cursor.resume_top_ms,
              "last_sync_at_ms": cursor.last_sync_at_ms}
    stmt = db.insert(SyncCursor.__table__).values(  # type: ignore[arg-type]  # a Table
        player_id=player_id.lower(), perf_filter=perf_filter, **values)
    with db.engine.begin() as conn:
        conn.execute(stmt.on_conflict_do_update(
            index_elements=["player_id", "perf_filter"], set_=values))


def replace_rating_history(
    db: Database, player_id: str, series: Mapping[str, Sequence[tuple[date, int]]]
) -> int:
    """Store the player's Lichess rating history, one series per perf, in one transaction.

    Lichess returns the whole history every time, so each perf given replaces its stored
    series (a day Lichess no longer lists disappears); perfs not given are left alone.
    Returns the number of points written.
    """
    pid = player_id.lower()
    points = 0
    with db.session() as s:
        for perf, pts in series.items():
            s.execute(
                delete(RatingHistoryPoint).where(
                    RatingHistoryPoint.player_id == pid, RatingHistoryPoint.perf == perf
                )
            )
            by_day = dict(pts)  # one point per UTC day: the last one given wins
            s.add_all(
                RatingHistoryPoint(player_id=pid, perf=perf, day=day, rating=rating)
                for day, rating in sorted(by_day.items())
            )
            points += len(by_day)
    return points


def has_rating_history(db: Database, user_id: str) -> bool:
    """Whether any Lichess rating-history point is stored for the player (any perf)."""
    with db.session() as s:
        return s.execute(
            select(RatingHistoryPoint.day)
            .where(RatingHistoryPoint.player_id == user_id.lower()).limit(1)
        ).first() is not None


def rating_history(db: Database, user_id: str, perf: str) -> list[tuple[date, int]]:
    """The stored Lichess rating-history series of a perf: (UTC day, rating), oldest first."""
    with db.session() as s:
        return [
            (d, r)
            for d, r in s.execute(
                select(RatingHistoryPoint.day, RatingHistoryPoint.rating)
                .where(
                    RatingHistoryPoint.player_id == user_id.lower(),
                    RatingHistoryPoint.perf == perf,
                )
                .order_by(RatingHistoryPoint.day)
            )
        ]
