"""Where the replay's names used to live; they moved (this module only re-exports them).

- :mod:`tracker.report`: :class:`ReplayReport`, :func:`build_report`, :class:`PeriodRow`, …;
- :mod:`tracker.presentation`: JSON, CSV, game rows, :func:`dumps`;
- :mod:`tracker.settings`: :class:`PlayerSettings` and its ranges;
- :mod:`tracker.perfs`: :func:`perf_key`, :class:`PerfError`.

New code imports from those modules (views from :mod:`tracker.api`).
"""

from tracker.perfs import PerfError, perf_key
from tracker.presentation import (
    GAME_KEYS,
    LICHESS_GAME_URL,
    PERIOD_KEYS,
    dumps,
    excluded_text,
    game_row,
    game_url,
    period_json,
    periods_csv,
    points,
    shown,
)
from tracker.report import GameDetail, NoGamesError, PeriodRow, ReplayReport, build_report
from tracker.settings import (
    MAX_START_RATING,
    MIN_START_RATING,
    PlayerSettings,
    ResolvedSettings,
    SettingsError,
    get_settings,
    save_settings,
    validate_settings,
)

__all__ = [
    "GAME_KEYS",
    "LICHESS_GAME_URL",
    "MAX_START_RATING",
    "MIN_START_RATING",
    "PERIOD_KEYS",
    "GameDetail",
    "NoGamesError",
    "PerfError",
    "PeriodRow",
    "PlayerSettings",
    "ReplayReport",
    "ResolvedSettings",
    "SettingsError",
    "build_report",
    "dumps",
    "excluded_text",
    "game_row",
    "game_url",
    "get_settings",
    "perf_key",
    "period_json",
    "periods_csv",
    "points",
    "save_settings",
    "shown",
    "validate_settings",
]
