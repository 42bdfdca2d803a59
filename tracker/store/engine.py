"""The database connection: engine, migrations on open, and the SQL that depends on the dialect.

This module is the one place that knows which SQL dialect it talks to: the SQLite connection
settings (WAL, foreign keys, cache), the SQLite upsert text written out for speed, and the
dialect's own ``insert`` (``INSERT … ON CONFLICT``) from SQLAlchemy for the other backends.
:class:`Database` is an open, migrated database; the modules beside this one (games, runs,
players, sync) read and write it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import (
    Column,
    Connection,
    Engine,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    create_engine,
    event,
    insert,
    inspect,
    text,
)
from sqlalchemy.exc import OperationalError, ProgrammingError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool
from sqlalchemy.sql import Select

from tracker.core.config import database_url, shown_url, url_problem
from tracker.core.errors import ArgumentError, ReadOnlyError, TrackerError

if TYPE_CHECKING:  # Alembic is loaded only when a schema must be checked in full or upgraded
    from alembic.config import Config

#: Tries at migrating a database another process may be creating at the same moment.
_MIGRATE_ATTEMPTS: Final = 4


class DatabaseError(TrackerError):
    """The database cannot be opened or migrated (message is one line, for the user)."""


class UnsupportedDatabaseError(DatabaseError, ArgumentError):
    """A database URL of a kind tracker does not store in (``mysql://``, a misspelt scheme,
    a driver that is not installed): a usage error (exit code 2)."""


#: The SQLAlchemy backends tracker stores in, each with its driver installed with tracker.
_BACKENDS: Final = ("sqlite", "postgresql")


def _check_backend(url: str) -> None:
    """Raise UnsupportedDatabaseError (one line, the password hidden) unless ``url`` is a
    SQLite or PostgreSQL URL whose driver loads: not SQLAlchemy's "Can't load plugin:
    sqlalchemy.dialects:foo" or "No module named 'MySQLdb'"."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import NoSuchModuleError

    parsed = make_url(url)
    try:
        supported = (parsed.get_backend_name() in _BACKENDS
                     and parsed.get_dialect().import_dbapi() is not None)
    except (ImportError, NoSuchModuleError):  # an unknown scheme, a driver not installed
        supported = False
    if not supported:
        raise UnsupportedDatabaseError(
            f"unsupported database URL {shown_url(url)!r}: tracker stores in SQLite (a file "
            "path or sqlite:///x.db) or PostgreSQL (postgresql+psycopg://…)")


def _migrations_dir() -> Path:
    """``migrations/`` of a source checkout, else the copy packed into the wheel."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here.parent / "migrations", here / "_migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise DatabaseError("tracker's migrations folder is missing from this installation")


#: The newest migration's revision (``migrations/versions/``). A database already at it opens
#: without loading Alembic (a third of a small replay's start-up), and a new database is
#: created at it from the ORM metadata (:func:`migrate`); a test checks it is Alembic's head,
#: so a new migration must move it.
SCHEMA_HEAD: Final = "0013"


def alembic_config() -> Config:
    """The Alembic configuration for tracker's migrations (no ``alembic.ini`` needed)."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_migrations_dir()))
    return cfg


#: WAL bytes between two automatic checkpoints (SQLite counts them in pages of the file).
_WAL_CHECKPOINT_BYTES: Final = 160 * 1024 * 1024


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    cur = dbapi_connection.cursor()
    # 16 KB pages for a new database (an existing one keeps its own): a game row with its raw
    # text is ~600 bytes, and bigger pages mean fewer splits and a shallower tree on import
    # (100k games: ~9 % less SQLite CPU time than 4 KB). Set before anything is written.
    cur.execute("PRAGMA page_size=16384")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=30000")
    # Import speed: a 64 MB page cache (the default 2 MB thrashes on the id index past ~100k
    # games) and a WAL checkpoint every ~160 MB instead of every 4 MB: each one syncs the disk
    # and copies every page again (1M games: 8k → 10.6k games/s; 3x the cache gave 0.3k).
    cur.execute("PRAGMA cache_size=-65536")
    page_bytes = cur.execute("PRAGMA page_size").fetchone()[0]  # 16 KB, or an older file's
    cur.execute(f"PRAGMA wal_autocheckpoint={_WAL_CHECKPOINT_BYTES // page_bytes}")
    cur.close()


def _sqlite_query_only(dbapi_connection: Any, _record: Any) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA query_only=ON")  # any write: "attempt to write a readonly database"
    cur.close()


