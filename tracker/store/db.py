"""The database: engine, automatic migrations, batched upserts (SQLite and PostgreSQL).

This module is the only place that knows which SQL dialect it talks to: the upsert
(``INSERT … ON CONFLICT``) is built with the dialect's own ``insert`` from SQLAlchemy, and the
SQLite connection settings (WAL, foreign keys) are applied here.
"""

from __future__ import annotations

import hashlib
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from tracker.config import database_url
from tracker.errors import TrackerError
from tracker.records import GameRecord, Side, datetime_to_ms
from tracker.store.models import Game, GameSide, ImportRun, Player

#: Games written per transaction: an interrupted import keeps every finished batch, never a
#: half-written game, and a batch is small enough to keep memory flat.
BATCH_SIZE = 500

#: A richer source is never overwritten by a poorer one (PGN has no end time, no provisional
#: flags): re-importing a PGN download over API games changes nothing.
SOURCE_RANK = {"api": 2, "ndjson": 2, "pgn": 1}

#: zlib level for the raw text: level 1 is ~4x faster than the default for ~10% more bytes.
RAW_COMPRESSION_LEVEL = 1


class DatabaseError(TrackerError):
    """The database cannot be opened or migrated (message is one line, for the user)."""


@dataclass(slots=True)
class WriteCounts:
    """What one :meth:`Store.write_games` call did, in games."""

    new: int = 0
    updated: int = 0
    unchanged: int = 0

    def add(self, other: WriteCounts) -> None:
        self.new += other.new
        self.updated += other.updated
        self.unchanged += other.unchanged


def _migrations_dir() -> Path:
    """``migrations/`` of a source checkout, else the copy packed into the wheel."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here.parent / "migrations", here / "_migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise DatabaseError("tracker's migrations folder is missing from this installation")


def alembic_config() -> Config:
    """The Alembic configuration for tracker's migrations (no ``alembic.ini`` needed)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(_migrations_dir()))
    return cfg


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


def create_db_engine(url: str) -> Engine:
    """A SQLAlchemy engine for ``url`` with tracker's connection settings."""
    if url.startswith("sqlite"):
        if url in ("sqlite://", "sqlite:///:memory:"):
            engine = create_engine(
                url, poolclass=StaticPool, connect_args={"check_same_thread": False}
            )
        else:
            engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_on_connect)
        return engine
    return create_engine(url, pool_pre_ping=True)


def migrate(engine: Engine) -> None:
    """Upgrade the database to the newest schema (Alembic ``head``); never drops data.

    Raises DatabaseError when the database was written by a newer tracker.
    """
    cfg = alembic_config()
    script = ScriptDirectory.from_config(cfg)
    head = script.get_current_head()
    with engine.begin() as conn:
        current = MigrationContext.configure(conn).get_current_revision()
        if current == head:
            return
        if current is not None and current not in {s.revision for s in script.walk_revisions()}:
            raise DatabaseError(
                f"the database is at schema {current}, unknown to this tracker: upgrade tracker"
            )
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


def now_ms() -> int:
    """Now, in milliseconds since the epoch, UTC."""
    return time.time_ns() // 1_000_000


def raw_digest(raw: str) -> str:
    return hashlib.blake2b(raw.encode("utf-8"), digest_size=8).hexdigest()


def compress_raw(raw: str) -> bytes:
    return zlib.compress(raw.encode("utf-8"), RAW_COMPRESSION_LEVEL)


def decompress_raw(blob: bytes) -> str:
    return zlib.decompress(blob).decode("utf-8")


def _game_row(rec: GameRecord, digest: str) -> dict[str, Any]:
    created = datetime_to_ms(rec.created_at)
    last = datetime_to_ms(rec.last_move_at) if rec.last_move_at is not None else None
    return {
        "id": rec.id,
        "source": rec.source,
        "created_at_ms": created,
        "last_move_at_ms": last,
        "ended_at_ms": last if last is not None else created,
        "rated": rec.rated,
        "variant": rec.variant,
        "speed": rec.speed,
        "perf": rec.perf,
        "status": rec.status,
        "result": rec.result,
        "plies": rec.plies,
        "clock_initial": rec.clock_initial,
        "clock_increment": rec.clock_increment,
        "days_per_turn": rec.days_per_turn,
        "initial_fen": rec.initial_fen,
        "eco": rec.eco,
        "opening_name": rec.opening_name,
        "tournament_id": rec.tournament_id,
        "raw": compress_raw(rec.raw),
        "digest": digest,
    }


def _side_row(game_id: str, color: str, s: Side) -> dict[str, Any]:
    return {
        "game_id": game_id,
        "color": color,
        "user_id": s.user_id,
        "name": s.name,
        "title": s.title,
        "rating": s.rating,
        "rating_diff": s.rating_diff,
        "provisional": s.provisional,
        "ai_level": s.ai_level,
    }


