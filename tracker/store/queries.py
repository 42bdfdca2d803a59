"""The read side of the store in one namespace: players, games, import runs, rating history.

Every function takes a :class:`~tracker.store.db.Store` and returns plain values (dataclasses,
records), never ORM objects, so the API and the views can use them without a session. Each is
defined in the module of its concern (:mod:`~tracker.store.players`,
:mod:`~tracker.store.games`, :mod:`~tracker.store.runs`, :mod:`~tracker.store.sync`).
"""

from __future__ import annotations

from tracker.store.games import (
    REPLAY_COLUMNS,
    count_games,
    game_source,
    player_games,
    replay_rows,
    replay_rows_by_perf,
)
from tracker.store.players import (
    PerfSummary,
    PlayerSummary,
    UnknownPlayerError,
    is_tracked,
    list_players,
    player_perfs,
    resolve_player,
)
from tracker.store.runs import RunInfo, data_version, import_runs
from tracker.store.sync import rating_history

__all__ = [
    "REPLAY_COLUMNS",
    "PerfSummary",
    "PlayerSummary",
    "RunInfo",
    "UnknownPlayerError",
    "count_games",
    "data_version",
    "game_source",
    "import_runs",
    "is_tracked",
    "list_players",
    "player_games",
    "player_perfs",
    "rating_history",
    "replay_rows",
    "replay_rows_by_perf",
    "resolve_player",
]
