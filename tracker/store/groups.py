"""Groups of players in the store: groups, their members, and the club scale models.

Three tables (migration ``0009``, in :mod:`tracker.store.models`):

- ``groups``: a unique name and when it was created (ms since the epoch, UTC);
- ``group_members``: a member per (group, lowercase Lichess id), with the spelling given and an
  optional FIDE id to link at the next sync. A member need not be tracked yet (no games):
  ``tracker sync --group`` imports them;
- ``club_models``: a scale model fitted on a group's members with a real FIDE rating, one per
  perf, as a JSON payload (the line, its figures, the data it was fitted on) with its date.

Plain values in and out, never ORM objects; only portable SQL (SQLite and PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError

from tracker.core.errors import ArgumentError, TrackerError
from tracker.core.utc import now_ms
from tracker.store.engine import Database
from tracker.store.models import ClubModelRow, GroupMemberRow, GroupRow

#: The longest group name (characters): ``club:NAME`` fits a player's saved scale (32).
MAX_NAME = 27


class UnknownGroupError(TrackerError, LookupError):
    """No group of that name (exit code 1)."""


class GroupExistsError(TrackerError):
    """A group of that name exists already (exit code 1: nothing done)."""


@dataclass(frozen=True, slots=True)
class GroupInfo:
    """A group: its name, when it was created (ms since the epoch, UTC), its member count."""

    name: str
    created_at_ms: int
    members: int = 0


@dataclass(frozen=True, slots=True)
class Member:
    """A group member: lowercase Lichess id, the spelling given, the FIDE id to link (or
    ``None``)."""

    user_id: str
    username: str
    fide_id: int | None = None


@dataclass(frozen=True, slots=True)
class MemberChanges:
    """What :func:`add_members` did: members ``added``, ``already`` members (their FIDE id set
    when one was given), as lowercase ids in the order given."""

    added: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)


def check_name(name: str) -> str:
    """``name`` stripped, if it can name a group (1-64 printable characters); else
    ArgumentError (exit code 2)."""
    text = (name or "").strip()
    if not text or len(text) > MAX_NAME or not text.isprintable():
        raise ArgumentError(
            f"{name!r} cannot name a group (1-{MAX_NAME} printable characters)")
    return text


def _group_id(db: Database, name: str) -> int:
    with db.session() as s:
        gid = s.execute(select(GroupRow.id).where(GroupRow.name == name)).scalar_one_or_none()
    if gid is None:
        raise UnknownGroupError(f"no group named {name!r}: tracker group create {name!r} first")
    return gid


def create_group(db: Database, name: str) -> GroupInfo:
    """Create the group ``name``. Raises ArgumentError (bad name), GroupExistsError."""
    text = check_name(name)
    created = now_ms()
    try:
        with db.session() as s:
            s.add(GroupRow(name=text, created_at_ms=created))
    except IntegrityError:
        raise GroupExistsError(f"a group named {text!r} exists already") from None
    return GroupInfo(text, created, 0)


def list_groups(db: Database) -> list[GroupInfo]:
    """Every group, by name, with its member count."""
    with db.session() as s:
        rows = s.execute(
            select(GroupRow.name, GroupRow.created_at_ms, func.count(GroupMemberRow.user_id))
            .outerjoin(GroupMemberRow, GroupMemberRow.group_id == GroupRow.id)
            .group_by(GroupRow.id, GroupRow.name, GroupRow.created_at_ms)
            .order_by(GroupRow.name)
        ).all()
    return [GroupInfo(n, c, k) for n, c, k in rows]


def members(db: Database, name: str) -> list[Member]:
    """The members of group ``name`` by lowercase id. Raises UnknownGroupError."""
    gid = _group_id(db, name)
    with db.session() as s:
        rows = s.execute(
            select(GroupMemberRow.user_id, GroupMemberRow.username, GroupMemberRow.fide_id)
            .where(GroupMemberRow.group_id == gid).order_by(GroupMemberRow.user_id)
        ).all()
    return [Member(u, n, f) for u, n, f in rows]


def add_members(db: Database, name: str, new: Sequence[Member]) -> MemberChanges:
    """Add ``new`` (checked by the caller) to group ``name`` in one transaction.

    A member already there stays; a FIDE id given with it replaces the stored one. A member
    given twice counts once (its first spelling, the last FIDE id given). Raises UnknownGroupError.
    """
    gid = _group_id(db, name)
    wanted: dict[str, Member] = {}
    for m in new:
        prev = wanted.get(m.user_id)
        if prev is None:
            wanted[m.user_id] = m
        elif m.fide_id is not None:
            wanted[m.user_id] = Member(m.user_id, prev.username, m.fide_id)
    changes = MemberChanges()
    stamp = now_ms()
    with db.session() as s:
        have = {r.user_id: r for r in s.scalars(
            select(GroupMemberRow).where(GroupMemberRow.group_id == gid))}
        for uid, m in wanted.items():
            row = have.get(uid)
            if row is None:
                s.add(GroupMemberRow(group_id=gid, user_id=uid, username=m.username,
                                     fide_id=m.fide_id, added_at_ms=stamp))
                changes.added.append(uid)
            else:
                if m.fide_id is not None:
                    row.fide_id = m.fide_id
                changes.already.append(uid)
    return changes


def remove_members(db: Database, name: str, user_ids: Sequence[str]) -> tuple[list[str],
                                                                              list[str]]:
    """Remove members from group ``name``: ``(removed, not members)``, lowercase ids. Their
    games and FIDE links stay (other groups, the player's own replay). Raises
    UnknownGroupError."""
    gid = _group_id(db, name)
    ids = list(dict.fromkeys(u.strip().lower() for u in user_ids))
    with db.session() as s:
        present = set(s.scalars(select(GroupMemberRow.user_id).where(
            GroupMemberRow.group_id == gid, GroupMemberRow.user_id.in_(ids))))
        s.execute(delete(GroupMemberRow).where(
            GroupMemberRow.group_id == gid, GroupMemberRow.user_id.in_(ids)))
    return [u for u in ids if u in present], [u for u in ids if u not in present]


# -- club scale models ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredClubModel:
    """A club model as stored: the group, the perf, when it was fitted (ms UTC), and the
    payload written by :mod:`tracker.club` (the line, its figures, its data)."""

    group: str
    perf: str
    fitted_at_ms: int
    payload: dict[str, Any]


def save_club_model(db: Database, name: str, perf: str, payload: dict[str, Any]) -> int:
    """Store (or replace) group ``name``'s model for ``perf``; returns its date (ms UTC).
    Raises UnknownGroupError."""
    gid = _group_id(db, name)
    stamp = now_ms()
    with db.session() as s:
        row = s.get(ClubModelRow, (gid, perf))
        if row is None:
            s.add(ClubModelRow(group_id=gid, perf=perf, fitted_at_ms=stamp, payload=payload))
        else:
            row.fitted_at_ms = stamp
            row.payload = payload
    return stamp


def load_club_models(db: Database, name: str) -> list[StoredClubModel]:
    """Group ``name``'s stored models, by perf. Raises UnknownGroupError."""
    gid = _group_id(db, name)
    with db.session() as s:
        rows = s.execute(
            select(ClubModelRow.perf, ClubModelRow.fitted_at_ms, ClubModelRow.payload)
            .where(ClubModelRow.group_id == gid).order_by(ClubModelRow.perf)
        ).all()
    return [StoredClubModel(name, p, t, dict(d)) for p, t, d in rows]


def fide_ids_elsewhere(db: Database, name: str, user_ids: Sequence[str]
                       ) -> dict[str, list[tuple[str, int]]]:
    """The FIDE ids other groups than ``name`` give these players (lowercase ids):
    ``{user id: [(group, FIDE id), …]}``, groups by name; players without one: absent."""
    gid = _group_id(db, name)
    out: dict[str, list[tuple[str, int]]] = {}
    with db.session() as s:
        rows = s.execute(
            select(GroupMemberRow.user_id, GroupRow.name, GroupMemberRow.fide_id)
            .join(GroupRow, GroupRow.id == GroupMemberRow.group_id)
            .where(GroupMemberRow.group_id != gid, GroupMemberRow.fide_id.is_not(None),
                   GroupMemberRow.user_id.in_(list(user_ids)))
            .order_by(GroupMemberRow.user_id, GroupRow.name)).all()
    for uid, group, fide_id in rows:
        if fide_id is not None:  # always, by the query: for the type checker
            out.setdefault(uid, []).append((group, fide_id))
    return out


def all_members(db: Database) -> list[Member]:
    """The members of every group, each player once (by lowercase id; a FIDE id given in any
    of its groups)."""
    with db.session() as s:
        rows = s.execute(
            select(GroupMemberRow.user_id, GroupMemberRow.username, GroupMemberRow.fide_id)
            .order_by(GroupMemberRow.user_id, GroupMemberRow.group_id)
        ).all()
    out: dict[str, Member] = {}
    for u, n, f in rows:
        prev = out.get(u)
        out[u] = Member(u, n, f if f is not None or prev is None else prev.fide_id)
    return list(out.values())
