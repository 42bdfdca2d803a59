"""The database handle the API opens: what ``db=`` designates (a SQLAlchemy URL, a file
path, an open :class:`~tracker.store.db.Store`, ``None`` for ``$TRACKER_DB`` / the default
file), checked before it is opened, and whether it may be written. Every module of
:mod:`tracker.api` opens its database here, nowhere else."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tracker.core.errors import ReadOnlyError

if TYPE_CHECKING:
    from typing import TypeAlias

    from tracker.store.db import Store

    Db: TypeAlias = str | os.PathLike[str] | Store | None


def sqlite_file(db: Db) -> tuple[Path, bool] | None:
    """The SQLite file ``db`` designates and whether it was named (``db`` or ``$TRACKER_DB``,
    not the default location); ``None`` for an open store, another backend or memory."""
    from tracker.core import config

    if db is not None and not isinstance(db, str | os.PathLike):
        return None  # an open Store
    named = db is not None or config.db_from_env() is not None
    url = config.database_url(os.fspath(db) if db is not None else None)
    if not url.startswith("sqlite:///") or url == "sqlite:///:memory:":
        return None
    path = url.removeprefix("sqlite:///").split("?", 1)[0]
    return (Path(path), named) if path else None


def open_store(db: Db = None, *, create: bool = False, read_only: bool | None = None
               ) -> Store:
    """A :class:`Store` for ``db`` (returned as is when it already is one).

    ``create=False`` (the commands that only read: ``players``, ``replay``, ``settings``): a
    SQLite file that does not exist is refused, not created empty. ``create=True`` (imports,
    the dashboard): the file is created, and the default location's folder; the missing
    folder of a named path (``--db``, ``$TRACKER_DB``) is refused. ``read_only`` (``None``:
    :func:`read_only_mode`, i.e. ``$TRACKER_READ_ONLY``): the database refuses every write
    and is neither created nor migrated. Raises DatabaseError (one line).
    """
    from tracker.store.db import Store

    if isinstance(db, Store):
        return db
    if read_only is None:
        read_only = read_only_mode()
    check_database(db, create=create and not read_only)
    return Store(os.fspath(db) if db is not None else None, read_only=read_only)


def read_only_mode(db: Db = None) -> bool:
    """Whether ``db`` is read-only: an open store opened so, else ``$TRACKER_READ_ONLY``
    (what ``tracker dashboard --read-only`` sets for the app it serves)."""
    from tracker.core import config
    from tracker.store.db import Store

    if isinstance(db, Store):
        return db.read_only
    return config.read_only()


#: Why the API refuses a write on a read-only database (part of the one-line error).
READ_ONLY_HINT: Final = ("the database is served read-only (tracker dashboard --read-only, "
                         "or $TRACKER_READ_ONLY)")


#: Why the ``tracker`` command refuses a write when ``$TRACKER_READ_ONLY`` is set in the
#: user's own environment: the variable to unset (not "run it with the tracker command").
READ_ONLY_ENV_HINT: Final = ("$TRACKER_READ_ONLY is set, which makes every database "
                             "read-only: unset it (unset TRACKER_READ_ONLY) and run the "
                             "command again")


def check_writable(db: Db, action: str) -> None:
    """Raise ReadOnlyError (one line, exit code 1) before ``action`` (``"importing games"``)
    when ``db`` is read-only (see :func:`read_only_mode`): nothing is opened or written. An
    open store that the database itself refuses to let write (a PostgreSQL role granted only
    SELECT) says so, naming the role."""
    if not read_only_mode(db):
        return
    from tracker.store.db import Store
    from tracker.store.engine import SERVED_READ_ONLY

    if isinstance(db, Store) and db.read_only_reason not in (None, SERVED_READ_ONLY):
        raise ReadOnlyError(f"{action} is not allowed: {db.read_only_reason}")
    raise ReadOnlyError(f"{action} is not allowed: {READ_ONLY_HINT}; run it with the "
                        "tracker command where the database is kept")


def check_database(db: Db = None, *, create: bool = False) -> None:
    """What :func:`open_store` checks before opening ``db``; raises DatabaseError (one line)."""
    found = sqlite_file(db)
    if found is None:
        return
    path, named = found
    if path.exists():
        return
    from tracker.store.db import DatabaseError

    if not create:
        # After `make demo` its database is in the current folder: name the option to open it.
        demo = Path("demo.db")
        hint = (" (a demo.db is here: --db demo.db)"
                if demo.is_file() and demo.resolve() != path.resolve() else "")
        raise DatabaseError(f"no database at {path}: import games first (tracker import "
                            f"USERNAME, or tracker import-file FILE){hint}")
    if named and not path.parent.is_dir():
        raise DatabaseError(f"the folder {path.parent} does not exist: create it, or give "
                            "the database another place with --db")


def database_url(db: Db = None) -> str:
    """The SQLAlchemy URL ``db`` designates (``None``: ``$TRACKER_DB``, else ``tracker.db`` in
    the user data folder), without opening it."""
    if db is not None and not isinstance(db, str | os.PathLike):
        return db.url
    from tracker.core import config

    return config.database_url(db)