#: libpq's start-up option that makes every transaction of a session read-only: a write is
#: refused by the server ("cannot execute INSERT in a read-only transaction").
_PG_READ_ONLY: Final = "-c default_transaction_read_only=on"


#: Statements that write (their first word): refused on a read-only engine.
_WRITES: Final = ("INSERT", "UPDATE", "DELETE", "UPSERT", "REPLACE", "CREATE", "DROP",
                  "ALTER", "TRUNCATE", "COPY", "GRANT", "REVOKE", "VACUUM", "REINDEX")


#: Why a database opened read-only by tracker refuses writes (the end of the one line).
SERVED_READ_ONLY: Final = ("the database is served read-only (tracker dashboard --read-only, "
                           "or $TRACKER_READ_ONLY)")


class _RefuseWrites:
    """``before_cursor_execute`` of a read-only engine: a write is refused with one line
    (ReadOnlyError, ending with ``reason``) before the database sees it, whichever module
    asked for it."""

    def __init__(self, reason: str = SERVED_READ_ONLY) -> None:
        self.reason = reason

    def __call__(self, _conn: Any, _cursor: Any, statement: str, _params: Any, context: Any,
                 _many: bool) -> None:
        compiled_write = context is not None and (context.isinsert or context.isupdate
                                                  or context.isdelete)
        words = statement.split(None, 1)
        if compiled_write or (words and words[0].upper() in _WRITES):
            raise ReadOnlyError(f"writing to the database is not allowed: {self.reason}")


#: Whether the PostgreSQL session may write tracker's tables: the role (``current_user``),
#: whether its transactions are read-only (a hot standby, a role or database set to
#: ``default_transaction_read_only``), and whether it holds INSERT, UPDATE and DELETE on every
#: one of tracker's tables in the schema (``has_table_privilege`` with several privileges
#: means *any*; other applications' tables beside them are not looked at).
_PG_WRITABLE: Final = text(
    "SELECT current_user, current_setting('transaction_read_only'), "
    "coalesce(bool_and(has_table_privilege(c.oid, 'INSERT') "
    "AND has_table_privilege(c.oid, 'UPDATE') AND has_table_privilege(c.oid, 'DELETE')), "
    "true) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind = 'r' AND n.nspname = current_schema() AND c.relname = ANY(:names)")


def pg_write_refusal(engine: Engine) -> str | None:
    """Why a PostgreSQL database refuses this session's writes (one clause naming the role
    and what to do), or ``None`` when it takes them: a role granted only SELECT (how a club
    shares its database to be looked at), or a read-only server or role."""
    from tracker.store.models import Base

    names = sorted(Base.metadata.tables)
    with engine.connect() as conn:
        row = conn.execute(_PG_WRITABLE, {"names": names}).one()
    role, read_only, may_write = str(row[0]), row[1] == "on", bool(row[2])
    if read_only:
        return (f"the PostgreSQL server takes no writes from role {role} (a read-only server "
                "or default_transaction_read_only): run it with a role that may write")
    if not may_write:
        return (f"the PostgreSQL role {role} may only read this database: run it with a role "
                "that may write (GRANT INSERT, UPDATE, DELETE)")
    return None


def create_db_engine(url: str, *, read_only: bool = False,
                     reason: str = SERVED_READ_ONLY) -> Engine:
    """A SQLAlchemy engine for ``url`` with tracker's connection settings.

    ``read_only``: every write is refused with ReadOnlyError (its message ending with
    ``reason``) before it is sent, and every connection refuses writes by the database itself
    too (SQLite's ``query_only``, PostgreSQL's ``default_transaction_read_only``)."""
    if url.startswith("sqlite"):
        if url in ("sqlite://", "sqlite:///:memory:"):
            engine = create_engine(
                url, poolclass=StaticPool, connect_args={"check_same_thread": False}
            )
        else:
            engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_on_connect)
        if read_only:
            event.listen(engine, "connect", _sqlite_query_only)
            event.listen(engine, "before_cursor_execute", _RefuseWrites(reason))
        return engine
    if read_only and url.startswith("postgresql"):
        engine = create_engine(url, pool_pre_ping=True, connect_args={"options": _PG_READ_ONLY})
        event.listen(engine, "before_cursor_execute", _RefuseWrites(reason))
        return engine
    return create_engine(url, pool_pre_ping=True)


