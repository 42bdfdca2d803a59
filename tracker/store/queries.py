"""The read side of the store: players, a player's games in a perf, import runs, settings.

Every function takes a :class:`~tracker.store.db.Store` and returns plain values (dataclasses,
records), never ORM objects, so the CLI and the dashboard can use them without a session.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import and_, func, select

from tracker.errors import TrackerError
from tracker.records import GameRecord, Side
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
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _utc(ms: int) -> datetime:
    """:func:`~tracker.records.ms_to_datetime` for stored values (already checked on the way
    in): the same aware UTC datetime, exactly, at a third of the cost."""
    return _EPOCH + timedelta(milliseconds=ms)


def player_games(
    store: Store, user_id: str, perf: str | None = None, *, with_raw: bool = False
) -> Iterator[GameRecord]:
    """A player's games (optionally of one perf), in end-time order (``ended_at_ms``, then id).

    Records are rebuilt from the columns; ``raw`` is filled only with ``with_raw=True``.
    """
    games = Game.__table__
    white = GameSide.__table__.alias("white")
    black = GameSide.__table__.alias("black")
    me = GameSide.__table__.alias("me")
    g = games.c
    cols = [
        g.id, g.source, g.created_at_ms, g.last_move_at_ms, g.rated, g.variant, g.speed, g.perf,
        g.status, g.result, g.plies, g.clock_initial, g.clock_increment, g.days_per_turn,
        g.initial_fen, g.eco, g.opening_name, g.tournament_id,
        *(white.c[c] for c in _SIDE_COLUMNS),
        *(black.c[c] for c in _SIDE_COLUMNS),
    ]
    if with_raw:
        cols.append(g.raw)
    stmt = (
        select(*cols)
        .join(me, and_(me.c.game_id == g.id, me.c.user_id == user_id.lower()))
        .join(white, and_(white.c.game_id == g.id, white.c.color == "white"))
        .join(black, and_(black.c.game_id == g.id, black.c.color == "black"))
        .order_by(g.ended_at_ms, g.id)
    )
    if perf is not None:
        stmt = stmt.where(g.perf == perf)
    # Core rows on a plain connection, not an ORM session: the ORM's row processing was half
    # of a 100k-game replay report.
    with store.engine.connect() as conn:
        for row in conn.execute(stmt):
            (gid, source, created, last, rated, variant, speed, game_perf, status, result, plies,
             initial, increment, days, fen, eco, opening, tournament) = row[:18]
            wp = row[23]
            bp = row[30]
            yield GameRecord(
                gid,
                source,
                _utc(created),
                Side(row[18], row[19], row[20], row[21], row[22],
                     wp if wp.__class__ is bool else bool(wp), row[24]),
                Side(row[25], row[26], row[27], row[28], row[29],
                     bp if bp.__class__ is bool else bool(bp), row[31]),
                _utc(last) if last is not None else None,
                rated,
                variant,
                speed,
                game_perf,
                status,
                result,
                plies,
                initial,
                increment,
                days,
                fen,
                eco,
                opening,
                tournament,
                decompress_raw(row[32]) if with_raw else "",
            )


#: The columns of :func:`replay_rows`, in order.
REPLAY_COLUMNS = (
    "id", "source", "created_at_ms", "ended_at_ms", "rated", "variant", "status", "result",
    "plies",
    "white_user_id", "white_name", "white_rating", "white_rating_diff", "white_provisional",
    "white_ai_level",
    "black_user_id", "black_name", "black_rating", "black_rating_diff", "black_provisional",
    "black_ai_level",
)


def replay_rows(store: Store, user_id: str, perf: str) -> list[tuple]:  # type: ignore[type-arg]
    """The player's games of ``perf`` as plain tuples of :data:`REPLAY_COLUMNS`, in the order
    of :func:`player_games`: only what a replay reads, for a report over 100k games without
    building 100k records. Booleans are as the driver gives them (0/1 from SQLite)."""
    games = Game.__table__
    white = GameSide.__table__.alias("white")
    black = GameSide.__table__.alias("black")
    me = GameSide.__table__.alias("me")
    g = games.c
    side = ("user_id", "name", "rating", "rating_diff", "provisional", "ai_level")
    stmt = (
        select(g.id, g.source, g.created_at_ms, g.ended_at_ms, g.rated, g.variant, g.status,
               g.result, g.plies, *(white.c[c] for c in side), *(black.c[c] for c in side))
        .join(me, and_(me.c.game_id == g.id, me.c.user_id == user_id.lower()))
        .join(white, and_(white.c.game_id == g.id, white.c.color == "white"))
        .join(black, and_(black.c.game_id == g.id, black.c.color == "black"))
        .where(g.perf == perf)
        .order_by(g.ended_at_ms, g.id)
    )
    return store.plain_rows(stmt)


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


def game_source(store: Store, game_id: str) -> tuple[str, str | None, str, str] | None:
    """One game's source text, for showing its moves: ``(raw, initial_fen, variant, source)``,
    or ``None`` when no game has that id."""
    with store.engine.connect() as conn:
        row = conn.execute(
            select(Game.raw, Game.initial_fen, Game.variant, Game.source)
            .where(Game.id == game_id)
        ).first()
    if row is None:
        return None
    return decompress_raw(row[0]), row[1], row[2], row[3]
