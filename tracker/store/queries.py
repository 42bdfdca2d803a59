"""The read side of the store: players, a player's games in a perf, import runs, settings.

Every function takes a :class:`~tracker.store.db.Store` and returns plain values (dataclasses,
records), never ORM objects, so the CLI and the dashboard can use them without a session.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date

from sqlalchemy import and_, func, select
from sqlalchemy.orm import aliased

from tracker.errors import TrackerError
from tracker.records import GameRecord, Side, ms_to_datetime
from tracker.store.db import Store, decompress_raw
from tracker.store.models import Game, GameSide, ImportRun, Player, RatingHistoryPoint


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


def _first_last(rows: list[PerfSummary]) -> tuple[int | None, int | None]:
    if not rows:
        return None, None
    return min(r.first_ms for r in rows), max(r.last_ms for r in rows)


def list_players(store: Store) -> list[PlayerSummary]:
    """Tracked players (those an import was for), with their games per perf."""
    with store.session() as s:
        players = s.execute(select(Player.id, Player.username).order_by(Player.id)).all()
        rows = s.execute(
            select(
                GameSide.user_id,
                Game.perf,
                func.count(),
                func.min(Game.ended_at_ms),
                func.max(Game.ended_at_ms),
            )
            .join(Game, Game.id == GameSide.game_id)
            .where(GameSide.user_id.in_([p.id for p in players]))
            .group_by(GameSide.user_id, Game.perf)
        ).all()
    perfs: dict[str, list[PerfSummary]] = {}
    for uid, perf, n, first, last in rows:
        perfs.setdefault(uid, []).append(PerfSummary(perf or "unknown", n, first, last))
    out = []
    for pid, username in players:
        ps = sorted(perfs.get(pid, []), key=lambda p: (-p.games, p.perf))
        out.append(PlayerSummary(pid, username, sum(p.games for p in ps), tuple(ps)))
    return out


def resolve_player(store: Store, username: str) -> str:
    """The stored user id for ``username`` (any case). Raises UnknownPlayerError."""
    uid = username.strip().lower()
    with store.session() as s:
        found = s.execute(
            select(GameSide.user_id).where(GameSide.user_id == uid).limit(1)
        ).scalar_one_or_none()
    if found is None:
        raise UnknownPlayerError(
            f"no games of '{username}' in the database: import them first "
            f"(tracker import {username}, or tracker import-file FILE --user {username})"
        )
    return uid


def player_perfs(store: Store, user_id: str) -> list[PerfSummary]:
    """The perfs a player has games in, most played first."""
    with store.session() as s:
        rows = s.execute(
            select(Game.perf, func.count(), func.min(Game.ended_at_ms), func.max(Game.ended_at_ms))
            .join(GameSide, GameSide.game_id == Game.id)
            .where(GameSide.user_id == user_id.lower())
            .group_by(Game.perf)
        ).all()
    return sorted(
        (PerfSummary(p or "unknown", n, a, b) for p, n, a, b in rows),
        key=lambda p: (-p.games, p.perf),
    )


def _side(row: tuple) -> Side:  # type: ignore[type-arg]
    uid, name, title, rating, diff, prov, ai = row
    return Side(uid, name, title, rating, diff, bool(prov), ai)


_SIDE_COLUMNS = ("user_id", "name", "title", "rating", "rating_diff", "provisional", "ai_level")


def player_games(
    store: Store, user_id: str, perf: str | None = None, *, with_raw: bool = False
) -> Iterator[GameRecord]:
    """A player's games (optionally of one perf), in end-time order (``ended_at_ms``, then id).

    Records are rebuilt from the columns; ``raw`` is filled only with ``with_raw=True``.
    """
    white = aliased(GameSide)
    black = aliased(GameSide)
    me = aliased(GameSide)
    cols = [
        Game.id, Game.source, Game.created_at_ms, Game.last_move_at_ms, Game.rated, Game.variant,
        Game.speed, Game.perf, Game.status, Game.result, Game.plies, Game.clock_initial,
        Game.clock_increment, Game.days_per_turn, Game.initial_fen, Game.eco, Game.opening_name,
        Game.tournament_id,
        *(getattr(white, c) for c in _SIDE_COLUMNS),
        *(getattr(black, c) for c in _SIDE_COLUMNS),
    ]
    if with_raw:
        cols.append(Game.raw)
    stmt = (
        select(*cols)
        .join(me, and_(me.game_id == Game.id, me.user_id == user_id.lower()))
        .join(white, and_(white.game_id == Game.id, white.color == "white"))
        .join(black, and_(black.game_id == Game.id, black.color == "black"))
        .order_by(Game.ended_at_ms, Game.id)
    )
    if perf is not None:
        stmt = stmt.where(Game.perf == perf)
    with store.session() as s:
        for row in s.execute(stmt):
            last = row[3]
            yield GameRecord(
                id=row[0],
                source=row[1],
                created_at=ms_to_datetime(row[2]),
                last_move_at=ms_to_datetime(last) if last is not None else None,
                rated=row[4],
                variant=row[5],
                speed=row[6],
                perf=row[7],
                status=row[8],
                result=row[9],
                plies=row[10],
                clock_initial=row[11],
                clock_increment=row[12],
                days_per_turn=row[13],
                initial_fen=row[14],
                eco=row[15],
                opening_name=row[16],
                tournament_id=row[17],
                white=_side(row[18:25]),
                black=_side(row[25:32]),
                raw=decompress_raw(row[32]) if with_raw else "",
            )


def count_games(store: Store) -> int:
    """All games in the database."""
    with store.session() as s:
        return s.execute(select(func.count()).select_from(Game)).scalar_one()


@dataclass(frozen=True, slots=True)
class RunInfo:
    """An import run as stored (times in ms since the epoch, UTC)."""

    id: int
    source: str
    target: str
    player_id: str | None
    started_at_ms: int
    finished_at_ms: int | None
    status: str
    read: int
    new: int
    updated: int
    unchanged: int
    skipped: dict[str, int]
    message: str | None
    repaired: dict[str, int] = field(default_factory=dict)  # reason -> games imported repaired


def import_runs(store: Store, limit: int = 20) -> list[RunInfo]:
    """The most recent import runs, newest first."""
    with store.session() as s:
        runs = s.scalars(select(ImportRun).order_by(ImportRun.id.desc()).limit(limit)).all()
        return [
            RunInfo(
                r.id, r.source, r.target, r.player_id, r.started_at_ms, r.finished_at_ms,
                r.status, r.read, r.new, r.updated, r.unchanged, dict(r.skipped or {}), r.message,
                dict(r.repaired or {}),
            )
            for r in runs
        ]


def rating_history(store: Store, user_id: str, perf: str) -> list[tuple[date, int]]:
    """The stored Lichess rating-history series of a perf: (UTC day, rating), oldest first."""
    with store.session() as s:
        return [
            (d, r)
            for d, r in s.execute(
                select(RatingHistoryPoint.day, RatingHistoryPoint.rating)
                .where(
                    RatingHistoryPoint.player_id == user_id.lower(),
                    RatingHistoryPoint.perf == perf,
                )
                .order_by(RatingHistoryPoint.day)
            )
        ]


def data_version(store: Store) -> tuple[int, int]:
    """A cheap fingerprint of the database state: (games, newest import run id).

    It changes whenever an import lands, so caches keyed on it are invalidated by imports and
    by nothing else.
    """
    with store.session() as s:
        games = s.execute(select(func.count()).select_from(Game)).scalar_one()
        run = s.execute(select(func.max(ImportRun.finished_at_ms))).scalar_one()
    return games, run or 0
