"""The public Python API of groups (``tracker group …``, ``tracker sync``), re-exported by
:mod:`tracker.api` and the package root.

A group is a named list of Lichess usernames (a club, a coach's students), each with an
optional FIDE id that the next sync links (through ``tracker fide link``'s machinery, after
the player's games are imported). Every function takes ``db=`` as :mod:`tracker.api` does.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tracker.api import open_store
from tracker.errors import ArgumentError

if TYPE_CHECKING:
    from tracker.api import Db
    from tracker.store.groups import GroupInfo, Member


@dataclass(frozen=True, slots=True)
class GroupAddResult:
    """What ``group add`` did: lowercase ids ``added`` and ``already`` there (their FIDE id
    replaced when one was given), and one line per ``bad`` row or argument (naming it, with the
    reason), which was left out while the rest was added."""

    group: str
    added: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class GroupRemoveResult:
    """What ``group remove`` did: lowercase ids ``removed``, and those that were no members."""

    group: str
    removed: list[str] = field(default_factory=list)
    not_members: list[str] = field(default_factory=list)


def group_create(name: str, *, db: Db = None) -> GroupInfo:
    """``tracker group create NAME``: a new, empty group. Returns its
    :class:`~tracker.store.groups.GroupInfo` (name, created ms UTC, 0 members).

    Raises ArgumentError (exit 2: a name of 1-64 printable characters), GroupExistsError
    (exit 1)."""
    from tracker.store import groups

    return groups.create_group(open_store(db, create=True), name)


def parse_fide_pairs(pairs: Iterable[str]) -> dict[str, int]:
    """``["alice=12345", …]`` (``--fide USER=ID``) → ``{"alice": 12345}``; ArgumentError
    (exit 2) naming the first malformed pair."""
    from tracker.sources.fide import parse_fide_id

    out: dict[str, int] = {}
    for pair in pairs:
        user, sep, fid = pair.partition("=")
        if not sep or not user.strip():
            raise ArgumentError(f"--fide {pair!r}: expected USER=FIDE_ID")
        try:
            out[user.strip()] = parse_fide_id(fid)
        except ValueError as exc:
            raise ArgumentError(f"--fide {pair!r}: {exc}") from None
    return out


def _member(username: str, fide_id: str | int | None) -> Member:
    """A checked member; ValueError with the reason otherwise."""
    from tracker.sources.fide import parse_fide_id
    from tracker.sources.lichess.params import check_username
    from tracker.store.groups import Member

    name = check_username(username)
    fid = None if fide_id is None or str(fide_id).strip() == "" else parse_fide_id(fide_id)
    return Member(name.lower(), name, fid)


def read_roster(path: str | os.PathLike[str]) -> tuple[list[Member], list[str]]:
    """A roster CSV → ``(members, bad rows)``.

    Columns ``username`` and optional ``fide_id``; a first row whose first cell is
    ``username`` is a header. Blank lines are skipped. A bad row (a third column, no username,
    a name that cannot be a Lichess username, a FIDE id that is not one) is one line
    ``"row N: reason"`` (N: the file's line number). Raises ArgumentError (exit 2) when the
    file cannot be read as UTF-8 text.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ArgumentError(f"cannot read the roster {p}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ArgumentError(f"the roster {p} is not UTF-8 text") from None
    found: list[Member] = []
    bad: list[str] = []
    reader = csv.reader(text.splitlines())
    for i, row in enumerate(reader):
        line = reader.line_num
        cells = [c.strip() for c in row]
        if not any(cells):
            continue
        if i == 0 and cells[0].lower() == "username":
            continue
        if len(cells) > 2 and any(cells[2:]):
            bad.append(f"row {line}: {len(cells)} columns, expected username[,fide_id]")
            continue
        try:
            found.append(_member(cells[0], cells[1] if len(cells) > 1 else None))
        except ValueError as exc:
            bad.append(f"row {line}: {exc}")
    return found, bad


def group_add(name: str, users: Sequence[str] = (), *, fide: Mapping[str, int] | None = None,
              from_csv: str | os.PathLike[str] | None = None,
              db: Db = None) -> GroupAddResult:
    """``tracker group add NAME USER… [--fide USER=ID…] [--from roster.csv]``.

    ``users``: Lichess usernames; ``fide``: ``{username: FIDE id}`` (any case; a user named
    only here is added too); ``from_csv``: a roster (see :func:`read_roster`). No network: a
    member's games are imported, and its FIDE id linked, by ``tracker sync --group NAME``.
    A bad username or row is one line in ``bad`` and the rest is added. Raises
    UnknownGroupError, ArgumentError (an unreadable roster; nothing added).
    """
    from tracker.store import groups

    store = open_store(db)
    gname = groups.check_name(name)
    fide_by_id = {u.strip().lower(): f for u, f in (fide or {}).items()}
    todo: list[Member] = []
    bad: list[str] = []
    if from_csv is not None:
        todo, bad = read_roster(from_csv)
    named = list(users) + [u for u in (fide or {}) if u.strip().lower() not in
                           {x.strip().lower() for x in users}]
    for user in named:
        try:
            todo.append(_member(user, fide_by_id.get(user.strip().lower())))
        except ValueError as exc:
            bad.append(f"{user!r}: {exc}")
    changes = groups.add_members(store, gname, todo)
    return GroupAddResult(gname, changes.added, changes.already, bad)


def group_remove(name: str, users: Sequence[str], *, db: Db = None) -> GroupRemoveResult:
    """``tracker group remove NAME USER…``: take members out of the group (their games and
    FIDE links stay). Raises UnknownGroupError."""
    from tracker.store import groups

    gname = groups.check_name(name)
    removed, missing = groups.remove_members(open_store(db), gname, users)
    return GroupRemoveResult(gname, removed, missing)


def group_list(*, db: Db = None) -> list[GroupInfo]:
    """``tracker group list``: every group by name, with its member count and creation time
    (ms since the epoch, UTC)."""
    from tracker.store import groups

    return groups.list_groups(open_store(db))


def group_members(name: str, *, db: Db = None) -> list[tuple[str, int | None]]:
    """The members of group ``name``: ``[(username, FIDE id or None), …]`` by lowercase id
    (the spelling given, or Lichess's once imported). Raises UnknownGroupError."""
    from tracker.store import groups

    return [(m.username, m.fide_id) for m in
            groups.members(open_store(db), groups.check_name(name))]
