"""The database: engine, automatic migrations, batched upserts (SQLite and PostgreSQL).

This module is the only place that knows which SQL dialect it talks to: the upsert
(``INSERT … ON CONFLICT``) is built with the dialect's own ``insert`` from SQLAlchemy, and the
SQLite connection settings (WAL, foreign keys) are applied here.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import zstandard
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, and_, create_engine, event, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from tracker.config import database_url, shown_url
from tracker.errors import TrackerError
from tracker.records import GameRecord, Side, datetime_to_ms
from tracker.store.models import Game, GameSide, ImportRun, Player

#: Games written per transaction: an interrupted import keeps every finished batch, never a
#: half-written game, and a batch is small enough to keep memory flat.
BATCH_SIZE = 500

#: A richer source is never overwritten by a poorer one (PGN has no end time, no provisional
#: flags): re-importing a PGN download over API games changes nothing.
SOURCE_RANK = {"api": 2, "ndjson": 2, "pgn": 1}

#: zstd level for the raw text. Level 1 compresses a Lichess game (~730 bytes of NDJSON) to
#: ~480 bytes in ~4 µs, a third of zlib's time at any level (zlib's output is ~440 bytes).
RAW_COMPRESSION_LEVEL = 1


@dataclass(frozen=True, slots=True)
class StoredGame:
    """What a re-import needs of a stored game: its raw digest, and (user id, name) per side."""

    digest: str
    white: tuple[str | None, str | None]
    black: tuple[str | None, str | None]


#: Tries at migrating a database another process may be creating at the same moment.
_MIGRATE_ATTEMPTS = 4


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
    # Import speed: a 64 MB page cache (the default 2 MB thrashes on the id index past ~100k
    # games) and a WAL checkpoint every ~160 MB instead of every 4 MB: each one syncs the disk
    # and copies every page again (1M games: 8k → 10.6k games/s; 3x the cache gave 0.3k).
    cur.execute("PRAGMA cache_size=-65536")
    cur.execute("PRAGMA wal_autocheckpoint=40000")
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

    Two processes opening a new database at once: the one that loses the race waits for the
    other's schema and finds it at head. Raises DatabaseError when the database was written by
    a newer tracker.
    """
    cfg = alembic_config()
    script = ScriptDirectory.from_config(cfg)
    head = script.get_current_head()
    known = {s.revision for s in script.walk_revisions()}
    for attempt in range(_MIGRATE_ATTEMPTS):
        try:
            with engine.begin() as conn:
                current = MigrationContext.configure(conn).get_current_revision()
                if current == head:
                    return
                if current is not None and current not in known:
                    raise DatabaseError(
                        f"the database is at schema {current}, unknown to this tracker: "
                        "upgrade tracker"
                    )
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, "head")
                return
        except OperationalError:
            if attempt == _MIGRATE_ATTEMPTS - 1:
                raise
            time.sleep(0.5 * (attempt + 1))  # another process is creating the schema


def _check_sqlite_file(url: str) -> None:
    """Say plainly what is wrong with a SQLite file path before the driver says "unable to
    open database file": a folder, a read-only file or folder. A missing folder is created."""
    if not url.startswith("sqlite:///") or url in ("sqlite:///:memory:",):
        return
    path = Path(url.removeprefix("sqlite:///").split("?", 1)[0])
    if not str(path):
        return
    if path.is_dir():
        raise DatabaseError(f"{path} is a folder: give a database file, e.g. {path}/tracker.db")
    if path.exists():
        if not os.access(path, os.R_OK | os.W_OK):
            raise DatabaseError(f"cannot read and write the database {path} (permissions)")
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseError(f"cannot create the folder for the database {path}: "
                            f"{exc.strerror or exc}") from None
    if not os.access(path.parent, os.W_OK):
        raise DatabaseError(f"cannot create the database {path}: its folder is read-only")


def now_ms() -> int:
    """Now, in milliseconds since the epoch, UTC."""
    return time.time_ns() // 1_000_000


