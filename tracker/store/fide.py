"""The real FIDE rating in the store: FIDE profiles, their monthly rating lists, and which
tracked player each profile belongs to.

Three tables (migration ``0003``, in :mod:`tracker.store.models`):

- ``fide_players``: one FIDE profile per FIDE id, as last fetched (current ratings in FIDE
  rating points, ``None`` where the player has none).
- ``fide_ratings``: the published lists, one row per (FIDE id, list kind, month
  ``"YYYY-MM"``) with the rating in force from that month; months with no change may be
  missing (the rating stays in force until the next row).
- ``fide_links``: tracked player (lowercase Lichess id) → FIDE id; one FIDE id per player.

A refresh upserts: the same fetch twice stores the same rows once, and a list entry that a
later answer no longer carries is kept (nothing stored is lost). Times are ms since the epoch,
UTC. Only portable SQL (SQLite and PostgreSQL).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from sqlalchemy import select

from tracker.core.fide_records import (
    LIST_KINDS,
    FidePlayerData,
    FideProfile,
    ListEntry,
    ListKind,
    next_month,
)
from tracker.core.utc import now_ms
from tracker.store.models import FideLinkRow, FidePlayerRow, FideRatingRow

if TYPE_CHECKING:
    from tracker.store.db import Store


# -- values ---------------------------------------------------------------------------------


class RatingInForce(NamedTuple):
    """The FIDE rating in force during a calendar month: ``month`` ``"YYYY-MM"``, ``rating``
    in FIDE rating points. A plain ``(month, rating)`` tuple too."""

    month: str
    rating: int


@dataclass(frozen=True, slots=True)
class SaveCounts:
    """What :func:`save_fide_player` did to the list rows."""

    new: int = 0
    updated: int = 0
    unchanged: int = 0


@dataclass(frozen=True, slots=True)
class FideLink:
    """A tracked player's link: the profile, when it was linked and last fetched (ms UTC),
    and the stored lists ``{kind: entries oldest first}`` (every kind, possibly empty)."""

    player_id: str
    profile: FideProfile
    linked_at_ms: int
    fetched_at_ms: int
    lists: dict[ListKind, list[ListEntry]]


def _profile(row: FidePlayerRow) -> FideProfile:
    return FideProfile(row.id, row.name, row.federation, row.birth_year, row.title,
                       row.standard, row.rapid, row.blitz)


# -- writing --------------------------------------------------------------------------------


def save_fide_player(store: Store, data: FidePlayerData, *, player_id: str | None = None,
                     fetched_at_ms: int | None = None) -> SaveCounts:
    """Store a fetch (profile and lists) in one transaction; link it to ``player_id`` (a
    tracked player's Lichess id, any case) when given, replacing an older link.

    Upserts, under the store's write lock: list rows are keyed by (FIDE id, kind, month); a
    changed rating is updated, a row the fetch lacks is kept. Returns the counts of list rows
    new/updated/unchanged.
    """
    now = now_ms() if fetched_at_ms is None else fetched_at_ms
    p = data.profile
    if player_id is not None:
        store.ensure_player(player_id)
    new = updated = unchanged = 0
    with store.session() as s:
        # The write lock first: two refreshes of one FIDE id at once (two syncs) would both
        # find no row and both insert it.
        store.lock_writes(s.connection())
        row = s.get(FidePlayerRow, p.fide_id)
        if row is None:
            row = FidePlayerRow(id=p.fide_id)
            s.add(row)
        row.name, row.federation, row.birth_year, row.title = (
            p.name, p.federation, p.birth_year, p.title)
        row.standard, row.rapid, row.blitz = p.standard, p.rapid, p.blitz
        row.fetched_at_ms = now
        s.flush()
        stored = {
            (r.kind, r.month): r
            for r in s.scalars(select(FideRatingRow).where(FideRatingRow.fide_id == p.fide_id))
        }
        for kind in LIST_KINDS:
            for e in data.lists.get(kind, ()):
                old = stored.get((kind, e.month))
                if old is None:
                    s.add(FideRatingRow(fide_id=p.fide_id, kind=kind, month=e.month,
                                        rating=e.rating))
                    new += 1
                elif old.rating != e.rating:
                    old.rating = e.rating
                    updated += 1
                else:
                    unchanged += 1
        if player_id is not None:
            uid = player_id.lower()
            link = s.get(FideLinkRow, uid)
            if link is None:
                s.add(FideLinkRow(player_id=uid, fide_id=p.fide_id, linked_at_ms=now))
            elif link.fide_id != p.fide_id:
                link.fide_id, link.linked_at_ms = p.fide_id, now
    return SaveCounts(new, updated, unchanged)


# -- reading --------------------------------------------------------------------------------


def linked_fide_id(store: Store, player_id: str) -> int | None:
    """The FIDE id linked to the tracked player ``player_id`` (any case), or ``None``."""
    with store.session() as s:
        link = s.get(FideLinkRow, player_id.strip().lower())
        return None if link is None else link.fide_id


def linked_fetched_at_ms(store: Store, player_id: str) -> int | None:
    """When the profile and lists of the FIDE id linked to ``player_id`` (any case) were last
    fetched (ms since the epoch, UTC), or ``None`` when no FIDE id is linked. One query."""
    with store.session() as s:
        return s.execute(
            select(FidePlayerRow.fetched_at_ms)
            .join(FideLinkRow, FideLinkRow.fide_id == FidePlayerRow.id)
            .where(FideLinkRow.player_id == player_id.strip().lower())
        ).scalar_one_or_none()


def rating_list(store: Store, fide_id: int, kind: ListKind) -> list[ListEntry]:
    """The stored entries of one list, oldest first (months ``"YYYY-MM"``, rating points)."""
    with store.session() as s:
        rows = s.execute(
            select(FideRatingRow.month, FideRatingRow.rating)
            .where(FideRatingRow.fide_id == fide_id, FideRatingRow.kind == kind)
            .order_by(FideRatingRow.month)
        ).all()
    return [ListEntry(m, r) for m, r in rows]


def load_fide_link(store: Store, player_id: str) -> FideLink | None:
    """The player's link with the profile and all three lists, or ``None`` if unlinked."""
    uid = player_id.strip().lower()
    with store.session() as s:
        link = s.get(FideLinkRow, uid)
        if link is None:
            return None
        row = s.get(FidePlayerRow, link.fide_id)
        if row is None:  # the FK forbids it; a database edited by hand
            return None
        profile, fetched, linked = _profile(row), row.fetched_at_ms, link.linked_at_ms
    lists = {kind: rating_list(store, profile.fide_id, kind) for kind in LIST_KINDS}
    return FideLink(uid, profile, linked, fetched, lists)


def months_in_force(entries: list[ListEntry], through: str | None = None
                    ) -> list[RatingInForce]:
    """Every calendar month from the first entry to ``through`` (``"YYYY-MM"``; default: the
    last entry's month) with the rating in force: each entry's rating holds until the next
    entry. ``entries`` must be oldest first (as stored). Pure.

    >>> months_in_force([ListEntry("2011-09", 1584), ListEntry("2011-11", 1584)], "2011-12")
    [RatingInForce(month='2011-09', rating=1584), RatingInForce(month='2011-10', rating=1584), \
RatingInForce(month='2011-11', rating=1584), RatingInForce(month='2011-12', rating=1584)]
    """
    if not entries:
        return []
    last = entries[-1].month
    end = last if through is None or through < last else through
    out: list[RatingInForce] = []
    i, month, rating = 0, entries[0].month, entries[0].rating
    while month <= end:
        while i < len(entries) and entries[i].month <= month:
            rating = entries[i].rating
            i += 1
        out.append(RatingInForce(month, rating))
        month = next_month(month)
    return out
