"""A player's real FIDE rating: ``tracker fide link`` / ``fide show`` and the lists in force."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tracker.api._db import check_writable, open_store

if TYPE_CHECKING:
    from tracker.api._db import Db
    from tracker.importing.real_fide import FideRefresh
    from tracker.store.fide import FideLink, RatingInForce


def fide_link(
    username: str,
    fide_id: str | int,
    *,
    db: Db = None,
    base_url: str | None = None,
    token: str | None = None,
    timeout: tuple[float, float] = (5.0, 30.0),
    on_wait: Callable[[str], None] | None = None,
) -> FideRefresh:
    """``tracker fide link``: link a FIDE id to a tracked player and store FIDE's data.

    Fetches ``/api/fide/player/{id}`` (profile: name, federation, birth year, title, current
    standard/rapid/blitz in FIDE rating points) and ``/api/fide/player/{id}/ratings`` (the
    monthly lists) from Lichess (``base_url`` > ``$LICHESS_BASE_URL`` > lichess.org), through
    the session the game import uses. Linking again refreshes (no duplicate rows); linking
    another id replaces the link. ``tracker import USER`` refreshes a link after each
    complete import. Returns :class:`~tracker.importing.real_fide.FideRefresh` (the stored
    link, rows new/updated/unchanged, entries and profile values left out: every value is checked, a
    rating must be 0–3500, a birth year 1900 to next year). Each answer may take at most 60 s
    and hold 1 MB; an HTTP 429 is waited out once (a minute), ``on_wait`` told first (one
    line; else it is logged as a warning).

    Raises FideIdError (exit 2) for text that is not a FIDE id, UnknownPlayerError for a
    player with no games, UnknownFideIdError (exit 1: Lichess answered 404; nothing stored),
    FideError for any other fetch failure. One-line messages, never the token.
    """
    from tracker.core import config
    from tracker.importing import real_fide
    from tracker.sources import lichess

    check_writable(db, "linking a FIDE id")
    store = open_store(db)
    return real_fide.link_player(store, username, fide_id, base_url=config.base_url(base_url),
                                 session=lichess.make_session(token, timeout), on_wait=on_wait)


def fide_show(username: str, *, db: Db = None) -> FideLink:
    """``tracker fide show``: the stored FIDE link of a player: profile (ratings in FIDE
    rating points), when linked and last fetched (ms UTC), and the lists ``{kind: [ListEntry
    (month "YYYY-MM", rating)]}`` oldest first. No network. Raises UnknownPlayerError,
    NotLinkedError."""
    from tracker.importing import real_fide

    return real_fide.show_player(open_store(db), username)


def fide_ratings(username: str, list_kind: str = "standard", *, db: Db = None,
                 through: str | None = None) -> list[RatingInForce]:
    """The player's real FIDE rating in force, month by month, on one list.

    ``list_kind``: ``standard`` (default: the scale models estimate a standard rating),
    ``rapid`` or ``blitz``. Returns ``[RatingInForce(month "YYYY-MM", rating), …]`` (plain
    ``(str, int)`` tuples; FIDE rating points) for every calendar month from the first
    published list to ``through`` (default: the month of the last refresh): a month without
    a list of its own carries the previous list's rating. ``[]`` when no FIDE id is linked.
    No network. Raises UnknownPlayerError, ArgumentError (unknown list or bad month).
    """
    from tracker.importing import real_fide

    return real_fide.ratings_in_force(open_store(db), username, list_kind, through=through)


def fide_json(link: FideLink) -> dict[str, Any]:
    """The ``tracker fide show --json`` object: profile fields, ``ratings`` (current, rating
    points, ``null`` = none), ``linked_at``/``fetched_at`` (ISO 8601 UTC) and ``lists``
    ``{kind: [{"month": "YYYY-MM", "rating": int}, …]}`` oldest first."""
    from tracker.core.records import ms_to_datetime
    from tracker.sources.fide import LIST_KINDS as FIDE_LIST_KINDS

    p = link.profile
    return {
        "player": link.player_id,
        "fide_id": p.fide_id,
        "name": p.name,
        "federation": p.federation,
        "birth_year": p.birth_year,
        "title": p.title,
        "ratings": {kind: p.rating(kind) for kind in FIDE_LIST_KINDS},
        "linked_at": ms_to_datetime(link.linked_at_ms).isoformat(),
        "fetched_at": ms_to_datetime(link.fetched_at_ms).isoformat(),
        "lists": {kind: [{"month": e.month, "rating": e.rating} for e in link.lists[kind]]
                  for kind in FIDE_LIST_KINDS},
    }