def raw_digest(raw: str) -> str:
    return hashlib.blake2b(raw.encode("utf-8"), digest_size=8).hexdigest()


_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # never a valid zlib header (its check bits fail)
#: One zstd (de)compressor per thread: they are not thread-safe, and making one per call
#: costs twice the compression itself.
_zstd = threading.local()


def compress_raw(raw: str) -> bytes:
    """The raw text as stored: a zstd frame of its UTF-8 bytes."""
    try:
        compressor = _zstd.compressor
    except AttributeError:
        compressor = _zstd.compressor = zstandard.ZstdCompressor(
            level=RAW_COMPRESSION_LEVEL, write_content_size=True, write_checksum=False
        )
    return compressor.compress(raw.encode("utf-8"))  # type: ignore[no-any-return]


def decompress_raw(blob: bytes) -> str:
    """Stored raw text back to a string: zstd frames, and zlib streams of older databases."""
    if blob[:4] != _ZSTD_MAGIC:
        return zlib.decompress(blob).decode("utf-8")
    try:
        decompressor = _zstd.decompressor
    except AttributeError:
        decompressor = _zstd.decompressor = zstandard.ZstdDecompressor()
    return decompressor.decompress(blob).decode("utf-8")  # type: ignore[no-any-return]


#: Column order of the rows :func:`_game_values` and :func:`_side_values` build.
GAME_COLUMNS: Final = (
    "id", "source", "created_at_ms", "last_move_at_ms", "ended_at_ms", "rated", "variant",
    "speed", "perf", "status", "result", "plies", "clock_initial", "clock_increment",
    "days_per_turn", "initial_fen", "eco", "opening_name", "tournament_id", "raw", "digest",
)
SIDE_COLUMNS: Final = (
    "game_id", "color", "user_id", "name", "title", "rating", "rating_diff", "provisional",
    "ai_level",
)


def _game_values(rec: GameRecord, digest: str) -> tuple[Any, ...]:
    created = datetime_to_ms(rec.created_at)
    last = datetime_to_ms(rec.last_move_at) if rec.last_move_at is not None else None
    return (
        rec.id, rec.source, created, last, last if last is not None else created, rec.rated,
        rec.variant, rec.speed, rec.perf, rec.status, rec.result, rec.plies, rec.clock_initial,
        rec.clock_increment, rec.days_per_turn, rec.initial_fen, rec.eco, rec.opening_name,
        rec.tournament_id, compress_raw(rec.raw), digest,
    )


def _side_values(game_id: str, color: str, s: Side) -> tuple[Any, ...]:
    return (game_id, color, s.user_id, s.name, s.title, s.rating, s.rating_diff, s.provisional,
            s.ai_level)


def _game_row(rec: GameRecord, digest: str) -> dict[str, Any]:
    return dict(zip(GAME_COLUMNS, _game_values(rec, digest), strict=True))


def _side_row(game_id: str, color: str, s: Side) -> dict[str, Any]:
    return dict(zip(SIDE_COLUMNS, _side_values(game_id, color, s), strict=True))


def _sqlite_upsert_sql(table: str, columns: Sequence[str], keys: Sequence[str]) -> str:
    """``INSERT … ON CONFLICT (keys) DO UPDATE`` with ``?`` parameters in ``columns`` order."""
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in keys)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
        f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {updates}"
    )


_SQLITE_GAMES_UPSERT: Final = _sqlite_upsert_sql("games", GAME_COLUMNS, ("id",))
_SQLITE_SIDES_UPSERT: Final = _sqlite_upsert_sql("game_sides", SIDE_COLUMNS, ("game_id", "color"))
#: Ids per ``IN (…)`` lookup: far below SQLite's bound-parameter limit on every version.
_LOOKUP_CHUNK: Final = 500


def _poorer(rec: GameRecord, stored: tuple[str, str, int | None, str | None]) -> bool:
    """True when ``rec`` has less than the stored copy of the same game: a poorer source, fewer
    plies, or no result where the stored copy has one. A finished game never loses moves."""
    _, source, plies, result = stored
    return (
        SOURCE_RANK[rec.source] < SOURCE_RANK.get(source, 0)
        or (plies is not None and rec.plies is not None and rec.plies < plies)
        or (result is not None and rec.result is None)
    )


