"""A sync cursor: how far a player's games from the Lichess API are known to be stored.

One fact with two users: the store keeps it (:mod:`tracker.store.sync`, a
:class:`~tracker.store.models.SyncCursor` row per player and perf filter) and the pure sync
plan reads and moves it (:mod:`tracker.sources.lichess.sync`). Times are milliseconds since
the epoch, UTC.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Cursor:
    """A sync cursor's values, in ms UTC; see
    :func:`~tracker.sources.lichess.sync.advance_cursor` for what each one means."""

    newest_ms: int | None = None
    resume_until_ms: int | None = None
    last_sync_at_ms: int | None = None
    resume_top_ms: int | None = None
