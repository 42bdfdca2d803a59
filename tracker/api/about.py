"""What the CLI and the dashboard say about the install and the database: the version,
the database's name and place, and a cheap fingerprint of its content; and the one
process-wide switch a view may set (:func:`allow_collector_pauses`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tracker.api._db import database_url, open_store, sqlite_file

if TYPE_CHECKING:
    from tracker.api._db import Db


def version() -> str:
    """``tracker --version``: the installed tracker's version (``"0.1.0"``)."""
    from tracker._version import __version__

    return __version__


def database_label(db: Db = None) -> str:
    """The database ``db`` designates (``$TRACKER_DB``, the default file), password hidden:
    what the CLI and the dashboard show."""
    from tracker.core import config

    return config.shown_url(database_url(db))


def database_place(db: Db = None) -> str:
    """Where the database is, for a sentence: a SQLite file's path (``~`` for the home
    folder), else :func:`database_label` (password hidden)."""
    found = sqlite_file(db)
    if found is None:
        return database_label(db)
    path = found[0]
    try:
        return f"~/{path.relative_to(Path.home())}"
    except ValueError:
        return str(path)


def data_version(db: Db = None) -> tuple[int, int, int]:
    """A cheap fingerprint of the database's content: (games, newest import run's end in ms,
    the write counter the saved replay passes are keyed on). It changes with every batch of
    games written, a killed import's too (the dashboard keys its caches on it)."""
    from tracker.store import queries

    return queries.data_version(open_store(db))


def allow_collector_pauses() -> None:
    """Let this process's hot paths (an import's run, a saved pass's read and replays) pause
    Python's cyclic garbage collector while they build large lists, and enable it again after
    (:mod:`tracker.core.collector`). The ``tracker`` command's entry calls it; a long-lived
    process (the dashboard's server, a program using this API) leaves the collector alone."""
    from tracker.core import collector

    collector.allow_pauses()
