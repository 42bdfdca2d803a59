"""``tracker settings``: a player's saved replay settings, shown or changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracker.api._db import check_writable, open_store

if TYPE_CHECKING:
    from tracker.api._db import Db
    from tracker.report.settings import PlayerSettings


def settings(username: str, *, db: Db = None, **changes: object) -> PlayerSettings:
    """``tracker settings``: show (no changes) or save a player's replay settings.

    Keys: ``start_rating``, ``birth_year``, ``rules``, ``expected``, ``count_provisional``; a
    value of ``None`` resets that setting to the default. Raises SettingsError,
    UnknownPlayerError.
    """
    from tracker.report.settings import get_settings, save_settings
    from tracker.store import queries

    if changes:
        check_writable(db, "changing settings")
    store = open_store(db)
    if not changes:
        return get_settings(store, queries.resolve_player(store, username))
    return save_settings(store, username, **changes)