def migrate(engine: Engine) -> None:
    """Upgrade the database to the newest schema (Alembic ``head``); never drops data.

    A database already at head is left as it is, and a new one (no table yet) is created at
    head in one transaction (:func:`_create_at_head`); neither loads Alembic. Any other
    database is upgraded by the migrations. Two processes opening a new database at once: the
    one that loses the race waits for the other's schema and finds it at head. Raises
    DatabaseError when the database was written by a newer tracker.
    """
    found = _schema_revision(engine)
    if found == SCHEMA_HEAD:
        return
    if found is None:
        try:
            if _create_at_head(engine):
                return
        except OperationalError:
            pass  # busy past the timeout: the migrations' own retries below decide
        if _schema_revision(engine) == SCHEMA_HEAD:
            return  # another process created it while this one waited for the lock
    upgrade_by_migrations(engine)


def upgrade_by_migrations(engine: Engine) -> None:
    """Upgrade the database to head by running the Alembic migrations it has not had yet (a
    new database: all of them); retried while another process creates the same database."""
    from alembic import command
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

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


#: The PostgreSQL advisory lock key held while a new database's schema is created (any fixed
#: 64-bit number other than the write lock's).
_CREATE_LOCK_KEY: Final = 0x7472_6163_6B65_73


def _version_table() -> Table:
    """Alembic's own version table (``alembic_version``: ``version_num`` VARCHAR(32), primary
    key ``alembic_version_pkc``), as ``MigrationContext`` creates it; built here so that a new
    database is stamped without loading Alembic."""
    return Table("alembic_version", MetaData(),
                 Column("version_num", String(32), nullable=False),
                 PrimaryKeyConstraint("version_num", name="alembic_version_pkc"))


def seed_rows(conn: Connection) -> None:
    """The rows the migrations insert into a new database: ``store_state`` (1, 0) (0005). A
    migration that inserts rows must add them here too (a test compares both ways)."""
    from tracker.store.models import StoreState

    conn.execute(insert(StoreState).values(id=1, write_seq=0))


def _create_at_head(engine: Engine) -> bool:
    """Create a new database's schema at head in one step: every table of the ORM metadata
    (:mod:`tracker.store.models`, which a test holds equal to what the migrations make), the
    migrations' rows (:func:`seed_rows`) and Alembic's version row at :data:`SCHEMA_HEAD`, in
    one transaction (~40 ms instead of ~0.3 s for replaying every migration through Alembic,
    which is not loaded).

    Only a database with no table at all is created so: returns ``False``, touching nothing,
    when it has one (the migrations then decide). The transaction holds the database's write
    lock from its start (SQLite ``BEGIN IMMEDIATE``, a PostgreSQL advisory lock), so a second
    process creating the same database waits and then finds its tables."""
    from tracker.store.models import Base

    with engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN IMMEDIATE")  # DDL too runs in this transaction
        elif conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_CREATE_LOCK_KEY})")
        if inspect(conn).get_table_names():
            conn.rollback()
            return False
        Base.metadata.create_all(conn, checkfirst=False)
        seed_rows(conn)
        version = _version_table()
        version.create(conn)
        conn.execute(insert(version).values(version_num=SCHEMA_HEAD))
        conn.commit()
    return True


def _schema_revision(engine: Engine) -> str | None:
    """The database's Alembic revision read with plain SQL; ``None`` when it has none yet (a
    new database) or it cannot be read now (the full check then decides)."""
    try:
        with engine.connect() as conn:
            row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
    except (OperationalError, ProgrammingError):
        return None  # no alembic_version table (SQLite / PostgreSQL), or busy: the full check
    return None if row is None else str(row[0])


def _check_schema(engine: Engine, shown: str) -> None:
    """A database opened read-only is not migrated: it must be at this tracker's schema
    already. Raises DatabaseError (one line) otherwise."""
    found = _schema_revision(engine)
    if found != SCHEMA_HEAD:
        state = "no tracker schema" if found is None else f"schema {found}, not {SCHEMA_HEAD}"
        raise DatabaseError(f"the database {shown} has {state}: open it once without "
                            "--read-only (any tracker command) to create or upgrade it")