def _pg_copy_upsert(conn: Connection, table: str, columns: Sequence[str], keys: Sequence[str],
                    rows: list[tuple[Any, ...]]) -> None:
    """PostgreSQL: ``COPY`` the rows into a temporary table shaped like ``table``, then one
    ``INSERT … SELECT … ON CONFLICT (keys) DO UPDATE``: a batch in three statements instead of
    one parameter set per row (100k games: 3.2× → see docs/performance.md of SQLite's time)."""
    cols = ", ".join(columns)
    tmp = f"tracker_upsert_{table}"
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in keys)
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(f"CREATE TEMP TABLE IF NOT EXISTS {tmp} "
                       f"(LIKE {table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS")
        with cursor.copy(f"COPY {tmp} ({cols}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cursor.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {tmp} "
                       f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {updates}")
        cursor.execute(f"TRUNCATE {tmp}")  # a second batch in the same transaction
    finally:
        cursor.close()


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
        if engine is None:
            _check_sqlite_file(self.url)
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
        return shown_url(self.url)

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

    def write_games(self, records: Iterable[GameRecord]) -> WriteCounts:
        """Insert or update one batch of games in one transaction; returns what it did.

        A game already stored with the same raw text is left alone (``unchanged``), and so is
        one that the new copy would make poorer: a richer source (API/NDJSON over PGN), more
        moves or a result are never overwritten by a copy with less (a cut file's last game).
        Call it with batches of about :data:`BATCH_SIZE`; each call commits.
        """
        by_id: dict[str, GameRecord] = {}
        for rec in records:
            by_id[rec.id] = rec  # the last copy of a game within a batch wins
        counts = WriteCounts()
        if not by_id:
            return counts
        with self.engine.begin() as conn:
            existing = self._stored(conn, list(by_id))
            game_rows: list[tuple[Any, ...]] = []
            side_rows: list[tuple[Any, ...]] = []
            for gid, rec in by_id.items():
                digest = raw_digest(rec.raw)
                old = existing.get(gid)
                if old is None:
                    counts.new += 1
                elif old[0] == digest or _poorer(rec, old):
                    counts.unchanged += 1
                    continue
                else:
                    counts.updated += 1
                game_rows.append(_game_values(rec, digest))
                side_rows.append(_side_values(gid, "white", rec.white))
                side_rows.append(_side_values(gid, "black", rec.black))
            if game_rows:
                game_rows.sort()  # in id order the index pages touched are touched in turn
                side_rows.sort()
                self._upsert_rows(conn, Game.__table__, GAME_COLUMNS, game_rows)
                self._upsert_rows(conn, GameSide.__table__, SIDE_COLUMNS, side_rows)
        return counts

    def stored_digests(self, ids: Sequence[str]) -> dict[str, str]:
        """``{game id: raw digest}`` of the games among ``ids`` already stored (one cheap
        lookup: a first import asks it for every batch and finds nothing)."""
        with self.engine.connect() as conn:
            return {gid: row[0] for gid, row in self._stored(conn, ids).items()}

    def stored_games(self, ids: Sequence[str]) -> dict[str, StoredGame]:
        """The games among ``ids`` already stored: raw digest and both sides' user id and name.

        A re-import uses it to count a game whose raw text is unchanged without parsing it.
        """
        games = Game.__table__
        white = GameSide.__table__.alias("white")
        black = GameSide.__table__.alias("black")
        out: dict[str, StoredGame] = {}
        with self.engine.connect() as conn:
            for i in range(0, len(ids), _LOOKUP_CHUNK):
                stmt = (
                    select(games.c.id, games.c.digest, white.c.user_id, white.c.name,
                           black.c.user_id, black.c.name)
                    .join(white, and_(white.c.game_id == games.c.id, white.c.color == "white"))
                    .join(black, and_(black.c.game_id == games.c.id, black.c.color == "black"))
                    .where(games.c.id.in_(list(ids[i : i + _LOOKUP_CHUNK])))
                )
                for gid, digest, wid, wname, bid, bname in conn.execute(stmt):
                    out[gid] = StoredGame(digest, (wid, wname), (bid, bname))
        return out

    def _stored(self, conn: Connection, ids: Sequence[str]
                ) -> dict[str, tuple[str, str, int | None, str | None]]:
        """``{id: (digest, source, plies, result)}`` of the games among ``ids`` already stored."""
        games = Game.__table__
        out: dict[str, tuple[str, str, int | None, str | None]] = {}
        for i in range(0, len(ids), _LOOKUP_CHUNK):
            chunk = list(ids[i : i + _LOOKUP_CHUNK])
            if self.dialect == "sqlite":  # the driver directly: a third of the time per batch
                rows = conn.exec_driver_sql(
                    "SELECT id, digest, source, plies, result FROM games WHERE id IN "
                    f"({', '.join('?' * len(chunk))})",
                    tuple(chunk),
                )
            else:
                rows = conn.execute(
                    select(games.c.id, games.c.digest, games.c.source, games.c.plies,
                           games.c.result).where(games.c.id.in_(chunk))
                )
            for gid, digest, source, plies, result in rows:
                out[gid] = (digest, source, plies, result)
        return out

    def _upsert_rows(self, conn: Connection, table: Any, columns: Sequence[str],
                     rows: list[tuple[Any, ...]]) -> None:
        """Upsert value tuples (in ``columns`` order) on the table's primary key.

        SQLite gets a plain ``executemany`` of prepared text (SQLAlchemy's per-row parameter
        processing was a third of the import's time); other backends the dialect's upsert.
        """
        if self.dialect == "sqlite":
            sql = _SQLITE_GAMES_UPSERT if table.name == "games" else _SQLITE_SIDES_UPSERT
            conn.exec_driver_sql(sql, rows)  # type: ignore[arg-type]
            return
        keys = [c.name for c in table.primary_key.columns]
        if self.dialect == "postgresql":
            _pg_copy_upsert(conn, table.name, columns, keys, rows)
            return
        stmt = self._insert(table)
        stmt = stmt.on_conflict_do_update(
            index_elements=keys,
            set_={c: stmt.excluded[c] for c in columns if c not in keys},
        )
        conn.execute(stmt, [dict(zip(columns, row, strict=True)) for row in rows])

    def plain_rows(self, stmt: Any) -> list[tuple[Any, ...]]:
        """Run a Core ``SELECT`` and return the driver's own tuples.

        No per-row result processing: values come as the driver gives them (SQLite booleans
        as 0/1), for reads of 100k rows where SQLAlchemy's row objects cost more than the query.
        """
        with self.engine.connect() as conn:
            compiled = stmt.compile(dialect=conn.dialect,
                                    compile_kwargs={"render_postcompile": True})
            params = compiled.params
            args: Any = (
                tuple(params[k] for k in compiled.positiontup or ())
                if compiled.positional else params
            )
            cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
            try:
                cursor.execute(str(compiled), args)
                return cursor.fetchall()  # type: ignore[no-any-return]
            finally:
                cursor.close()

    def ensure_player(self, user_id: str, username: str | None = None) -> None:
        """Track the player ``user_id`` (any case): created if new, never twice.

        An upsert, so two imports of a new player at the same time both succeed.
        ``username`` (as Lichess spells it) replaces the stored spelling when given.
        """
        uid = user_id.lower()
        table = Player.__table__
        stmt = self._insert(table).values(id=uid, username=username or user_id,
                                          added_at_ms=now_ms())
        if username and username.lower() == uid:
            stmt = stmt.on_conflict_do_update(index_elements=["id"],
                                              set_={"username": username})
        else:
            stmt = stmt.on_conflict_do_nothing(index_elements=["id"])
        with self.engine.begin() as conn:
            conn.execute(stmt)

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
