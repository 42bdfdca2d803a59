"""The public Python API of groups (``tracker group …``, ``tracker sync``), re-exported by
:mod:`tracker.api` and the package root.

A group is a named list of Lichess usernames (a club, a coach's students), each with an
optional FIDE id that the next sync links (through ``tracker fide link``'s machinery, after
the player's games are imported). Every function takes ``db=`` as :mod:`tracker.api` does.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracker.api._db import check_writable, open_store
from tracker.core.errors import ArgumentError

if TYPE_CHECKING:
    from tracker.api._db import Db
    from tracker.importing.group_sync import PlayerSync
    from tracker.report.calibration import Calibration, ModelGap
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

    check_writable(db, "changing groups")
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
    ``username`` is a header. Blank lines are skipped. The columns are separated by commas,
    or by semicolons or tabs when the first line has those and no comma (a spreadsheet
    saving "CSV" where the decimal mark is a comma writes ``;``). A bad row (a third column,
    no username, a name that cannot be a Lichess username, a FIDE id that is not one) is one line
    ``"row N: reason"`` (N: the file's line number); a user on several rows with different
    FIDE ids is one line naming them (see :func:`conflicts`) and is not read at all. Raises
    ArgumentError (exit 2) when the file cannot be read as UTF-8 text.
    """
    rows, bad = _roster_rows(path)
    members, clashes = conflicts(rows)
    return members, bad + clashes


def conflicts(entries: Sequence[tuple[str, Member]]) -> tuple[list[Member], list[str]]:
    """``[(where, member), …]`` (``where``: ``"row 3"``, ``"--fide"``…) → ``(members, bad)``:
    a user given more than once with different FIDE ids is left out and is one line naming
    every place (``"rows 3 and 7: 'alice' is given with different FIDE ids (12345, 67890):
    not added"``), never the last one winning silently. Given twice with one FIDE id (or one
    with and one without) the entries stand, as :func:`~tracker.store.groups.add_members`
    merges them."""
    ids: dict[str, list[tuple[str, Member]]] = {}
    for where, m in entries:
        ids.setdefault(m.user_id, []).append((where, m))
    clashing: dict[str, str] = {}
    for uid, given in ids.items():
        fides = list(dict.fromkeys(m.fide_id for _, m in given if m.fide_id is not None))
        if len(fides) > 1:
            places = [w for w, _ in given]
            rows = all(w.startswith("row ") for w in places)
            named = ("rows " + _and([w.removeprefix("row ") for w in places]) if rows
                     else _and(places))
            clashing[uid] = (f"{named}: {given[0][1].username!r} is given with different "
                             f"FIDE ids ({', '.join(map(str, fides))}): not added")
    return ([m for _, m in entries if m.user_id not in clashing], list(clashing.values()))


def _other_groups_agree(store: Any, name: str, todo: Sequence[Member]
                        ) -> tuple[list[Member], list[str]]:
    """``todo`` without the members given a FIDE id that another group gives them
    differently, and one line for each: a player has one FIDE link, so two groups with two
    ids would make each sync link its own and each group's table and calibration read the
    other's ratings."""
    from tracker.store import groups

    given = [m.user_id for m in todo if m.fide_id is not None]
    other = groups.fide_ids_elsewhere(store, name, given) if given else {}
    bad: dict[str, str] = {}
    for m in todo:
        clash = [(g, f) for g, f in other.get(m.user_id, []) if f != m.fide_id]
        if m.fide_id is not None and clash:
            there = _and([f"{f} in group {g}" for g, f in clash])
            bad[m.user_id] = (f"{m.username!r}: FIDE id {m.fide_id} here, but {there}: not "
                              "added (a player has one FIDE id: give the same one, or change "
                              "it in the other group first)")
    return [m for m in todo if m.user_id not in bad], list(bad.values())


def _and(words: Sequence[str]) -> str:
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)