def _check_sqlite_file(url: str, *, read_only: bool = False) -> None:
    """Say plainly what is wrong with a SQLite file path before the driver says "unable to
    open database file": a folder, a read-only file or folder. A missing folder is created
    (not when ``read_only``: a missing file is then an error)."""
    if not url.startswith("sqlite:///") or url in ("sqlite:///:memory:",):
        return
    path = Path(url.removeprefix("sqlite:///").split("?", 1)[0])
    if not str(path):
        return
    if path.is_dir():
        raise DatabaseError(f"{path} is a folder: give a database file, e.g. {path}/tracker.db")
    if read_only and not path.exists():
        raise DatabaseError(f"no database at {path}: import games first (tracker import "
                            "USERNAME, or tracker import-file FILE)")
    if path.exists():
        if read_only:
            if not os.access(path, os.R_OK):
                raise DatabaseError(f"cannot read the database {path} (permissions)")
            return
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


def sqlite_upsert_sql(table: str, columns: Sequence[str], keys: Sequence[str]) -> str:
    """SQLite's ``INSERT … ON CONFLICT (keys) DO UPDATE`` with ``?`` parameters in ``columns``
    order (prepared text for ``executemany``: SQLAlchemy's per-row parameter processing was a
    third of an import's time)."""
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in keys)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
        f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {updates}"
    )


def sqlite_select_in_sql(table: str, columns: Sequence[str], key: str, n: int) -> str:
    """SQLite's ``SELECT columns FROM table WHERE key IN (?, …)`` with ``n`` parameters."""
    return (f"SELECT {', '.join(columns)} FROM {table} WHERE {key} IN "
            f"({', '.join('?' * n)})")


def _pg_copy_upsert(conn: Connection, table: str, columns: Sequence[str], keys: Sequence[str],
                    rows: list[tuple[Any, ...]]) -> None:
    """PostgreSQL: ``COPY`` the rows into a temporary table shaped like ``table``, then one
    ``INSERT … SELECT … ON CONFLICT (keys) DO UPDATE``: a batch in three statements instead of
    one parameter set per row (100k games: 3.2× → see docs/performance.md of SQLite's time)."""
    cols = ", ".join(columns)
    tmp = f"tracker_upsert_{table}"
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in keys)
    dbapi = conn.connection.dbapi_connection
    assert dbapi is not None  # an open connection has one
    cursor: Any = dbapi.cursor()  # psycopg's cursor: copy() is beyond the DB-API protocol
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


#: The PostgreSQL advisory lock key that serialises game writes (any fixed 64-bit number).
_WRITE_LOCK_KEY: Final = 0x7472_6163_6B65_72  # "tracker"


#: PostgreSQL's words for a role that may not use the schema tracker's tables are in, or may
#: not read them, and the grant each needs.
_PRIVILEGE_HINTS: Final = (
    (("no schema has been selected to create in", "permission denied for schema"),
     "the role may not use the database's schema (GRANT USAGE ON SCHEMA public TO the role; "
     "the owner runs tracker once to create the tables)"),
    (("permission denied for table",),
     "the role may not read tracker's tables (GRANT SELECT ON ALL TABLES IN SCHEMA public TO "
     "the role; INSERT, UPDATE and DELETE too for a role that imports)"),
)


def _privilege_hint(reason: str) -> str:
    """``reason`` (a driver's first line) with the grant it lacks, where PostgreSQL refused
    the role, without the driver's ``(psycopg.errors.X)`` prefix; else as it is."""
    for words, hint in _PRIVILEGE_HINTS:
        if any(w in reason for w in words):
            return f"{re.sub(r'^[(][A-Za-z_.]+[)] ', '', reason)}: {hint}"
    return reason


