"""The public Python API: one function per ``tracker`` command, used by the CLI and the dashboard.

Every function takes ``db=``: a SQLAlchemy URL, a file path, an open
:class:`~tracker.store.db.Store`, or ``None`` for ``$TRACKER_DB`` / the default database.

This package is the one boundary the views (the CLI and the dashboard) import: the types and
presentation helpers they need are re-exported here (:data:`__all__`). One module per concern
(:mod:`~tracker.api.importing`, :mod:`~tracker.api.replays`, :mod:`~tracker.api.fide`,
:mod:`~tracker.api.calculator`, :mod:`~tracker.api.player_settings`,
:mod:`~tracker.api.groups`, :mod:`~tracker.api.group_tables`, :mod:`~tracker.api.analysis`,
:mod:`~tracker.api.about`, :mod:`~tracker.api.launcher`); :mod:`tracker.api._db` alone opens
the database. No module is named after a public function (a submodule import would replace
the function on the package). The layers below (SQLAlchemy, Alembic, berserk, the replay) are
imported where a function first needs them, and their types re-exported here on first use
(PEP 562), so ``tracker --help`` and ``tracker calc`` start at once.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

from tracker.api._db import (
    READ_ONLY_ENV_HINT,
    READ_ONLY_HINT,
    check_database,
    check_writable,
    database_url,
    open_store,
    read_only_mode,
)
from tracker.api.about import (
    allow_collector_pauses,
    data_version,
    database_label,
    database_place,
    version,
)
from tracker.api.analysis import (
    analyse,
    analysed_perfs,
    check_analyse_args,
    default_jobs,
    default_nodes,
    strength,
    strength_game,
    strength_game_json,
    strength_json,
)
from tracker.api.calculator import (
    MAX_CALC_RATING,
    MIN_CALC_RATING,
    CalcGameJson,
    CalcJson,
    calc,
    calc_json,
    conversion_note,
    convert,
    default_k,
    scale_models,
)
from tracker.api.fide import fide_json, fide_link, fide_ratings, fide_show
from tracker.api.group_tables import (
    GROUP_KEYS,
    SORT_KEYS,
    GroupTable,
    group_table,
    group_table_csv,
    group_table_json,
    row_json,
    sort_rows,
)
from tracker.api.groups import (
    GroupAddResult,
    GroupRemoveResult,
    SyncResult,
    calibration_json,
    club_scales,
    group_add,
    group_calibrate,
    group_create,
    group_list,
    group_members,
    group_refresh,
    group_remove,
    parse_fide_pairs,
    sync,
    sync_row,
)
from tracker.api.importing import (
    DEMO_ANALYSED_FILE,
    DEMO_FILE,
    DEMO_USER,
    MAX_RUNS_LIMIT,
    check_token,
    demo,
    demo_file,
    import_file,
    import_uploads,
    import_user,
    resolve_token,
    run_dict,
    runs,
    summary_dict,
    upload_name,
)
from tracker.api.player_settings import settings
from tracker.api.replays import (
    drop_passes,
    game_moves,
    main_perf,
    player_dict,
    players,
    replay,
    saved_passes,
    unrated_text,
)
from tracker.core.errors import (
    ArgumentError,
    DashboardError,
    InterruptedRun,
    NoAnalysisError,
    PortError,
    ReadOnlyError,
    Terminated,
    TrackerError,
)

if TYPE_CHECKING:
    from tracker.api._db import Db as Db
    from tracker.api.launcher import dashboard as dashboard
    from tracker.core.config import ENV_READ_ONLY as ENV_READ_ONLY
    from tracker.core.exact import dumps as dumps
    from tracker.core.exact import figure as figure
    from tracker.core.exact import plural as plural
    from tracker.core.exact import shown as shown
    from tracker.core.perfs import PerfError as PerfError
    from tracker.core.perfs import perf_key as perf_key
    from tracker.core.records import PERFS as PERFS
    from tracker.core.records import SPEEDS as SPEEDS
    from tracker.fide import CHAPTERS as CHAPTERS
    from tracker.fide import DEFAULT_CHAPTER as DEFAULT_CHAPTER
    from tracker.fide import DEFAULT_EXPECTED as DEFAULT_EXPECTED
    from tracker.fide import DEFAULT_RULES as DEFAULT_RULES
    from tracker.fide import EXPECTED_METHODS as EXPECTED_METHODS
    from tracker.fide import RULES as RULES
    from tracker.fide.rules import CAP_EXEMPT_FROM as CAP_EXEMPT_FROM
    from tracker.fide.rules import MAX_K_TIMES_GAMES as MAX_K_TIMES_GAMES
    from tracker.fide.scale import Conversion as Conversion
    from tracker.fide.scale import ScaleModel as ScaleModel
    from tracker.importing import ImportSummary as ImportSummary
    from tracker.importing import Progress as Progress
    from tracker.importing.analyse import AnalyseSummary as AnalyseSummary
    from tracker.importing.group_sync import PlayerSync as PlayerSync
    from tracker.importing.real_fide import FideRefresh as FideRefresh
    from tracker.importing.real_fide import NotLinkedError as NotLinkedError
    from tracker.report.calibration import Calibration as Calibration
    from tracker.report.calibration import ClubFit as ClubFit
    from tracker.report.calibration import ClubModelError as ClubModelError
    from tracker.report.calibration import ModelGap as ModelGap
    from tracker.report.game_view import GameMoves as GameMoves
    from tracker.report.group import NOT_ANALYSED as NOT_ANALYSED
    from tracker.report.group import GroupRow as GroupRow
    from tracker.report.lichess_line import LichessPoint as LichessPoint
    from tracker.report.presentation import GAME_CSV_KEYS as GAME_CSV_KEYS
    from tracker.report.presentation import GAME_KEYS as GAME_KEYS
    from tracker.report.presentation import HALF_NOTE as HALF_NOTE
    from tracker.report.presentation import PERIOD_KEYS as PERIOD_KEYS
    from tracker.report.presentation import SCALE_CSV_KEYS as SCALE_CSV_KEYS
    from tracker.report.presentation import answer_text as answer_text
    from tracker.report.presentation import band_json as band_json
    from tracker.report.presentation import conversion_json as conversion_json
    from tracker.report.presentation import conversion_text as conversion_text
    from tracker.report.presentation import csv_cell as csv_cell
    from tracker.report.presentation import excluded_text as excluded_text
    from tracker.report.presentation import floor_note as floor_note
    from tracker.report.presentation import game_row as game_row
    from tracker.report.presentation import games_csv as games_csv
    from tracker.report.presentation import games_json as games_json
    from tracker.report.presentation import gap_text as gap_text
    from tracker.report.presentation import has_half as has_half
    from tracker.report.presentation import k_text as k_text
    from tracker.report.presentation import period_json as period_json
    from tracker.report.presentation import periods_csv as periods_csv
    from tracker.report.presentation import rating_text as rating_text
    from tracker.report.presentation import real_now as real_now
    from tracker.report.presentation import start_text as start_text
    from tracker.report.presentation import whole_rating as whole_rating
    from tracker.report.replay import GameDetail as GameDetail
    from tracker.report.replay import NoGamesError as NoGamesError
    from tracker.report.replay import PeriodRow as PeriodRow
    from tracker.report.replay import RealLine as RealLine
    from tracker.report.replay import ReplayReport as ReplayReport
    from tracker.report.replay import ScaleError as ScaleError
    from tracker.report.replay import saved_scale_note as saved_scale_note
    from tracker.report.settings import MAX_START_RATING as MAX_START_RATING
    from tracker.report.settings import MIN_START_RATING as MIN_START_RATING
    from tracker.report.settings import SCALES as SCALES
    from tracker.report.settings import START_SCALES as START_SCALES
    from tracker.report.settings import PlayerSettings as PlayerSettings
    from tracker.report.settings import SettingsError as SettingsError
    from tracker.report.settings import default_scale as default_scale
    from tracker.report.strength import RECENT_GAMES as RECENT_GAMES
    from tracker.report.strength import GameStrength as GameStrength
    from tracker.report.strength import PlayerStrength as PlayerStrength
    from tracker.report.strength import SetLevel as SetLevel
    from tracker.report.strength import SideStrength as SideStrength
    from tracker.report.strength import with_judgments as with_judgments
    from tracker.sources.engine import EngineMissingError as EngineMissingError
    from tracker.sources.fide import LIST_KINDS as FIDE_LIST_KINDS
    from tracker.sources.fide import FideError as FideError
    from tracker.sources.fide import UnknownFideIdError as UnknownFideIdError
    from tracker.store.db import DatabaseError as DatabaseError
    from tracker.store.db import Store as Store
    from tracker.store.fide import FideLink as FideLink
    from tracker.store.fide import RatingInForce as RatingInForce
    from tracker.store.groups import GroupExistsError as GroupExistsError
    from tracker.store.groups import GroupInfo as GroupInfo
    from tracker.store.groups import UnknownGroupError as UnknownGroupError
    from tracker.store.queries import PlayerSummary as PlayerSummary
    from tracker.store.queries import RunInfo as RunInfo
    from tracker.store.snapshots import SavedPassInfo as SavedPassInfo

#: Names this package re-exports from the layers below, imported on first use (PEP 562):
#: name → ``"module"`` (the same name there) or ``"module:attribute"``.
_LAZY: Final[dict[str, str]] = {
    **dict.fromkeys(("CHAPTERS", "DEFAULT_CHAPTER", "DEFAULT_EXPECTED", "DEFAULT_RULES",
                     "EXPECTED_METHODS", "RULES"), "tracker.fide"),
    **dict.fromkeys(("Conversion", "ScaleModel"), "tracker.fide.scale"),
    **dict.fromkeys(("CAP_EXEMPT_FROM", "MAX_K_TIMES_GAMES"), "tracker.fide.rules"),
    **dict.fromkeys(("ImportSummary", "Progress"), "tracker.importing"),
    "LichessPoint": "tracker.report.lichess_line",
    "GameMoves": "tracker.report.game_view",
    **dict.fromkeys(("PerfError", "perf_key"), "tracker.core.perfs"),
    **dict.fromkeys(("GAME_KEYS", "PERIOD_KEYS", "SCALE_CSV_KEYS", "band_json",
                     "conversion_json", "excluded_text", "game_row", "period_json",
                     "periods_csv", "answer_text", "conversion_text", "csv_cell", "gap_text",
                     "k_text", "rating_text", "real_now", "start_text", "HALF_NOTE",
                     "has_half", "floor_note", "GAME_CSV_KEYS", "games_csv", "games_json",
                     "whole_rating"), "tracker.report.presentation"),
    **dict.fromkeys(("dumps", "figure", "shown", "plural"), "tracker.core.exact"),
    **dict.fromkeys(("PERFS", "SPEEDS"), "tracker.core.records"),
    **dict.fromkeys(("GameDetail", "NoGamesError", "PeriodRow", "RealLine", "ReplayReport",
                     "ScaleError", "saved_scale_note"), "tracker.report.replay"),
    **dict.fromkeys(("MAX_START_RATING", "MIN_START_RATING", "PlayerSettings", "SCALES",
                     "START_SCALES", "SettingsError", "default_scale"), "tracker.report.settings"),
    **dict.fromkeys(("FideRefresh", "NotLinkedError"), "tracker.importing.real_fide"),
    **dict.fromkeys(("FideError", "UnknownFideIdError"), "tracker.sources.fide"),
    "FIDE_LIST_KINDS": "tracker.sources.fide:LIST_KINDS",  # FIDE's lists: standard, rapid, blitz
    **dict.fromkeys(("FideLink", "RatingInForce"), "tracker.store.fide"),
    **dict.fromkeys(("DatabaseError", "Store"), "tracker.store.db"),
    # The driver's own error for a locked or unreachable database, raised mid-query.
    "DatabaseOperationalError": "tracker.store.engine:OperationalError",
    **dict.fromkeys(("PlayerSummary", "RunInfo"), "tracker.store.queries"),
    # Groups (tracker group …, tracker sync): their own module, tracker/api/groups.py.
    **dict.fromkeys(("Calibration", "ClubFit", "ClubModelError", "ModelGap"),
                    "tracker.report.calibration"),
    "PlayerSync": "tracker.importing.group_sync",
    **dict.fromkeys(("GroupExistsError", "GroupInfo", "UnknownGroupError"),
                    "tracker.store.groups"),
    "SavedPassInfo": "tracker.store.snapshots",
    **dict.fromkeys(("GroupRow", "NOT_ANALYSED"), "tracker.report.group"),
    "AnalyseSummary": "tracker.importing.analyse",
    **dict.fromkeys(("RECENT_GAMES", "GameStrength", "PlayerStrength", "SetLevel",
                     "SideStrength", "with_judgments"), "tracker.report.strength"),
    "EngineMissingError": "tracker.sources.engine",
    # tracker dashboard's twin: it loads subprocess, socket and ipaddress, so on first use.
    "dashboard": "tracker.api.launcher",
    "ENV_READ_ONLY": "tracker.core.config",  # the variable that makes every database read-only
}

__all__ = [
    "CAP_EXEMPT_FROM",
    "CHAPTERS",
    "DEFAULT_CHAPTER",
    "DEFAULT_EXPECTED",
    "DEFAULT_RULES",
    "DEMO_ANALYSED_FILE",
    "DEMO_FILE",
    "DEMO_USER",
    "ENV_READ_ONLY",
    "EXPECTED_METHODS",
    "FIDE_LIST_KINDS",
    "GAME_CSV_KEYS",
    "GAME_KEYS",
    "GROUP_KEYS",
    "HALF_NOTE",
    "MAX_CALC_RATING",
    "MAX_K_TIMES_GAMES",
    "MAX_RUNS_LIMIT",
    "MAX_START_RATING",
    "MIN_CALC_RATING",
    "MIN_START_RATING",
    "NOT_ANALYSED",
    "PERFS",
    "PERIOD_KEYS",
    "READ_ONLY_ENV_HINT",
    "READ_ONLY_HINT",
    "RECENT_GAMES",
    "RULES",
    "SCALES",
    "SCALE_CSV_KEYS",
    "SORT_KEYS",
    "SPEEDS",
    "START_SCALES",
    "AnalyseSummary",
    "ArgumentError",
    "CalcGameJson",
    "CalcJson",
    "Calibration",
    "ClubFit",
    "ClubModelError",
    "Conversion",
    "DashboardError",
    "DatabaseError",
    "DatabaseOperationalError",
    "EngineMissingError",
    "FideError",
    "FideLink",
    "FideRefresh",
    "GameDetail",
    "GameMoves",
    "GameStrength",
    "GroupAddResult",
    "GroupExistsError",
    "GroupInfo",
    "GroupRemoveResult",
    "GroupRow",
    "GroupTable",
    "ImportSummary",
    "InterruptedRun",
    "LichessPoint",
    "ModelGap",
    "NoAnalysisError",
    "NoGamesError",
    "NotLinkedError",
    "PerfError",
    "PeriodRow",
    "PlayerSettings",
    "PlayerStrength",
    "PlayerSummary",
    "PlayerSync",
    "PortError",
    "Progress",
    "RatingInForce",
    "ReadOnlyError",
    "RealLine",
    "ReplayReport",
    "RunInfo",
    "SavedPassInfo",
    "ScaleError",
    "ScaleModel",
    "SetLevel",
    "SettingsError",
    "SideStrength",
    "Store",
    "SyncResult",
    "Terminated",
    "TrackerError",
    "UnknownFideIdError",
    "UnknownGroupError",
    "allow_collector_pauses",
    "analyse",
    "analysed_perfs",
    "answer_text",
    "band_json",
    "calc",
    "calc_json",
    "calibration_json",
    "check_analyse_args",
    "check_database",
    "check_token",
    "check_writable",
    "club_scales",
    "conversion_json",
    "conversion_note",
    "conversion_text",
    "convert",
    "csv_cell",
    "dashboard",
    "data_version",
    "database_label",
    "database_place",
    "database_url",
    "default_jobs",
    "default_k",
    "default_nodes",
    "default_scale",
    "demo",
    "demo_file",
    "drop_passes",
    "dumps",
    "excluded_text",
    "fide_json",
    "fide_link",
    "fide_ratings",
    "fide_show",
    "figure",
    "floor_note",
    "game_moves",
    "game_row",
    "games_csv",
    "games_json",
    "gap_text",
    "group_add",
    "group_calibrate",
    "group_create",
    "group_list",
    "group_members",
    "group_refresh",
    "group_remove",
    "group_table",
    "group_table_csv",
    "group_table_json",
    "has_half",
    "import_file",
    "import_uploads",
    "import_user",
    "k_text",
    "main_perf",
    "open_store",
    "parse_fide_pairs",
    "perf_key",
    "period_json",
    "periods_csv",
    "player_dict",
    "players",
    "plural",
    "rating_text",
    "read_only_mode",
    "real_now",
    "replay",
    "resolve_token",
    "row_json",
    "run_dict",
    "runs",
    "saved_passes",
    "saved_scale_note",
    "scale_models",
    "settings",
    "shown",
    "sort_rows",
    "start_text",
    "strength",
    "strength_game",
    "strength_game_json",
    "strength_json",
    "summary_dict",
    "sync",
    "sync_row",
    "unrated_text",
    "upload_name",
    "version",
    "whole_rating",
    "with_judgments",
]


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attr = where.partition(":")
    value = getattr(importlib.import_module(module), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