def _roster_rows(path: str | os.PathLike[str]) -> tuple[list[tuple[str, Member]], list[str]]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ArgumentError(f"cannot read the roster {p}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ArgumentError(f"the roster {p} is not UTF-8 text") from None
    found: list[tuple[str, Member]] = []
    bad: list[str] = []
    first = next((line for line in text.splitlines() if line.strip()), "")
    sep = next((c for c in (",", ";", "\t") if c in first), ",")
    reader = csv.reader(text.splitlines(), delimiter=sep)
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
            found.append((f"row {line}", _member(cells[0], cells[1] if len(cells) > 1
                                                  else None)))
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
    A bad username or row is one line in ``bad`` and the rest is added; so is a user given
    with different FIDE ids (roster rows, ``--fide``: see :func:`conflicts`), who is not
    added. Raises
    UnknownGroupError, ArgumentError (an unreadable roster; nothing added).
    """
    from tracker.store import groups, players

    check_writable(db, "changing groups")
    store = open_store(db)
    gname = groups.check_name(name)
    fide_by_id = {u.strip().lower(): f for u, f in (fide or {}).items()}
    given: list[tuple[str, Member]] = []
    bad: list[str] = []
    if from_csv is not None:
        given, bad = _roster_rows(from_csv)
    named = list(users) + [u for u in (fide or {}) if u.strip().lower() not in
                           {x.strip().lower() for x in users}]
    for user in named:
        try:
            fid = fide_by_id.get(user.strip().lower())
            given.append(("--fide" if fid is not None else "the command line",
                          _member(user, fid)))
        except ValueError as exc:
            bad.append(f"{user!r}: {exc}")
    todo, clashes = conflicts(given)
    todo, elsewhere = _other_groups_agree(store, gname, todo)
    changes = groups.add_members(store, gname, todo)
    added = set(changes.added)
    for m in todo:  # a member is a tracked player: `players`, the dashboard's picker
        if m.user_id in added and not players.is_tracked(store, m.user_id):
            store.ensure_player(m.user_id, m.username)
    bad += clashes + elsewhere
    return GroupAddResult(gname, changes.added, changes.already, bad)


def group_remove(name: str, users: Sequence[str], *, db: Db = None) -> GroupRemoveResult:
    """``tracker group remove NAME USER…``: take members out of the group (their games and
    FIDE links stay). Raises UnknownGroupError."""
    from tracker.store import groups

    check_writable(db, "changing groups")
    gname = groups.check_name(name)
    removed, missing = groups.remove_members(open_store(db), gname, users)
    return GroupRemoveResult(gname, removed, missing)


def group_list(*, db: Db = None) -> list[GroupInfo]:
    """``tracker group list``: every group by name, with its member count and creation time
    (ms since the epoch, UTC)."""
    from tracker.store import groups

    return groups.list_groups(open_store(db))


def group_members(name: str, *, db: Db = None) -> list[tuple[str, int | None]]:
    """The members of group ``name``: ``[(username as given, FIDE id to link or None), …]``
    by lowercase id. Raises UnknownGroupError."""
    from tracker.store import groups

    return [(m.username, m.fide_id) for m in
            groups.members(open_store(db), groups.check_name(name))]


def group_refresh(name: str, perfs: Sequence[str] | None = None, *, db: Db = None) -> int:
    """Compute and save the table's summary of every member whose saved one is stale (after a
    sync wrote games), in ``perfs`` (default: every standard perf), so that the next table
    and Group page read saved rows. Returns how many were computed. Raises ReadOnlyError on a
    read-only database, UnknownGroupError."""
    from tracker.core.records import SPEEDS
    from tracker.report.group import refresh

    check_writable(db, "saving the group table")
    store = open_store(db)
    names = [u for u, _ in group_members(name, db=store)]
    return refresh(store, names, list(perfs or SPEEDS), group=name.strip())


@dataclass(frozen=True, slots=True)
class SyncResult:
    """What ``tracker sync`` did: ``group`` (``None``: every tracked player and every group's
    members) and one :class:`~tracker.importing.group_sync.PlayerSync` per player, in order."""

    group: str | None
    players: list[PlayerSync] = field(default_factory=list)

    @property
    def failed(self) -> list[PlayerSync]:
        """The players whose sync failed."""
        return [p for p in self.players if p.status != "synced"]

    @property
    def new(self) -> int:
        """Games stored for the first time, over all players."""
        return sum(p.new for p in self.players)


def sync(
    group: str | None = None,
    *,
    db: Db = None,
    base_url: str | None = None,
    token: str | None = None,
    token_file: str | os.PathLike[str] | None = None,
    retry_wait_429: float = 60.0,
    retry_wait: float = 2.0,
    timeout: tuple[float, float] = (5.0, 30.0),
    max_retries: int = 5,
    on_player: Callable[[int, int, str], None] | None = None,
    on_done: Callable[[PlayerSync], None] | None = None,
) -> SyncResult:
    """``tracker sync [--group NAME]``: bring every tracked player and every group member (or
    the group's members) up to date, one player and one Lichess request at a time.

    Each player: the incremental import of ``tracker import USER`` (games newer than the
    sync cursor; a first sync reads the whole history), a linked FIDE id refreshed at most
    once a UTC day (FIDE publishes monthly; a later sync the same day sends no FIDE request),
    with a token the rating history of a player whose run received games (or who has none
    stored), and a member's FIDE id (``group add --fide``) linked when it is not the one
    linked. An import
    stopped by HTTP 429s is waited out (``retry_wait_429`` seconds) and resumed; a player that
    still fails (closed account, network) is reported and the others go on. The token and the
    base URL as in :func:`tracker.api.import_user`; ``on_player(i, n, username)`` before and
    ``on_done(PlayerSync)`` after each player. When games were written, the group table's
    saved rows of the group (every group, without one) are computed again at the end
    (:func:`tracker.api.group_refresh`). Raises UnknownGroupError, TokenError (exit 2).
    """
    from tracker.api.importing import resolve_token
    from tracker.core import config
    from tracker.importing.group_sync import SyncTarget, sync_players
    from tracker.sources.lichess import LichessOptions, make_session
    from tracker.store import groups, queries

    check_writable(db, "syncing players")
    key = resolve_token(token, token_file)
    store = open_store(db, create=True)
    check_writable(store, "syncing players")  # a role that may not write: before any request
    if group is not None:
        name = groups.check_name(group)
        targets = [SyncTarget(m.username, m.fide_id) for m in groups.members(store, name)]
    else:
        name = None
        members = {m.user_id: m for m in groups.all_members(store)}
        targets = [SyncTarget(p.username, members.pop(p.id).fide_id if p.id in members
                              else None) for p in queries.list_players(store)]
        targets += [SyncTarget(m.username, m.fide_id) for m in members.values()]
    options = LichessOptions(base_url=config.base_url(base_url), token=key,
                             session=make_session(key, timeout), retry_wait_429=retry_wait_429,
                             retry_wait=retry_wait, max_retries=max_retries)
    rows = sync_players(store, targets, options, on_player=on_player, on_done=on_done)
    if any(p.new or p.updated for p in rows):
        # Games were written: every saved table row is stale (the write counter moved), so
        # the members' summaries are computed now, not on the first Group page after.
        for g in [name] if name is not None else [g.name for g in groups.list_groups(store)]:
            group_refresh(g, db=store)
    return SyncResult(name, rows)


def sync_row(p: PlayerSync) -> dict[str, object]:
    """One player of ``tracker sync --json``: username, status (``synced`` | ``failed``),
    games new and updated, what happened to the FIDE link, the message, seconds."""
    from dataclasses import asdict

    return asdict(p)


def group_calibrate(name: str, perf: str, *, db: Db = None, save: bool = True) -> Calibration:
    """``tracker group calibrate NAME --perf P``: the published scale models measured on the
    group's members with a linked FIDE id, and a club model fitted on them (see
    :mod:`tracker.report.calibration`): each model's signed and absolute mean gap (model − real FIDE
    standard, rating points, mean over members), the club line ``FIDE = a + b × Lichess``
    (least absolute deviations) with its leave-one-out error, n and range, stored with its
    data and date (``save``) so that ``--scale club:NAME`` replays with it. Below 8 usable
    members the fit is refused: ``club`` is ``None`` and ``refused`` says why. No network
    (``tracker sync --group NAME`` first). Raises UnknownGroupError, PerfError."""
    from tracker.report.calibration import calibrate

    if save:
        check_writable(db, "saving a club model")
    return calibrate(open_store(db), name, perf, save=save)


def club_scales(*, db: Db = None) -> list[tuple[str, tuple[str, ...]]]:
    """The club models stored, for a scale picker: ``[("club:NAME", perfs fitted), …]``."""
    from tracker.report.calibration import club_scales as stored

    return stored(open_store(db))


def calibration_json(c: Calibration) -> dict[str, Any]:
    """The ``tracker group calibrate --json`` object: group, perf, member counts, ``models``
    (key, name, signed_gap, mean_abs_gap, members, unrated; rating points, ``null`` = no
    value), ``club`` (intercept and slope as decimal strings, n, points, lichess_range,
    fide_range, mae, loo_mae, signed_gap, fitted_at ISO 8601 UTC; ``null`` when refused),
    ``refused`` (the reason or ``null``), ``left_out`` lines and ``data`` (user, month,
    lichess, fide)."""
    from dataclasses import asdict

    from tracker.core.records import ms_to_datetime

    def gap(g: ModelGap) -> dict[str, Any]:
        return {"key": g.key, "name": g.name, "signed_gap": _r(g.signed),
                "mean_abs_gap": _r(g.mean_abs), "members": g.members, "unrated": g.unrated}

    club = None
    if c.club is not None:
        club = {k: v for k, v in asdict(c.club).items() if k != "fitted_at_ms"}
        club.update(mae=_r(c.club.mae), loo_mae=_r(c.club.loo_mae),
                    lichess_range=list(c.club.lichess_range),
                    fide_range=list(c.club.fide_range),
                    signed_gap=_r(c.club_gap.signed) if c.club_gap else None,
                    fitted_at=ms_to_datetime(c.club.fitted_at_ms).isoformat()
                    if c.club.fitted_at_ms else None)
    return {"group": c.group, "perf": c.perf, "members": c.members, "linked": c.linked,
            "used": c.used, "models": [gap(g) for g in c.gaps], "club": club,
            "refused": c.refused, "left_out": c.left_out,
            "data": [asdict(d) for d in c.data]}


def _r(x: float | None) -> float | None:
    """A figure for JSON: one decimal."""
    return None if x is None else float(f"{x:.1f}")
