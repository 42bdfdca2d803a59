"""The real FIDE rating of a tracked player: link a FIDE id, refresh it, read the lists.

Fetches through :mod:`tracker.sources.fide_api` on a Lichess session (our User-Agent,
timeouts, the token if any), stores through :mod:`tracker.store.fide`. The public twins are
``tracker.api.fide_link``, ``fide_show`` and ``fide_ratings``.

Units: ratings are FIDE rating points; months ``"YYYY-MM"``; times ms since the epoch, UTC.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tracker.core.errors import ArgumentError, TrackerError
from tracker.sources.fide import LIST_KINDS, ListKind, parse_fide_id, parse_month
from tracker.store.db import Store
from tracker.store.fide import (
    FideLink,
    RatingInForce,
    SaveCounts,
    linked_fetched_at_ms,
    linked_fide_id,
    load_fide_link,
    months_in_force,
    save_fide_player,
)
from tracker.store.queries import resolve_player

if TYPE_CHECKING:  # the HTTP stack is loaded only when a list is fetched, not for a replay
    import requests

#: Makes the HTTP session for Lichess (``tracker.sources.lichess.make_session`` in use).
SessionFactory = Callable[[], "requests.Session"]


class NotLinkedError(TrackerError, LookupError):
    """The player has no FIDE id linked (``tracker fide link USER FIDE_ID`` first)."""


@dataclass(frozen=True, slots=True)
class FideRefresh:
    """What a link or refresh did: the link as now stored, the list rows written (new,
    updated, unchanged) and one line per answer field or list entry left out."""

    link: FideLink
    counts: SaveCounts
    warnings: list[str] = field(default_factory=list)


def link_player(store: Store, username: str, fide_id: str | int, *, base_url: str,
                session: requests.Session, on_wait: Callable[[str], None] | None = None
                ) -> FideRefresh:
    """Fetch FIDE player ``fide_id`` and link it to the tracked player ``username``.

    Checks the id (FideIdError) and the player (UnknownPlayerError) first, then fetches: an
    unknown id raises UnknownFideIdError (exit 2) and nothing is stored; any other fetch
    failure raises FideError. A second link replaces the first; a re-link of the same id
    refreshes it without duplicating a row. ``on_wait`` is told (one line) when Lichess asks
    to wait (HTTP 429) before the one retry.
    """
    fid = parse_fide_id(fide_id)
    uid = resolve_player(store, username)
    return _fetch_and_save(store, uid, fid, base_url, session, on_wait)


def _fetch_and_save(store: Store, uid: str, fid: int, base_url: str,
                    session: requests.Session, on_wait: Callable[[str], None] | None = None
                    ) -> FideRefresh:
    from tracker.sources.fide_api import fetch_fide_player

    data = fetch_fide_player(session, base_url, fid, on_wait=on_wait)
    counts = save_fide_player(store, data, player_id=uid)
    link = load_fide_link(store, uid)
    assert link is not None  # just saved
    return FideRefresh(link, counts, list(data.errors))


def refresh_player(store: Store, player_id: str, *, base_url: str,
                   session_factory: SessionFactory) -> FideRefresh | None:
    """Refresh the player's linked FIDE id (after an import); ``None`` when not linked.

    The session is only made when there is a link. Raises what :func:`link_player` raises.
    """
    fid = linked_fide_id(store, player_id)
    if fid is None:
        return None
    return _fetch_and_save(store, player_id.lower(), fid, base_url, session_factory())


def refresh_due(store: Store, player_id: str, now_ms: int) -> bool:
    """Whether a sync should refresh the player's linked FIDE id: ``True`` when one is linked
    and its profile and lists were last fetched before the current UTC day of ``now_ms`` (ms
    since the epoch, UTC); ``False`` when fetched today or when none is linked.

    FIDE publishes its lists once a month, so a refresh the same day can only bring back what
    is stored; once a day still picks up a new month's list on the day it appears. One query,
    no request.
    """
    fetched = linked_fetched_at_ms(store, player_id)
    return fetched is not None and utc_day(fetched) != utc_day(now_ms)


def utc_day(ms: int) -> str:
    """ms since the epoch → its UTC calendar day ``"YYYY-MM-DD"``."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def show_player(store: Store, username: str) -> FideLink:
    """The stored link of ``username``: profile and lists. Raises UnknownPlayerError,
    NotLinkedError."""
    uid = resolve_player(store, username)
    link = load_fide_link(store, uid)
    if link is None:
        raise NotLinkedError(f"{username} has no FIDE id linked: tracker fide link "
                             f"{username} FIDE_ID")
    return link


def check_list_kind(kind: str) -> ListKind:
    """``kind`` as a list kind (any case); ArgumentError naming the three otherwise."""
    key = kind.strip().lower()
    for k in LIST_KINDS:
        if k == key:
            return k
    raise ArgumentError(f"unknown FIDE list {kind!r}: one of {', '.join(LIST_KINDS)}")


def ms_month(ms: int) -> str:
    """ms since the epoch → its UTC calendar month ``"YYYY-MM"``."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m")


def ratings_in_force(store: Store, username: str, kind: str = "standard", *,
                     through: str | None = None) -> list[RatingInForce]:
    """The real FIDE rating in force per calendar month on list ``kind``.

    ``[(month "YYYY-MM", rating points), …]`` from the first published list to ``through``
    (default: the month of the last refresh, or the last list if later): a month with no list
    of its own carries the previous one. ``[]`` when the player has no linked FIDE id or no
    list of that kind. Raises UnknownPlayerError, ArgumentError (bad ``kind`` or ``through``).
    """
    list_kind = check_list_kind(kind)
    if through is not None:
        try:
            parse_month(through)
        except ValueError as exc:
            raise ArgumentError(str(exc)) from None
    uid = resolve_player(store, username)
    link = load_fide_link(store, uid)
    if link is None:
        return []
    return months_in_force(link.lists[list_kind], through or ms_month(link.fetched_at_ms))
