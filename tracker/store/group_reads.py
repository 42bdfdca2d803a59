"""The reads of a group table, each one query for the whole group (not one per member): which
members have games, their saved settings, their saved summaries that are current, their real
FIDE lists. Two hundred members cost four queries instead of two thousand.
"""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import and_, bindparam, select

from tracker.core.fide_records import ListEntry
from tracker.store.engine import Database
from tracker.store.models import (
    CacheEntry,
    FideLinkRow,
    FideRatingRow,
    GameSide,
    Player,
    StoreState,
)
from tracker.store.players import SettingsRow

#: Ids per ``IN (…)`` list: well under SQLite's and PostgreSQL's parameter limits.
_CHUNK = 500


def _chunks(ids: Collection[str]) -> list[list[str]]:
    unique = sorted({i.lower() for i in ids})
    return [unique[i:i + _CHUNK] for i in range(0, len(unique), _CHUNK)]


def players_with_games(db: Database, user_ids: Collection[str]) -> set[str]:
    """The lowercase ids among ``user_ids`` that have games stored (as
    :func:`~tracker.store.players.resolve_player` finds them)."""
    found: set[str] = set()
    # One index probe per id (an IN list would read every side of every member), the
    # statement built once.
    probe = select(GameSide.user_id).where(GameSide.user_id == bindparam("uid")).limit(1)
    with db.engine.connect() as conn:
        for chunk in _chunks(user_ids):
            for uid in chunk:
                if conn.execute(probe, {"uid": uid}).first() is not None:
                    found.add(uid)
    return found


def settings_rows(db: Database, user_ids: Collection[str]) -> dict[str, SettingsRow]:
    """The stored settings of these players by lowercase id (a player with no row: absent,
    :class:`SettingsRow` defaults apply)."""
    out: dict[str, SettingsRow] = {}
    p = Player
    with db.engine.connect() as conn:
        for chunk in _chunks(user_ids):
            rows = conn.execute(select(
                p.id, p.start_rating, p.birth_year, p.rules, p.expected, p.count_provisional,
                p.scale, p.start_scale, p.chapter).where(p.id.in_(chunk))).all()
            for uid, start, birth, rules, expected, prov, scale, start_scale, chapter in rows:
                out[uid] = SettingsRow(start, birth, rules, expected, prov, scale, start_scale,
                                       chapter)
    return out


def current_payloads(db: Database, user_ids: Collection[str], perf: str, kind: str,
                     version: int) -> tuple[int, dict[tuple[str, str], bytes]]:
    """The write counter now and the saved payloads of these players in ``perf`` of ``kind``
    saved by ``version`` that are current (saved at the counter now), by ``(user id,
    options)``; counter and payloads are read in one statement each chunk, in one
    transaction."""
    snap, state = CacheEntry, StoreState
    out: dict[tuple[str, str], bytes] = {}
    seq = 0
    with db.engine.begin() as conn:
        seq = int(conn.execute(select(state.write_seq).where(state.id == 1)).scalar() or 0)
        for chunk in _chunks(user_ids):
            rows = conn.execute(
                select(snap.user_id, snap.options, snap.payload)
                .join(state, and_(state.id == 1, state.write_seq == snap.write_seq))
                .where(snap.user_id.in_(chunk), snap.perf == perf, snap.kind == kind,
                       snap.version == version)).all()
            for uid, options, payload in rows:
                out[(uid, options)] = bytes(payload)
    return seq, out


def linked_ids(db: Database, user_ids: Collection[str]) -> dict[str, int]:
    """The FIDE id linked to each of these players, by lowercase id (no link: absent)."""
    out: dict[str, int] = {}
    with db.engine.connect() as conn:
        for chunk in _chunks(user_ids):
            for uid, fide_id in conn.execute(select(FideLinkRow.player_id, FideLinkRow.fide_id)
                                             .where(FideLinkRow.player_id.in_(chunk))):
                out[uid] = fide_id
    return out


def fide_lists(db: Database, user_ids: Collection[str], kind: str
               ) -> dict[str, list[ListEntry]]:
    """The ``kind`` list (``standard``, ``rapid``, ``blitz``) of each of these players' linked
    FIDE ids, oldest first, by lowercase id (a player without a link or that list: absent)."""
    link, rating = FideLinkRow, FideRatingRow
    out: dict[str, list[ListEntry]] = {}
    with db.engine.connect() as conn:
        for chunk in _chunks(user_ids):
            rows = conn.execute(
                select(link.player_id, rating.month, rating.rating)
                .join(rating, and_(rating.fide_id == link.fide_id, rating.kind == kind))
                .where(link.player_id.in_(chunk))
                .order_by(link.player_id, rating.month)).all()
            for uid, month, points in rows:
                out.setdefault(uid, []).append(ListEntry(month, points))
    return out