class Store:
    """A tracker database: open it with a URL or path, and it is migrated to the newest schema.

    >>> store = Store("sqlite://")          # in memory
    >>> store.write_games([])
    WriteCounts(new=0, updated=0, unchanged=0)

    ``url`` is a SQLAlchemy URL or a file path; ``None`` means ``$TRACKER_DB`` or the default
    file in the user data folder (see :func:`tracker.config.database_url`).
    Raises DatabaseError (one-line message) when the database cannot be opened or migrated.
    """

    def __init__(self, url: str | None = None, *, engine: Engine | None = None) -> None:
        self.url = database_url(url) if engine is None else str(engine.url)
        try:
            self.engine = engine or create_db_engine(self.url)
            migrate(self.engine)
        except DatabaseError:
            raise
        except Exception as exc:  # driver errors: unreadable file, not a database, no server
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DatabaseError(f"cannot open database {self.display_url}: {reason}") from exc
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def display_url(self) -> str:
        """The URL with any password hidden."""
        try:
            return self.engine.url.render_as_string(hide_password=True)
        except AttributeError:
            return self.url

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session that commits on success and rolls back on error."""
        with self._sessions() as session, session.begin():
            yield session

    # -- the write side -------------------------------------------------------------------

    def _insert(self, table: Any) -> Any:
        """The dialect's ``INSERT`` that supports ``ON CONFLICT`` (the one dialect switch)."""
        if self.dialect == "postgresql":
            return postgresql.insert(table)
        if self.dialect == "sqlite":
            return sqlite.insert(table)
        raise DatabaseError(f"unsupported database backend {self.dialect!r}")

    def _upsert(self, session: Session, table: Any, rows: Sequence[dict[str, Any]]) -> None:
        if not rows:
            return
        stmt = self._insert(table)
        keys = [c.name for c in table.primary_key.columns]
        stmt = stmt.on_conflict_do_update(
            index_elements=keys,
            set_={c: stmt.excluded[c] for c in rows[0] if c not in keys},
        )
        session.execute(stmt, list(rows))

    def write_games(self, records: Iterable[GameRecord]) -> WriteCounts:
        """Insert or update one batch of games in one transaction; returns what it did.

        A game already stored with the same raw text is left alone (``unchanged``); one stored
        from a richer source (API/NDJSON over PGN) is never overwritten by a poorer one. Call it
        with batches of about :data:`BATCH_SIZE`; each call commits.
        """
        by_id: dict[str, GameRecord] = {}
        for rec in records:
            by_id[rec.id] = rec  # the last copy of a game within a batch wins
        counts = WriteCounts()
        if not by_id:
            return counts
        games = Game.__table__
        with self.session() as session:
            existing = {
                gid: (digest, source)
                for gid, digest, source in session.execute(
                    select(games.c.id, games.c.digest, games.c.source).where(
                        games.c.id.in_(list(by_id))
                    )
                )
            }
            game_rows: list[dict[str, Any]] = []
            side_rows: list[dict[str, Any]] = []
            for gid, rec in by_id.items():
                digest = raw_digest(rec.raw)
                old = existing.get(gid)
                if old is None:
                    counts.new += 1
                elif old[0] == digest or SOURCE_RANK[rec.source] < SOURCE_RANK.get(old[1], 0):
                    counts.unchanged += 1
                    continue
                else:
                    counts.updated += 1
                game_rows.append(_game_row(rec, digest))
                side_rows.append(_side_row(gid, "white", rec.white))
                side_rows.append(_side_row(gid, "black", rec.black))
            self._upsert(session, games, game_rows)
            self._upsert(session, GameSide.__table__, side_rows)
        return counts

    def ensure_player(self, user_id: str, username: str | None = None) -> Player:
        """The tracked player ``user_id`` (any case), created if new."""
        uid = user_id.lower()
        with self.session() as session:
            player = session.get(Player, uid)
            if player is None:
                player = Player(id=uid, username=username or user_id, added_at_ms=now_ms())
                session.add(player)
            elif username and player.username != username and username.lower() == uid:
                player.username = username
            return player

    def start_run(self, source: str, target: str, player_id: str | None = None) -> int:
        """Record an import run as ``running``; returns its id."""
        with self.session() as session:
            run = ImportRun(
                source=source,
                target=target,
                player_id=player_id,
                started_at_ms=now_ms(),
                status="running",
                read=0,
                new=0,
                updated=0,
                unchanged=0,
                skipped={},
                repaired={},
            )
            session.add(run)
            session.flush()
            return run.id

    def update_run(self, run_id: int, **fields: Any) -> None:
        """Set fields of an import run (counts, status, message, player_id, finished_at_ms)."""
        with self.session() as session:
            run = session.get(ImportRun, run_id)
            if run is None:
                raise DatabaseError(f"import run {run_id} does not exist")
            for key, value in fields.items():
                setattr(run, key, value)
