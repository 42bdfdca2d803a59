"""The store: one object over an open tracker database (SQLite or PostgreSQL).

:class:`Store` is a :class:`~tracker.store.engine.Database` (engine, migrations on open,
sessions) with the write side an import uses as methods; each delegates to the module of its
concern: :mod:`~tracker.store.games`, :mod:`~tracker.store.runs`,
:mod:`~tracker.store.players`. The read side is plain functions in those modules (and
:mod:`~tracker.store.sync`), gathered in :mod:`tracker.store.queries`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from tracker.core.records import GameRecord
from tracker.store import games, players, runs
from tracker.store.engine import Database, DatabaseError, alembic_config
from tracker.store.games import PreparedGame, RunCounts, StoredGame, WriteCounts, WrittenGames

__all__ = ["DatabaseError", "Store", "alembic_config"]


class Store(Database):
    """A tracker database: open it with a URL or path, and it is migrated to the newest schema.

    >>> store = Store("sqlite://")          # in memory
    >>> store.write_games([])
    WriteCounts(new=0, updated=0, unchanged=0)

    ``url`` is a SQLAlchemy URL or a file path; ``None`` means ``$TRACKER_DB`` or the default
    file in the user data folder (see :func:`tracker.core.config.database_url`).
    Raises DatabaseError (one-line message) when the database cannot be opened or migrated.
    """

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    _run_counts: RunCounts | None = None

    @contextmanager
    def counting_run(self, run: RunCounts) -> Iterator[None]:
        """Inside it, each :meth:`write_games` also writes the run's counts, in the batch's
        transaction: ``run`` is ``(run id, fields once a batch's counts are added)``."""
        self._run_counts = run
        try:
            yield
        finally:
            self._run_counts = None

    def write_games(self, records: Iterable[GameRecord]) -> WriteCounts:
        """One batch of games in one transaction (with the run's counts inside
        :meth:`counting_run`): see :func:`tracker.store.games.write_games`."""
        return games.write_games(self, records, self._run_counts)

    def write_prepared(self, prepared: Iterable[PreparedGame],
                       written: WrittenGames | None = None) -> WriteCounts:
        """:meth:`write_games` of games already made by :func:`~tracker.store.games.prepare`:
        see :func:`tracker.store.games.write_prepared`."""
        return games.write_prepared(self, prepared, self._run_counts, written)

    def stored_digests(self, ids: Sequence[str]) -> dict[str, str]:
        """``{game id: raw digest}`` of the games among ``ids`` already stored."""
        return games.stored_digests(self, ids)

    def stored_games(self, ids: Sequence[str]) -> dict[str, StoredGame]:
        """The games among ``ids`` already stored: digest and both sides' user id and name."""
        return games.stored_games(self, ids)

    def ensure_player(self, user_id: str, username: str | None = None) -> None:
        """Track the player ``user_id``: see :func:`tracker.store.players.ensure_player`."""
        players.ensure_player(self, user_id, username)

    def start_run(self, source: str, target: str, player_id: str | None = None,
                  message: str | None = None) -> int:
        """Record an import run as ``running`` (with ``message``), in one transaction; returns
        its id."""
        return runs.start_run(self, source, target, player_id, message)

    def update_run(self, run_id: int, **fields: Any) -> None:
        """Set fields of an import run (counts, status, message, player_id, finished_at_ms)."""
        runs.update_run(self, run_id, **fields)
