"""Players in the store: the tracked players, their games per perf, and their replay settings.

A player is tracked once an import was for them, or once added to a group, a FIDE id linked
or settings saved (:func:`ensure_player`); their replay settings
are columns of the same row (``None``: the product default), read and written here as a plain
:class:`SettingsRow` so that no other module touches the ORM.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import func, select

from tracker.core.errors import ArgumentError, TrackerError
from tracker.core.records import player_name_problem
from tracker.core.utc import now_ms
from tracker.store.engine import Database
from tracker.store.models import Game, GameSide, Player


class UnknownPlayerError(TrackerError, LookupError):
    """No games of that player in the database (message is one line)."""


@dataclass(frozen=True, slots=True)
class PerfSummary:
    """Games of one player in one perf: count, first and last game (ms since epoch, UTC)."""

    perf: str
    games: int
    first_ms: int
    last_ms: int


@dataclass(frozen=True, slots=True)
class PlayerSummary:
    """A tracked player with games per perf, most played first."""

    id: str
    username: str
    games: int
    perfs: tuple[PerfSummary, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class SettingsRow:
    """A player's stored replay settings, as stored (``None``: not set, the default applies)."""

    start_rating: int | None = None
    birth_year: int | None = None
    rules: str | None = None
    expected: str | None = None
    count_provisional: bool | None = None
    scale: str | None = None
    start_scale: str | None = None
    chapter: str | None = None


def ensure_player(db: Database, user_id: str, username: str | None = None) -> None:
    """Track the player ``user_id`` (any case): created if new, never twice.

    An upsert, so two imports of a new player at the same time both succeed.
    ``username`` (as Lichess spells it) replaces the stored spelling when given.
    """
    uid = user_id.lower()
    stmt = db.insert(Player.__table__).values(  # type: ignore[arg-type]  # a Table at runtime
        id=uid, username=username or user_id, added_at_ms=now_ms())
    if username and username.lower() == uid:
        stmt = stmt.on_conflict_do_update(index_elements=["id"], set_={"username": username})
    else:
        stmt = stmt.on_conflict_do_nothing(index_elements=["id"])
    with db.engine.begin() as conn:
        conn.execute(stmt)


def is_tracked(db: Database, user_id: str) -> bool:
    """Whether ``user_id`` (any case) is a tracked player."""
    with db.session() as s:
        return s.get(Player, user_id.lower()) is not None


def _by_games(perfs: list[PerfSummary]) -> list[PerfSummary]:
    return sorted(perfs, key=lambda p: (-p.games, p.perf))


def list_players(db: Database) -> list[PlayerSummary]:
    """Tracked players (those an import was for), with their games per perf."""
    with db.session() as s:
        players = s.execute(select(Player.id, Player.username).order_by(Player.id)).all()
        rows = s.execute(
            select(
                GameSide.user_id,
                Game.perf,
                func.count(),
                func.min(Game.ended_at_ms),
                func.max(Game.ended_at_ms),
            )
            .join(Game, Game.pk == GameSide.game_pk)
            .where(GameSide.user_id.in_([p.id for p in players]))
            .group_by(GameSide.user_id, Game.perf)
        ).all()
    perfs: dict[str, list[PerfSummary]] = {}
    for uid, perf, n, first, last in rows:
        assert uid is not None  # the rows are of tracked players' ids
        perfs.setdefault(uid, []).append(PerfSummary(perf or "unknown", n, first, last))
    out = []
    for pid, username in players:
        ps = _by_games(perfs.get(pid, []))
        out.append(PlayerSummary(pid, username, sum(p.games for p in ps), tuple(ps)))
    return out


def resolve_player(db: Database, username: str) -> str:
    """The stored user id for ``username`` (any case). Raises UnknownPlayerError, or
    ArgumentError for a name no player can have
    (:func:`~tracker.core.records.player_name_problem`)."""
    why = player_name_problem(username)
    if why:
        raise ArgumentError(f"{username!r} cannot be a player's name: {why}")
    uid = username.strip().lower()
    with db.session() as s:
        found = s.execute(
            select(GameSide.user_id).where(GameSide.user_id == uid).limit(1)
        ).scalar_one_or_none()
    if found is None:
        near = close_player(db, uid)
        raise UnknownPlayerError(
            f"no games of '{username}' in the database: "
            + (f"did you mean {near}? Else import them first" if near is not None
               else "import them first")
            + f" (tracker import {username}, or tracker import-file FILE --user {username})"
        )
    return uid


def close_player(db: Database, name: str) -> str | None:
    """The tracked player whose name is closest to ``name`` (a typo: one or two letters off),
    as they write it, or ``None`` when none is close (what the CLI does for commands)."""
    import difflib

    with db.session() as s:
        players = {pid: name for pid, name in s.execute(select(Player.id, Player.username))}
    near = difflib.get_close_matches(name.strip().lower(), list(players), n=1, cutoff=0.75)
    return (players[near[0]] or near[0]) if near else None


def player_perfs(db: Database, user_id: str) -> list[PerfSummary]:
    """The perfs a player has games in, most played first."""
    with db.session() as s:
        rows = s.execute(
            select(Game.perf, func.count(), func.min(Game.ended_at_ms), func.max(Game.ended_at_ms))
            .join(GameSide, GameSide.game_pk == Game.pk)
            .where(GameSide.user_id == user_id.lower())
            .group_by(Game.perf)
        ).all()
    return _by_games([PerfSummary(p or "unknown", n, a, b) for p, n, a, b in rows])


def get_settings_row(db: Database, user_id: str) -> SettingsRow:
    """The stored settings of a player (all ``None`` for a player with none, or unknown)."""
    with db.session() as s:
        p = s.get(Player, user_id.lower())
        if p is None:
            return SettingsRow()
        return SettingsRow(p.start_rating, p.birth_year, p.rules, p.expected,
                           p.count_provisional, p.scale, p.start_scale, p.chapter)


def save_settings_row(db: Database, user_id: str, row: SettingsRow) -> None:
    """Store a player's settings (every field, ``None`` included); tracks the player if new."""
    uid = user_id.lower()
    ensure_player(db, uid)
    with db.session() as s:
        p = s.get(Player, uid)
        assert p is not None  # just ensured
        p.start_rating = row.start_rating
        p.birth_year = row.birth_year
        p.rules = row.rules
        p.expected = row.expected
        p.count_provisional = row.count_provisional
        p.scale = row.scale
        p.start_scale = row.start_scale
        p.chapter = row.chapter
