"""``tracker sync``: bring many players up to date, one after the other.

Each player goes through the ordinary incremental API import (:mod:`tracker.importing.lichess`:
the sync cursor, a linked FIDE id refreshed after a complete import — here at most once a UTC
day, :func:`tracker.importing.real_fide.refresh_due`; with a token, the rating history only when the
player has new games or none is stored), one Lichess request at a time on one HTTP session.
A member of a group with a FIDE id that is not yet the one linked is linked after its import
(:func:`tracker.importing.real_fide.link_player`, the machinery of ``tracker fide link``). An import
stopped by HTTP 429s is waited out (Lichess asks for a full minute) and resumed; a player that
still fails (a closed account, the network) is reported and the others go on. Writes are
idempotent (a game is stored once, under the store's write lock), so two syncs at once, or a
sync killed and run again, never store a game twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import requests

from tracker.core.errors import TrackerError
from tracker.core.utc import now_ms
from tracker.importing import real_fide
from tracker.importing.lichess import connect, run_import
from tracker.sources.lichess.options import LichessOptions
from tracker.store.db import Store
from tracker.store.fide import linked_fide_id

#: Imports of one player in a row before it is reported as failed (a partial import, e.g.
#: HTTP 429 twice, is resumed after a wait).
ATTEMPTS: Final = 2

#: Status of a player's sync: ``synced`` (complete), ``failed`` (reported, the others go on).
SYNCED: Final = "synced"
FAILED: Final = "failed"

#: A linked FIDE id not refreshed by this sync: it was fetched earlier the same UTC day, and
#: FIDE publishes its lists once a month (see :func:`tracker.importing.real_fide.refresh_due`).
FIDE_UP_TO_DATE: Final = "fetched today"


@dataclass(frozen=True, slots=True)
class SyncTarget:
    """A player to sync: the Lichess username and, for a group member, the FIDE id to link
    (``None``: keep the link as it is)."""

    username: str
    fide_id: int | None = None


@dataclass(frozen=True, slots=True)
class PlayerSync:
    """One player's sync: ``status`` (:data:`SYNCED` or :data:`FAILED`), games ``new`` and
    ``updated``, ``fide`` (what happened to the FIDE link: ``linked 123``, ``refreshed``,
    ``""``) and ``message`` (why it failed, or a warning), one line each; ``seconds`` wall
    clock."""

    username: str
    status: str
    new: int = 0
    updated: int = 0
    fide: str = ""
    message: str = ""
    seconds: float = 0.0


#: Called before each player: (index from 1, count, username).
OnPlayer = Callable[[int, int, str], None]


def sync_players(
    store: Store,
    targets: Sequence[SyncTarget],
    options: LichessOptions,
    *,
    on_player: OnPlayer | None = None,
    on_done: Callable[[PlayerSync], None] | None = None,
) -> list[PlayerSync]:
    """Sync ``targets`` in turn (see the module docstring); one :class:`PlayerSync` each, in
    order. ``options``: the server, the HTTP session every player's import shares
    (``options.session``, which sends ``options.token``: with a token the rating history is
    stored; never logged), the waits and retries. Never raises for one player's failure;
    Ctrl+C stops the sync (what was imported is kept, the run is recorded as partial)."""
    out: list[PlayerSync] = []
    for i, target in enumerate(targets, 1):
        if on_player is not None:
            on_player(i, len(targets), target.username)
        row = _sync_one(store, target, options)
        out.append(row)
        if on_done is not None:
            on_done(row)
    return out


def _sync_one(store: Store, target: SyncTarget, options: LichessOptions) -> PlayerSync:
    started = time.monotonic()
    new = updated = 0
    message = ""
    try:
        for attempt in range(1, ATTEMPTS + 1):
            job = connect(target.username, options)
            due = real_fide.refresh_due(store, job.user.id, now_ms())
            summary = run_import(job, store=store, refresh_fide=due, history_if_new=True)
            new, updated = new + summary.new, updated + summary.updated
            if summary.status == "complete":
                message = "; ".join(summary.warnings)
                break
            message = summary.message or summary.status
            if attempt < ATTEMPTS:
                options.sleep(options.retry_wait_429)  # a 429 or a broken stream: wait, then resume
        else:
            return PlayerSync(target.username, FAILED, new, updated, "", message,
                              time.monotonic() - started)
        fide = _link(store, job.user.id, target.fide_id, job.client.base, job.client.session,
                     refreshed=due)
    except TrackerError as exc:
        return PlayerSync(target.username, FAILED, new, updated, "", str(exc),
                          time.monotonic() - started)
    if fide.startswith("FIDE"):  # a link that failed is a warning: the games are synced
        message, fide = (f"{message}; {fide}" if message else fide), ""
    return PlayerSync(target.username, SYNCED, new, updated, fide, message,
                      time.monotonic() - started)


def _link(store: Store, user_id: str, fide_id: int | None, base_url: str,
          session: requests.Session, *, refreshed: bool) -> str:
    """Link ``fide_id`` when it is not the one linked (``linked N``); ``refreshed`` when the
    linked id was refreshed by the import, :data:`FIDE_UP_TO_DATE` when it was not (fetched
    earlier the same UTC day); ``FIDE …`` (a warning) when linking failed."""
    linked = linked_fide_id(store, user_id)
    if fide_id is None or fide_id == linked:
        return "" if linked is None else "refreshed" if refreshed else FIDE_UP_TO_DATE
    try:
        real_fide.link_player(store, user_id, fide_id, base_url=base_url, session=session)
    except TrackerError as exc:
        return f"FIDE id {fide_id} not linked: {exc}"
    return f"linked {fide_id}"
