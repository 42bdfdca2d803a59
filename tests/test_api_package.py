"""The public Python API as a package (tracker/api/): every name it had as one module still
answers from ``tracker.api``, listed once in ``__all__``, and no module of the package hides
one of them."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import tracker
import tracker.api

#: The public names of tracker/api.py before it became a package (its functions, constants and
#: re-exports): the dashboard and other code call ``tracker.api.X`` / ``from tracker.api import X``.
NAMES_BEFORE = frozenset({
    "AnalyseSummary", "ArgumentError", "CAP_EXEMPT_FROM", "CHAPTERS", "CalcGameJson", "CalcJson",
    "Calibration", "ClubFit", "ClubModelError", "Conversion", "DEFAULT_CHAPTER",
    "DEFAULT_EXPECTED", "DEFAULT_RULES", "DEMO_FILE", "DEMO_USER", "DashboardError",
    "DatabaseError", "DatabaseOperationalError", "ENV_READ_ONLY", "EXPECTED_METHODS",
    "EngineMissingError", "FIDE_LIST_KINDS", "FideError", "FideLink", "FideRefresh", "GAME_KEYS",
    "GROUP_KEYS", "GameDetail", "GameMoves", "GameStrength", "GroupAddResult", "GroupExistsError",
    "GroupInfo", "GroupRemoveResult", "GroupRow", "GroupTable", "ImportSummary", "LichessPoint",
    "MAX_CALC_RATING", "MAX_K_TIMES_GAMES", "MAX_RUNS_LIMIT", "MAX_START_RATING",
    "MIN_CALC_RATING", "MIN_START_RATING", "ModelGap", "NOT_ANALYSED", "NoAnalysisError",
    "NoGamesError", "NotLinkedError", "PERIOD_KEYS", "PerfError", "PeriodRow", "PlayerSettings",
    "PlayerStrength", "PlayerSummary", "PlayerSync", "Progress", "READ_ONLY_HINT", "RECENT_GAMES",
    "RULES", "RatingInForce", "ReadOnlyError", "RealLine", "ReplayReport", "RunInfo", "SCALES",
    "SCALE_CSV_KEYS", "SORT_KEYS", "SPEEDS", "START_SCALES", "SavedPassInfo", "ScaleError",
    "ScaleModel", "SetLevel", "SettingsError", "SideStrength", "Store", "SyncResult",
    "TrackerError", "UnknownFideIdError", "UnknownGroupError", "analyse", "analysed_perfs",
    "answer_text", "band_json", "calc", "calc_json", "calibration_json", "check_analyse_args",
    "check_database", "check_token", "check_writable", "club_scales", "conversion_json",
    "conversion_note", "conversion_text", "convert", "dashboard", "data_version", "database_label",
    "database_place", "database_url", "default_k", "default_nodes", "default_scale", "demo",
    "demo_file", "drop_passes", "dumps", "excluded_text", "fide_json", "fide_link", "fide_ratings",
    "fide_show", "game_moves", "game_row", "gap_text", "group_add", "group_calibrate",
    "group_create", "group_list", "group_members", "group_refresh", "group_remove", "group_table",
    "group_table_csv", "group_table_json", "import_file", "import_uploads", "import_user",
    "k_text", "open_store", "parse_fide_pairs", "period_json", "periods_csv", "player_dict",
    "players", "rating_text", "read_only_mode", "real_now", "replay", "resolve_token", "row_json",
    "run_dict", "runs", "saved_passes", "saved_scale_note", "scale_models", "settings", "shown",
    "sort_rows", "start_text", "strength", "strength_game", "strength_game_json", "strength_json",
    "summary_dict", "sync", "sync_row", "unrated_text", "upload_name", "version", "with_judgments",
})


def test_every_name_the_module_had_still_answers() -> None:
    missing = sorted(n for n in NAMES_BEFORE if not hasattr(tracker.api, n))
    assert missing == []
    assert set(tracker.api.__all__) >= NAMES_BEFORE


def test_all_lists_each_name_once_and_each_resolves() -> None:
    assert len(tracker.api.__all__) == len(set(tracker.api.__all__))
    for name in tracker.api.__all__:
        assert getattr(tracker.api, name) is not None, name
    assert set(tracker.__all__) - {"__version__"} <= set(tracker.api.__all__)


def test_no_module_of_the_package_is_named_after_a_public_name() -> None:
    # "import tracker.api.strength" would set tracker.api.strength to the module, hiding the
    # function of that name: the package's modules are named after concerns, not functions.
    modules = {m.name for m in pkgutil.iter_modules(tracker.api.__path__)}
    assert modules & set(tracker.api.__all__) == set()
    assert {"_db", "importing", "replays", "groups", "analysis", "launcher"} <= modules


def test_the_functions_are_functions_after_every_module_is_imported() -> None:
    code = ("import importlib, pkgutil, types, tracker.api as a\n"
            "for m in pkgutil.iter_modules(a.__path__):\n"
            "    importlib.import_module('tracker.api.' + m.name)\n"
            "print(sorted(n for n in a.__all__ if isinstance(getattr(a, n), types.ModuleType)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_importing_the_api_loads_no_database_library() -> None:
    code = "import sys, tracker.api; print(sorted(m for m in ('sqlalchemy', 'alembic', " \
           "'berserk', 'chess', 'subprocess') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_the_launcher_finds_the_dashboard_from_its_folder() -> None:
    from tracker.api.launcher import app_path

    assert app_path().is_file()
    assert app_path().parent.name == "dashboard"