class Database:
    """An open tracker database, migrated to the newest schema on open.

    ``url`` is a SQLAlchemy URL or a file path; ``None`` means ``$TRACKER_DB`` or the default
    file in the user data folder (see :func:`tracker.core.config.database_url`).
    Raises DatabaseError (one-line message) when the database cannot be opened or migrated.
    """

    def __init__(self, url: str | None = None, *, engine: Engine | None = None,
                 read_only: bool = False) -> None:
        self.url = database_url(url) if engine is None else str(engine.url)
        #: Opened read-only: the database refuses every write, and none is attempted (no
        #: migration, no saved pass); the API refuses its writes with ReadOnlyError.
        self.read_only = read_only
        #: Why writes are refused, the end of the one-line ReadOnlyError (``None``: writable).
        self.read_only_reason: str | None = SERVED_READ_ONLY if read_only else None
        if engine is None:
            problem = url_problem(self.url)
            if problem is not None:
                raise DatabaseError(f"cannot open database {self.display_url}: {problem}")
            _check_backend(self.url)
            _check_sqlite_file(self.url, read_only=read_only)
        try:
            self.engine = engine or create_db_engine(self.url, read_only=read_only)
            if read_only:
                _check_schema(self.engine, self.display_url)
            else:
                migrate(self.engine)
                if engine is None and self.engine.dialect.name == "postgresql":
                    self._read_only_if_refused()
        except DatabaseError:
            raise
        except Exception as exc:  # driver errors: unreadable file, not a database, no server
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DatabaseError(f"cannot open database {self.display_url}: "
                                f"{_privilege_hint(reason)}") from exc
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def _read_only_if_refused(self) -> None:
        """A PostgreSQL role that may not write (a club's read-only role, a standby server)
        opens the database read-only, as ``read_only=True`` does: every write is then refused
        with one line naming the role, before anything (an engine, an import) starts, instead
        of the server's "permission denied" traceback half-way."""
        reason = pg_write_refusal(self.engine)
        if reason is None:
            return
        self.engine.dispose()
        self.engine = create_db_engine(self.url, read_only=True, reason=reason)
        self.read_only, self.read_only_reason = True, reason

    @property
    def display_url(self) -> str:
        """The URL with any password hidden (see :func:`tracker.core.config.shown_url`)."""
        return shown_url(self.url)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @property
    def in_memory(self) -> bool:
        """A SQLite database in this process's memory (``sqlite://``, ``:memory:``, a
        ``mode=memory`` URI): no other process can open it."""
        database = self.engine.url.database
        return self.is_sqlite and (not database or database == ":memory:"
                                   or "mode=memory" in self.url)

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session that commits on success and rolls back on error."""
        with self._sessions() as session, session.begin():
            yield session

    def insert(self, table: Table) -> Any:
        """The dialect's ``INSERT`` that supports ``ON CONFLICT`` (the one dialect switch)."""
        # The dialect modules load here, not at import: the PostgreSQL one alone costs ~80 ms
        # of every command's start-up, on a SQLite database too.
        if self.dialect == "postgresql":
            from sqlalchemy.dialects import postgresql

            return postgresql.insert(table)
        if self.dialect == "sqlite":
            from sqlalchemy.dialects import sqlite

            return sqlite.insert(table)
        raise DatabaseError(f"unsupported database backend {self.dialect!r}")

    def lock_writes(self, conn: Connection) -> None:
        """Take the database's write lock at the start of ``conn``'s transaction, held to its
        end: a read made in it (the stored copies a batch is compared with) stays true until
        the batch is written. SQLite: ``BEGIN IMMEDIATE`` (the driver begins lazily, so this
        is the transaction's first statement); PostgreSQL: a transaction-level advisory lock
        on game writes (readers are not blocked)."""
        if self.is_sqlite:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        elif self.dialect == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_WRITE_LOCK_KEY})")

    def upsert_rows(self, conn: Connection, table: Table, columns: Sequence[str],
                    rows: list[tuple[Any, ...]], sqlite_sql: str) -> None:
        """Upsert value tuples (in ``columns`` order) on the table's primary key.

        SQLite gets ``sqlite_sql`` (from :func:`sqlite_upsert_sql`) as a plain ``executemany``;
        PostgreSQL a ``COPY`` and one upsert (:func:`_pg_copy_upsert`); other backends the
        dialect's upsert.
        """
        if self.is_sqlite:
            conn.exec_driver_sql(sqlite_sql, rows)
            return
        keys = [c.name for c in table.primary_key.columns]
        if self.dialect == "postgresql":
            _pg_copy_upsert(conn, table.name, columns, keys, rows)
            return
        stmt = self.insert(table)
        stmt = stmt.on_conflict_do_update(
            index_elements=keys,
            set_={c: stmt.excluded[c] for c in columns if c not in keys},
        )
        conn.execute(stmt, [dict(zip(columns, row, strict=True)) for row in rows])

    def plain_chunks(self, stmt: Select[Any], size: int = 10_000
                     ) -> Iterator[list[tuple[Any, ...]]]:
        """Run a Core ``SELECT`` and yield the driver's own tuples, ``size`` rows at a time, so
        a read of a million rows never holds them all (the connection stays open until the last
        chunk is taken).

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
            dbapi = conn.connection.dbapi_connection
            assert dbapi is not None  # an open connection has one
            cursor = dbapi.cursor()
            try:
                cursor.execute(str(compiled), args)
                while chunk := cursor.fetchmany(size):
                    yield list(chunk)
            finally:
                cursor.close()
