"""The public Python API: one function per ``tracker`` command, used by the CLI and the dashboard.

Every function takes ``db=``: a SQLAlchemy URL, a file path, an open
:class:`~tracker.store.db.Store`, or ``None`` for ``$TRACKER_DB`` / the default database.

This module is the one boundary the views (the CLI and the dashboard) import: the types and
presentation helpers they need are re-exported here. The layers below (SQLAlchemy, Alembic,
berserk, the replay) are imported where a function first needs them, not when the API is
imported, so ``tracker --help`` and ``tracker calc`` start at once.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import date, datetime
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NotRequired, TypedDict

from tracker.errors import ArgumentError as ArgumentError
from tracker.errors import DashboardError as DashboardError
from tracker.errors import ReadOnlyError as ReadOnlyError
from tracker.errors import TrackerError as TrackerError

if TYPE_CHECKING:
    from tracker.api_group_table import GROUP_KEYS as GROUP_KEYS
    from tracker.api_group_table import SORT_KEYS as SORT_KEYS
    from tracker.api_group_table import GroupTable as GroupTable
    from tracker.api_group_table import group_refresh as group_refresh
    from tracker.api_group_table import group_table as group_table
    from tracker.api_group_table import group_table_csv as group_table_csv
    from tracker.api_group_table import group_table_json as group_table_json
    from tracker.api_group_table import row_json as row_json
    from tracker.api_group_table import sort_rows as sort_rows
    from tracker.api_groups import GroupAddResult as GroupAddResult
    from tracker.api_groups import GroupRemoveResult as GroupRemoveResult
    from tracker.api_groups import SyncResult as SyncResult
    from tracker.api_groups import calibration_json as calibration_json
    from tracker.api_groups import club_scales as club_scales
    from tracker.api_groups import group_add as group_add
    from tracker.api_groups import group_calibrate as group_calibrate
    from tracker.api_groups import group_create as group_create
    from tracker.api_groups import group_list as group_list
    from tracker.api_groups import group_members as group_members
    from tracker.api_groups import group_remove as group_remove
    from tracker.api_groups import parse_fide_pairs as parse_fide_pairs
    from tracker.api_groups import sync as sync
    from tracker.api_groups import sync_row as sync_row
    from tracker.api_strength import NoAnalysisError as NoAnalysisError
    from tracker.api_strength import analyse as analyse
    from tracker.api_strength import analysed_perfs as analysed_perfs
    from tracker.api_strength import check_analyse_args as check_analyse_args
    from tracker.api_strength import default_nodes as default_nodes
    from tracker.api_strength import strength as strength
    from tracker.api_strength import strength_game as strength_game
    from tracker.api_strength import strength_game_json as strength_game_json
    from tracker.api_strength import strength_json as strength_json
    from tracker.calibration import Calibration as Calibration
    from tracker.calibration import ClubFit as ClubFit
    from tracker.calibration import ClubModelError as ClubModelError
    from tracker.calibration import ModelGap as ModelGap
    from tracker.config import ENV_READ_ONLY as ENV_READ_ONLY
    from tracker.exact import dumps as dumps
    from tracker.exact import figure as figure
    from tracker.exact import shown as shown
    from tracker.fide import CHAPTERS as CHAPTERS
    from tracker.fide import DEFAULT_CHAPTER as DEFAULT_CHAPTER
    from tracker.fide import DEFAULT_EXPECTED as DEFAULT_EXPECTED
    from tracker.fide import DEFAULT_RULES as DEFAULT_RULES
    from tracker.fide import EXPECTED_METHODS as EXPECTED_METHODS
    from tracker.fide import RULES as RULES
    from tracker.fide import CalcResult
    from tracker.fide.rules import CAP_EXEMPT_FROM as CAP_EXEMPT_FROM
    from tracker.fide.rules import MAX_K_TIMES_GAMES as MAX_K_TIMES_GAMES
    from tracker.fide.scale import Conversion as Conversion
    from tracker.fide.scale import ScaleModel as ScaleModel
    from tracker.game_view import GameMoves as GameMoves
    from tracker.importing import ImportSummary as ImportSummary
    from tracker.importing import Progress as Progress
    from tracker.importing.analyse import AnalyseSummary as AnalyseSummary
    from tracker.importing.group_sync import PlayerSync as PlayerSync
    from tracker.lichess_line import LichessPoint as LichessPoint
    from tracker.perfs import PerfError as PerfError
    from tracker.presentation import GAME_KEYS as GAME_KEYS
    from tracker.presentation import PERIOD_KEYS as PERIOD_KEYS
    from tracker.presentation import SCALE_CSV_KEYS as SCALE_CSV_KEYS
    from tracker.presentation import answer_text as answer_text
    from tracker.presentation import band_json as band_json
    from tracker.presentation import conversion_json as conversion_json
    from tracker.presentation import conversion_text as conversion_text
    from tracker.presentation import csv_cell as csv_cell
    from tracker.presentation import excluded_text as excluded_text
    from tracker.presentation import game_row as game_row
    from tracker.presentation import gap_text as gap_text
    from tracker.presentation import k_text as k_text
    from tracker.presentation import period_json as period_json
    from tracker.presentation import periods_csv as periods_csv
    from tracker.presentation import rating_text as rating_text
    from tracker.presentation import real_now as real_now
    from tracker.presentation import start_text as start_text
    from tracker.real_fide import FideRefresh as FideRefresh
    from tracker.real_fide import NotLinkedError as NotLinkedError
    from tracker.records import SPEEDS as SPEEDS
    from tracker.report import GameDetail as GameDetail
    from tracker.report import NoGamesError as NoGamesError
    from tracker.report import PeriodRow as PeriodRow
    from tracker.report import RealLine as RealLine
    from tracker.report import ReplayReport as ReplayReport
    from tracker.report import ScaleError as ScaleError
    from tracker.report import saved_scale_note as saved_scale_note
    from tracker.report_group import NOT_ANALYSED as NOT_ANALYSED
    from tracker.report_group import GroupRow as GroupRow
    from tracker.report_strength import RECENT_GAMES as RECENT_GAMES
    from tracker.report_strength import GameStrength as GameStrength
    from tracker.report_strength import PlayerStrength as PlayerStrength
    from tracker.report_strength import SetLevel as SetLevel
    from tracker.report_strength import SideStrength as SideStrength
    from tracker.report_strength import with_judgments as with_judgments
    from tracker.settings import MAX_START_RATING as MAX_START_RATING
    from tracker.settings import MIN_START_RATING as MIN_START_RATING
    from tracker.settings import SCALES as SCALES
    from tracker.settings import START_SCALES as START_SCALES
    from tracker.settings import PlayerSettings as PlayerSettings
    from tracker.settings import SettingsError as SettingsError
    from tracker.settings import default_scale as default_scale
    from tracker.sources.engine import EngineMissingError as EngineMissingError
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

#: Names this module re-exports from the layers below, imported on first use (PEP 562).
_LAZY: Final[dict[str, str]] = {
    **dict.fromkeys(("CHAPTERS", "DEFAULT_CHAPTER", "DEFAULT_EXPECTED", "DEFAULT_RULES",
                     "EXPECTED_METHODS", "RULES"), "tracker.fide"),
    **dict.fromkeys(("Conversion", "ScaleModel"), "tracker.fide.scale"),
    **dict.fromkeys(("CAP_EXEMPT_FROM", "MAX_K_TIMES_GAMES"), "tracker.fide.rules"),
    **dict.fromkeys(("ImportSummary", "Progress"), "tracker.importing"),
    "LichessPoint": "tracker.lichess_line",
    "GameMoves": "tracker.game_view",
    "PerfError": "tracker.perfs",
    **dict.fromkeys(("GAME_KEYS", "PERIOD_KEYS", "SCALE_CSV_KEYS", "band_json",
                     "conversion_json", "excluded_text", "game_row", "period_json",
                     "periods_csv", "answer_text", "conversion_text", "csv_cell", "gap_text",
                     "k_text", "rating_text", "real_now", "start_text"), "tracker.presentation"),
    **dict.fromkeys(("dumps", "figure", "shown"), "tracker.exact"),
    "SPEEDS": "tracker.records",
    **dict.fromkeys(("GameDetail", "NoGamesError", "PeriodRow", "RealLine", "ReplayReport",
                     "ScaleError", "saved_scale_note"), "tracker.report"),
    **dict.fromkeys(("MAX_START_RATING", "MIN_START_RATING", "PlayerSettings", "SCALES",
                     "START_SCALES", "SettingsError", "default_scale"), "tracker.settings"),
    **dict.fromkeys(("FideRefresh", "NotLinkedError"), "tracker.real_fide"),
    **dict.fromkeys(("FideError", "UnknownFideIdError"), "tracker.sources.fide"),
    "FIDE_LIST_KINDS": "tracker.sources.fide:LIST_KINDS",  # FIDE's lists: standard, rapid, blitz
    **dict.fromkeys(("FideLink", "RatingInForce"), "tracker.store.fide"),
    **dict.fromkeys(("DatabaseError", "Store"), "tracker.store.db"),
    # The driver's own error for a locked or unreachable database, raised mid-query.
    "DatabaseOperationalError": "tracker.store.engine:OperationalError",
    **dict.fromkeys(("PlayerSummary", "RunInfo"), "tracker.store.queries"),
    # Groups (tracker group …, tracker sync): their own module, tracker/api_groups.py.
    **dict.fromkeys(("GroupAddResult", "GroupRemoveResult", "SyncResult", "group_add",
                     "group_create", "group_list", "group_members", "group_remove",
                     "parse_fide_pairs", "sync", "sync_row", "group_calibrate",
                     "club_scales", "calibration_json"), "tracker.api_groups"),
    **dict.fromkeys(("Calibration", "ClubFit", "ClubModelError", "ModelGap"),
                    "tracker.calibration"),
    "PlayerSync": "tracker.importing.group_sync",
    **dict.fromkeys(("GroupExistsError", "GroupInfo", "UnknownGroupError"),
                    "tracker.store.groups"),
    "SavedPassInfo": "tracker.store.snapshots",
    # The group table (tracker group show, the Group page): tracker/api_group_table.py.
    **dict.fromkeys(("GroupTable", "GROUP_KEYS", "SORT_KEYS", "group_table", "group_refresh",
                     "group_table_csv", "group_table_json", "row_json", "sort_rows"),
                    "tracker.api_group_table"),
    **dict.fromkeys(("GroupRow", "NOT_ANALYSED"), "tracker.report_group"),
    # The strength in the moves: tracker analyse and tracker strength (tracker/api_strength.py).
    **dict.fromkeys(("NoAnalysisError", "analyse", "analysed_perfs", "check_analyse_args",
                     "default_nodes", "strength", "strength_game", "strength_game_json",
                     "strength_json"), "tracker.api_strength"),
    "AnalyseSummary": "tracker.importing.analyse",
    **dict.fromkeys(("RECENT_GAMES", "GameStrength", "PlayerStrength", "SetLevel",
                     "SideStrength", "with_judgments"), "tracker.report_strength"),
    "EngineMissingError": "tracker.sources.engine",
    # ``api.dashboard``: the process launcher now lives on the CLI side (tracker.launcher);
    # resolved by name on first use for callers of the old path, never imported by the api.
    "dashboard": "tracker.launcher",
    "ENV_READ_ONLY": "tracker.config",  # the variable that makes every database read-only
}


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


if TYPE_CHECKING:
    from typing import TypeAlias

    from tracker.store.games import WrittenGames

    Db: TypeAlias = str | os.PathLike[str] | Store | None

#: The bundled demo history (see ``tracker/data/PROVENANCE.md``).
DEMO_USER = "indexinator"
DEMO_FILE = "indexinator-2023-04_2025-10.ndjson.zst"
#: His next 10 games, 9 with Lichess's evals: the demo shows accuracy, levels, turning points.
DEMO_ANALYSED_FILE = "indexinator-2025-10-later.ndjson.zst"


def version() -> str:
    """``tracker --version``: the installed tracker's version (``"0.1.0"``)."""
    from tracker._version import __version__

    return __version__


def database_label(db: Db = None) -> str:
    """The database ``db`` designates (``$TRACKER_DB``, the default file), password hidden:
    what the CLI and the dashboard show."""
    from tracker import config

    return config.shown_url(database_url(db))


def _sqlite_file(db: Db) -> tuple[Path, bool] | None:
    """The SQLite file ``db`` designates and whether it was named (``db`` or ``$TRACKER_DB``,
    not the default location); ``None`` for an open store, another backend or memory."""
    from tracker import config

    if db is not None and not isinstance(db, str | os.PathLike):
        return None  # an open Store
    named = db is not None or bool(os.environ.get(config.ENV_DB))
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
    from tracker import config
    from tracker.store.db import Store

    if isinstance(db, Store):
        return db.read_only
    return config.read_only()


#: Why the API refuses a write on a read-only database (part of the one-line error).
READ_ONLY_HINT: Final = ("the database is served read-only (tracker dashboard --read-only, "
                         "or $TRACKER_READ_ONLY)")


def check_writable(db: Db, action: str) -> None:
    """Raise ReadOnlyError (one line, exit code 1) before ``action`` (``"importing games"``)
    when ``db`` is read-only (see :func:`read_only_mode`): nothing is opened or written."""
    if read_only_mode(db):
        raise ReadOnlyError(f"{action} is not allowed: {READ_ONLY_HINT}; run it with the "
                            "tracker command where the database is kept")


def check_database(db: Db = None, *, create: bool = False) -> None:
    """What :func:`open_store` checks before opening ``db``; raises DatabaseError (one line)."""
    found = _sqlite_file(db)
    if found is None:
        return
    path, named = found
    if path.exists():
        return
    from tracker.store.db import DatabaseError

    if not create:
        raise DatabaseError(f"no database at {path}: import games first (tracker import "
                            "USERNAME, or tracker import-file FILE)")
    if named and not path.parent.is_dir():
        raise DatabaseError(f"the folder {path.parent} does not exist: create it, or give "
                            "the database another place with --db")


def database_url(db: Db = None) -> str:
    """The SQLAlchemy URL ``db`` designates (``None``: ``$TRACKER_DB``, else ``tracker.db`` in
    the user data folder), without opening it."""
    if db is not None and not isinstance(db, str | os.PathLike):
        return db.url
    from tracker import config

    return config.database_url(db)


def database_place(db: Db = None) -> str:
    """Where the database is, for a sentence: a SQLite file's path (``~`` for the home
    folder), else :func:`database_label` (password hidden)."""
    found = _sqlite_file(db)
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


def saved_passes(username: str | None = None, *, db: Db = None) -> list[SavedPassInfo]:
    """``tracker passes``: the replay passes saved in the database (of ``username`` only, when
    given), each with its player, perf, options, whether it is current (saved since the last
    write of games) and its size in bytes. Raises UnknownPlayerError for a player with no
    games."""
    from tracker.store import queries, snapshots

    store = open_store(db)
    uid = None if username is None else queries.resolve_player(store, username)
    return snapshots.list_passes(store, uid)


def drop_passes(username: str | None = None, *, db: Db = None) -> int:
    """``tracker passes --drop``: tell tracker the games changed behind its back (the database
    was edited by hand, or restored from a copy): drop the saved replay passes (of
    ``username`` only, when given) and move the store's write counter on, so every replay and
    every dashboard page computes again from the games as they are. Returns the passes
    dropped. Raises UnknownPlayerError for a player with no games."""
    from tracker.store import queries, snapshots

    check_writable(db, "dropping saved passes")
    store = open_store(db)
    uid = None if username is None else queries.resolve_player(store, username)
    return snapshots.drop_passes(store, uid)


def import_file(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    db: Db = None,
    user: str | Sequence[str] | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """``tracker import-file``: import NDJSON/PGN files; see :func:`tracker.importing.import_file`.

    Every input is checked before the database is opened: when none can be imported nothing
    changes (InputError); of several, those that can be read are imported and the others
    named in the run's message (it ends ``partial``).
    """
    from tracker.importing import import_inputs
    from tracker.sources.files import open_inputs
    from tracker.store.games import WrittenGames

    check_writable(db, "importing games")
    check_database(db, create=True)
    unreadable: list[str] = []
    inputs = open_inputs(paths, unreadable=unreadable)
    store = open_store(db, create=True)
    written = WrittenGames()
    summary = import_inputs(inputs, store=store, user=user, progress=progress,
                            unreadable=unreadable, written=written)
    return _prepared(store, summary, written)


def import_uploads(
    uploads: Sequence[tuple[str, bytes]],
    *,
    db: Db = None,
    user: str | Sequence[str] | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """:func:`import_file` of files sent with their names (the dashboard's upload): each
    ``(name, content)`` is written to a private temporary folder of its own under the last
    part of its name (:func:`upload_name`: ``..``, a path, a NUL never leave it) and the files
    are imported as one run; the folder is removed after."""
    import tempfile

    check_writable(db, "importing games")
    with tempfile.TemporaryDirectory(prefix="tracker-upload-") as tmp:
        paths = []
        for i, (name, content) in enumerate(uploads):
            folder = Path(tmp) / str(i)  # a folder per file: two of one name are two files
            folder.mkdir()
            path = folder / upload_name(name)
            path.write_bytes(content)
            paths.append(path)
        return import_file(paths, db=db, user=user, progress=progress)


def upload_name(name: str) -> str:
    """A file name fit to write an upload under: the last part of ``name`` (after any ``/``
    or ``\\``), at most 100 characters (its end kept: the extension names the compression),
    ``upload`` for ``..``, ``.``, an empty name or one with a NUL."""
    last = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if last in ("", ".", "..") or "\x00" in last:
        return "upload"
    return last if len(last) <= 100 else "upload-" + last[-93:]


def _prepared(store: Store, summary: ImportSummary, written: WrittenGames | None = None
              ) -> ImportSummary:
    """After an import that changed a tracked player's games: their replay passes and each
    default scale's replay of them computed and saved now
    (:func:`tracker.report_runs.refresh`), so the first report after the import reads a few
    rows per perf instead of every game; from the games the import kept in ``written``
    where they are all there is."""
    if summary.player is None or not (summary.new or summary.updated) or summary.players:
        return summary
    from tracker.report_runs import refresh
    from tracker.store import queries

    if queries.is_tracked(store, summary.player):
        refresh(store, summary.player, written)
    return summary


def import_user(
    username: str,
    *,
    db: Db = None,
    perf: str | Sequence[str] | None = None,
    since: str | int | date | datetime | None = None,
    full: bool = False,
    base_url: str | None = None,
    token: str | None = None,
    token_file: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    retry_wait_429: float = 60.0,
    retry_wait: float = 2.0,
    timeout: tuple[float, float] = (5.0, 30.0),
    max_retries: int = 5,
) -> ImportSummary:
    """``tracker import``: a player's games from the Lichess API, incrementally.

    ``perf``: ``"blitz,rapid"`` or a list; ``since``: a floor (``YYYY-MM-DD``, date, aware
    datetime, integer ms); ``full``: read everything again. The token: ``token`` >
    ``token_file`` > ``$LICHESS_TOKEN``; it is only sent as the Authorization header. The base
    URL: ``base_url`` > ``$LICHESS_BASE_URL`` > ``https://lichess.org``. ``retry_wait_429``:
    seconds to wait after an HTTP 429; ``retry_wait``: first pause before resuming a broken
    stream; ``timeout``: (connect, read) seconds; ``max_retries``: attempts in a row without a
    new game before stopping as partial. See :mod:`tracker.importing.lichess`.

    Raises UnknownUserError (exit code 1, as an unknown player) for an unknown or closed
    account, before the database is even opened.
    """
    from tracker.importing import lichess as importing_lichess

    check_writable(db, "importing games")
    token = resolve_token(token, token_file)
    check_database(db, create=True)
    job = importing_lichess.connect(  # the account is checked before the database is opened
        username, perf=perf, since=since, full=full, base_url=base_url, token=token,
        retry_wait_429=retry_wait_429, retry_wait=retry_wait, timeout=timeout,
        max_retries=max_retries,
    )
    store = open_store(db, create=True)
    return _prepared(store, importing_lichess.run_import(job, store=store, progress=progress))


def fide_link(
    username: str,
    fide_id: str | int,
    *,
    db: Db = None,
    base_url: str | None = None,
    token: str | None = None,
    timeout: tuple[float, float] = (5.0, 30.0),
    on_wait: Callable[[str], None] | None = None,
) -> FideRefresh:
    """``tracker fide link``: link a FIDE id to a tracked player and store FIDE's data.

    Fetches ``/api/fide/player/{id}`` (profile: name, federation, birth year, title, current
    standard/rapid/blitz in FIDE rating points) and ``/api/fide/player/{id}/ratings`` (the
    monthly lists) from Lichess (``base_url`` > ``$LICHESS_BASE_URL`` > lichess.org), through
    the session the game import uses. Linking again refreshes (no duplicate rows); linking
    another id replaces the link. ``tracker import USER`` refreshes a link after each
    complete import. Returns :class:`~tracker.real_fide.FideRefresh` (the stored link, rows
    new/updated/unchanged, entries and profile values left out: every value is checked, a
    rating must be 0–3500, a birth year 1900 to next year). Each answer may take at most 60 s
    and hold 1 MB; an HTTP 429 is waited out once (a minute), ``on_wait`` told first (one
    line; else it is logged as a warning).

    Raises FideIdError (exit 2) for text that is not a FIDE id, UnknownPlayerError for a
    player with no games, UnknownFideIdError (exit 1: Lichess answered 404; nothing stored),
    FideError for any other fetch failure. One-line messages, never the token.
    """
    from tracker import config, real_fide
    from tracker.sources import lichess

    check_writable(db, "linking a FIDE id")
    store = open_store(db)
    return real_fide.link_player(store, username, fide_id, base_url=config.base_url(base_url),
                                 session=lichess.make_session(token, timeout), on_wait=on_wait)


def fide_show(username: str, *, db: Db = None) -> FideLink:
    """``tracker fide show``: the stored FIDE link of a player: profile (ratings in FIDE
    rating points), when linked and last fetched (ms UTC), and the lists ``{kind: [ListEntry
    (month "YYYY-MM", rating)]}`` oldest first. No network. Raises UnknownPlayerError,
    NotLinkedError."""
    from tracker import real_fide

    return real_fide.show_player(open_store(db), username)


def fide_ratings(username: str, list_kind: str = "standard", *, db: Db = None,
                 through: str | None = None) -> list[RatingInForce]:
    """The player's real FIDE rating in force, month by month, on one list.

    ``list_kind``: ``standard`` (default: the scale models estimate a standard rating),
    ``rapid`` or ``blitz``. Returns ``[RatingInForce(month "YYYY-MM", rating), …]`` (plain
    ``(str, int)`` tuples; FIDE rating points) for every calendar month from the first
    published list to ``through`` (default: the month of the last refresh): a month without
    a list of its own carries the previous list's rating. ``[]`` when no FIDE id is linked.
    No network. Raises UnknownPlayerError, ArgumentError (unknown list or bad month).
    """
    from tracker import real_fide

    return real_fide.ratings_in_force(open_store(db), username, list_kind, through=through)


def fide_json(link: FideLink) -> dict[str, Any]:
    """The ``tracker fide show --json`` object: profile fields, ``ratings`` (current, rating
    points, ``null`` = none), ``linked_at``/``fetched_at`` (ISO 8601 UTC) and ``lists``
    ``{kind: [{"month": "YYYY-MM", "rating": int}, …]}`` oldest first."""
    from tracker.records import ms_to_datetime
    from tracker.sources.fide import LIST_KINDS as FIDE_LIST_KINDS

    p = link.profile
    return {
        "player": link.player_id,
        "fide_id": p.fide_id,
        "name": p.name,
        "federation": p.federation,
        "birth_year": p.birth_year,
        "title": p.title,
        "ratings": {kind: p.rating(kind) for kind in FIDE_LIST_KINDS},
        "linked_at": ms_to_datetime(link.linked_at_ms).isoformat(),
        "fetched_at": ms_to_datetime(link.fetched_at_ms).isoformat(),
        "lists": {kind: [{"month": e.month, "rating": e.rating} for e in link.lists[kind]]
                  for kind in FIDE_LIST_KINDS},
    }


_TOKEN_HELP = "a Lichess API token is one line of letters, digits and _ (lip_…)"


def resolve_token(token: str | None = None,
                  token_file: str | os.PathLike[str] | None = None) -> str | None:
    """The API token to use: ``token`` > ``token_file`` > ``$LICHESS_TOKEN`` (``None``: none),
    checked by :func:`check_token`. Raises TokenError (exit code 2: an unreadable file, a
    malformed token), never with the token in the message."""
    from tracker import config
    from tracker.sources.lichess import TokenError

    where = "the token given"
    if token is None:
        where = "the token file" if token_file is not None else "$LICHESS_TOKEN"
        try:
            token = config.token(token_file)
        except OSError as exc:
            raise TokenError(
                f"cannot read the token file {token_file}: {exc.strerror or exc}"
            ) from None
        except UnicodeDecodeError:
            raise TokenError(
                f"the token file {token_file} is not text: {_TOKEN_HELP}") from None
    return None if token is None else check_token(token, where)


def check_token(token: str, where: str = "the token") -> str:
    """The token without surrounding whitespace, checked before any request: a line break
    inside it (a two-line token file, a pasted newline) or characters no token has (spaces,
    control or non-ASCII characters, which an HTTP header cannot carry) raise TokenError (exit
    code 2) with a message that never holds the token; ``where`` says where it came from."""
    from tracker.sources import lichess

    token = token.strip()
    if "\n" in token or "\r" in token:
        raise lichess.TokenError(f"the token has a line break: {_TOKEN_HELP} (check {where})")
    if not token.isascii() or not all(33 <= ord(c) <= 126 for c in token):
        raise lichess.TokenError(
            f"the token has characters a token cannot have: {_TOKEN_HELP} (check {where})")
    return token


#: The largest ``limit`` of :func:`runs`: what a database's LIMIT takes (a signed 32-bit
#: integer); beyond it SQLite raises OverflowError.
MAX_RUNS_LIMIT: Final = 2**31 - 1


def runs(*, db: Db = None, limit: int = 20) -> list[RunInfo]:
    """``tracker runs``: the last ``limit`` import runs, newest first.

    A run whose process is gone (killed, the machine stopped) is marked ``interrupted`` first
    (see :mod:`tracker.run_liveness`); its counts are what it stored. Statuses: ``running``,
    ``complete``, ``partial``, ``failed``, ``interrupted``. Raises ArgumentError (exit 2) for a
    ``limit`` below 1 or above :data:`MAX_RUNS_LIMIT`.
    """
    from tracker.run_liveness import mark_interrupted
    from tracker.store import queries

    if not 1 <= limit <= MAX_RUNS_LIMIT:
        raise ArgumentError(f"--limit must be 1 to {MAX_RUNS_LIMIT}, not {limit}")
    store = open_store(db)
    if not store.read_only:  # a read-only store says what is stored, changing nothing
        mark_interrupted(store)
    return queries.import_runs(store, limit=limit)


def run_dict(run: RunInfo) -> dict[str, Any]:
    """An import run as JSON-able data (times as ISO 8601 UTC, ``None`` when unknown)."""
    from tracker.records import ms_to_datetime

    data = asdict(run)
    for key in ("started_at_ms", "finished_at_ms"):
        ms = data.pop(key)
        data[key.removesuffix("_ms")] = (None if ms is None else
                                         ms_to_datetime(ms).isoformat().replace("+00:00", "Z"))
    return data


def players(*, db: Db = None) -> list[PlayerSummary]:
    """``tracker players``: tracked players with games per perf, most games first."""
    from tracker.store import queries

    return queries.list_players(open_store(db))


def demo_file(name: str = DEMO_FILE) -> Path:
    """Path of a bundled real Lichess export (zstd-compressed NDJSON): the history, or
    :data:`DEMO_ANALYSED_FILE`."""
    from importlib import resources  # here, not at import: ~5 ms of every command's start

    return Path(str(resources.files("tracker") / "data" / name))


def demo(*, db: Db = None, progress: Progress | None = None) -> ImportSummary:
    """``tracker demo``: import the bundled history of ``indexinator`` (2,907 games) and his
    next 10 games, 9 with Lichess's evals (2,917 games in all)."""
    return import_file([demo_file(), demo_file(DEMO_ANALYSED_FILE)], db=db, user=DEMO_USER,
                       progress=progress)


def replay(
    username: str,
    perf: str,
    *,
    db: Db = None,
    start_rating: int | None = None,
    birth_year: int | None = None,
    rules: str | None = None,
    expected: str | None = None,
    count_provisional: bool | None = None,
    scale: str | None = None,
    start_scale: str | None = None,
    chapter: str | None = None,
    real: RealLine | None = None,
    fide_list: str = "standard",
) -> ReplayReport:
    """``tracker replay``: the player's games of ``perf`` as monthly FIDE rating periods.

    Settings not given here come from the player's saved settings, then the defaults (start
    unrated, rules ``fide-2025-10``, expected ``table``, provisional opponents not counted,
    every model covering the perf (the Lichess scale where none does), the start rating on the
    FIDE scale, the chapter by perf).

    - ``scale``: ``"lichess"`` (the raw Lichess numbers), a model key (``"lebowitz"``,
      ``"mathtuition"``, ``"chessdojo-2024"``: every opponent's rating mapped to the FIDE
      scale first), or ``"all"`` (every model covering the perf; each period gets a band).
    - ``start_scale``: ``"fide"`` or ``"lichess"`` (the start rating mapped like opponents).
    - ``chapter``: ``"standard"`` or ``"rapid-blitz"`` forces FIDE's chapter.
    - ``real``: a real FIDE list, ``[("YYYY-MM", rating), …]`` (each entry in force until
      the next), compared period by period (``PeriodRow.fide_real``, ``.gap``,
      ``report.mean_abs_gap``). Without it, a player with a linked FIDE id is compared with
      their stored list ``fide_list``: ``"standard"`` (default: what the scale models
      estimate), ``"rapid"``, ``"blitz"``, or ``"none"``.

    ``report.to_json()`` is the ``--json`` contract. Raises UnknownPlayerError, NoGamesError,
    SettingsError, ScaleError (exit 2: a model that does not cover the perf), one line each.
    """
    from tracker import real_fide
    from tracker.report import build_report

    store = open_store(db)
    real_list = None
    if real is None and fide_list != "none":
        real, real_list = real_fide.ratings_in_force(store, username, fide_list), fide_list
    return build_report(
        store, username, perf, start_rating=start_rating, birth_year=birth_year,
        rules=rules, expected=expected, count_provisional=count_provisional, scale=scale,
        start_scale=start_scale, chapter=chapter, real=real, real_list=real_list,
    )


def scale_models(perf: str | None = None) -> list[ScaleModel]:
    """The Lichess → FIDE scale models (every one, or those covering ``perf``), each with its
    key, name, source, year, data, perfs covered, fitted range, era and caveat."""
    from tracker.fide.scale import MODELS as SCALE_MODELS
    from tracker.fide.scale import models_for

    return list(SCALE_MODELS.values()) if perf is None else list(models_for(perf))


def convert(lichess: int, perf: str, scale: str = "all") -> dict[str, Conversion]:
    """``tracker convert``: a Lichess rating in ``perf`` through one model (``scale`` a model
    key) or every model covering the perf (``"all"``): model key → :class:`Conversion`
    (``output``: the model's own number, rounded half away from zero; ``rating``: the FIDE
    rating on today's scale, ``None`` = unrated). ``lichess`` must lie in
    :data:`MIN_CALC_RATING`–:data:`MAX_CALC_RATING` (the calculator's range). Raises PerfError,
    ScaleError, ArgumentError (exit 2), one line each."""
    from tracker.fide.scale import MODELS, models_for
    from tracker.fide.scale import convert as convert_rating
    from tracker.perfs import perf_key
    from tracker.records import SPEEDS
    from tracker.report import ScaleError
    from tracker.report import scale_models as scale_models_for
    from tracker.settings import SCALES

    key = perf_key(perf)
    scale = scale.strip().lower()
    if scale == "lichess":
        raise ScaleError("convert needs a model: use a model key or all")
    if scale not in SCALES:
        models = ", ".join(s for s in SCALES if s != "lichess")
        raise ScaleError(f"unknown scale {scale!r}: use {models}")
    if not models_for(key):
        covered = [p for p in SPEEDS if any(m.covers(p) for m in MODELS.values())]
        raise ScaleError(f"no scale model covers {key}: the models cover {', '.join(covered)}")
    _check_rating(lichess, "a Lichess rating")
    return {m.key: convert_rating(m, key, lichess) for m in scale_models_for(scale, key)}


def conversion_note(scale: str, perf: str, lichess: int) -> str | None:
    """Where a conversion is not a plain estimate, in words (``"below the model's range
    (1665)"``, ``"beyond the model's fitted range (FIDE 1000–2900)"``), else ``None``:
    ``scale`` a model key covering ``perf``."""
    from tracker.fide.scale import model, range_note
    from tracker.perfs import perf_key

    return range_note(model(scale.strip().lower()), perf_key(perf), lichess)


#: Ratings the calculator accepts (rating points): wide, but no negative or absurd numbers.
MIN_CALC_RATING = 100
MAX_CALC_RATING = 4000


def _check_rating(rating: int, who: str) -> None:
    """Raise ArgumentError (``"{who} {rating} is out of range (100–4000)"``) outside
    :data:`MIN_CALC_RATING`–:data:`MAX_CALC_RATING`."""
    if not MIN_CALC_RATING <= int(rating) <= MAX_CALC_RATING:
        raise ArgumentError(f"{who} {rating} is out of range "
                            f"({MIN_CALC_RATING}–{MAX_CALC_RATING})")


def default_k(rating: int) -> tuple[int, str]:
    """The K FIDE's rules give an established adult (30 games or more, not a junior) rated
    ``rating``: 20, or 10 at 2400 or more (rules.md §3); with the words that say so."""
    from tracker.fide.rules import K10_THRESHOLD, development_coefficient

    k = development_coefficient(ever_published_2400=rating >= K10_THRESHOLD, games_before=30,
                                period_year=date.today().year, birth_year=None,
                                ever_published_2300=rating >= K10_THRESHOLD)
    return k, (f"K {k}: FIDE's K for an established adult rated {rating} (30 games or more, "
               "not a junior); give --k for another")


def calc(
    rating: int,
    k: int | None,
    games: Sequence[tuple[int, Fraction | str | int]],
    *,
    cap_400: bool = True,
    rules: str | None = None,
    expected: str | None = None,
    chapter: str | None = None,
) -> CalcResult:
    """``tracker calc``: the FIDE Elo calculator (no database).

    ``games``: (opponent rating, score) pairs; a score is 1, 0, ½ as a Fraction or text
    (``"1"``, ``"0.5"``, ``"1/2"``, ``"="``). K is reduced by the 700 rule; the change is
    unrounded and ``new_rating`` rounded once, half away from zero. Ratings must be
    100–4000 rating points. ``k``: ``None`` for :func:`default_k`. ``chapter``:
    ``"standard"`` or ``"rapid-blitz"`` (FIDE's rapid & blitz rules: no 2650 exemption, the
    600-point rule in force). ``None`` for ``rules``,
    ``expected`` or ``chapter``: the default. Raises ArgumentError (a ValueError) with a
    one-line message.
    """
    from tracker.fide import (
        CHAPTERS,
        DEFAULT_CHAPTER,
        DEFAULT_EXPECTED,
        DEFAULT_RULES,
        EXPECTED_METHODS,
        RULES,
        calculate,
        parse_score,
    )
    from tracker.fide.rules import is_chapter, is_method, is_rules

    if k is None:
        _check_rating(rating, "your rating")
        k = default_k(rating)[0]
    rules = DEFAULT_RULES if rules is None else rules
    expected = DEFAULT_EXPECTED if expected is None else expected
    chapter = DEFAULT_CHAPTER if chapter is None else chapter
    for r, who in ((rating, "your rating"), *((o, "an opponent's rating") for o, _ in games)):
        _check_rating(r, who)
    if not is_rules(rules):
        raise ArgumentError(f"unknown rules {rules!r}: use one of {', '.join(RULES)}")
    if not is_chapter(chapter):
        raise ArgumentError(f"unknown chapter {chapter!r}: use one of {', '.join(CHAPTERS)}")
    if not is_method(expected):
        raise ArgumentError(f"unknown expected-score method {expected!r}: use one of "
                            f"{', '.join(EXPECTED_METHODS)}")
    try:
        parsed = [(int(o), s if isinstance(s, Fraction) else parse_score(str(s)))
                  for o, s in games]
        return calculate(rating, k, parsed, cap_400=cap_400, rules=rules, method=expected,
                         chapter=chapter)
    except ValueError as exc:
        raise ArgumentError(str(exc)) from None


def settings(username: str, *, db: Db = None, **changes: object) -> PlayerSettings:
    """``tracker settings``: show (no changes) or save a player's replay settings.

    Keys: ``start_rating``, ``birth_year``, ``rules``, ``expected``, ``count_provisional``; a
    value of ``None`` resets that setting to the default. Raises SettingsError,
    UnknownPlayerError.
    """
    from tracker.settings import get_settings, save_settings
    from tracker.store import queries

    if changes:
        check_writable(db, "changing settings")
    store = open_store(db)
    if not changes:
        return get_settings(store, queries.resolve_player(store, username))
    return save_settings(store, username, **changes)


class CalcGameJson(TypedDict):
    """One game of :class:`CalcJson`: opponent (rating points), score (points), expected score
    PD and the change in rating points, unrounded (Decimals, for exact JSON). ``rated``: only
    under the rapid & blitz chapter (False: left out by the 600-point rule)."""

    opponent: int
    score: int | Decimal
    expected: Decimal | None
    change: Decimal | None
    rated: NotRequired[bool]


class CalcJson(TypedDict):
    """The ``tracker calc --json`` object (``chapter`` only under the rapid & blitz chapter)."""

    k: int
    chapter: NotRequired[str]
    games: list[CalcGameJson]
    change: Decimal | None
    new_rating: int


def calc_json(result: CalcResult) -> CalcJson:
    """The ``tracker calc --json`` object: K after the 700 rule, per game expected and change,
    the unrounded total change and the new rating rounded once. Under the rapid & blitz
    chapter, ``chapter`` is given and each game says whether it is ``rated`` (a game the
    600-point rule leaves out: expected ``null``, change 0)."""
    from tracker.exact import points, shown

    rapid_blitz = result.chapter == "rapid-blitz"
    games: list[CalcGameJson] = []
    for g in result.games:
        game: CalcGameJson = {
            "opponent": g.opponent,
            "score": points(g.score),
            "expected": shown(g.expected, "0.01" if isinstance(g.expected, Fraction)
                              else "0.0001"),
            "change": shown(g.change),
        }
        if rapid_blitz:
            game["rated"] = g.rated
        games.append(game)
    out: CalcJson = {"k": result.k, "games": games, "change": shown(result.change),
                     "new_rating": result.new_rating}
    if rapid_blitz:
        out["chapter"] = result.chapter
    return out


def summary_dict(summary: ImportSummary) -> dict[str, Any]:
    """An import summary as plain JSON-able data."""
    return asdict(summary)


def player_dict(p: PlayerSummary) -> dict[str, Any]:
    """A player summary as JSON-able data (dates as ``YYYY-MM-DD``, UTC)."""
    from tracker.records import ms_to_datetime

    def day(ms: int) -> str:
        return ms_to_datetime(ms).date().isoformat()

    return {
        "id": p.id,
        "username": p.username,
        "games": p.games,
        "perfs": [
            {"perf": x.perf, "games": x.games, "first": day(x.first_ms), "last": day(x.last_ms)}
            for x in p.perfs
        ],
    }


def unrated_text(report: ReplayReport) -> str | None:
    """Why the player has no FIDE-style rating now, said once and starting with "unrated":
    ``"unrated: fell to 1361, below 1400"``, ``"unrated: pool of 63 games gives 1246, below
    1400: not published"``; ``None`` when rated."""
    reason = report.unrated_reason()
    if reason is None:
        return None
    reason = reason.removesuffix(": unrated from next period")
    return reason if reason.startswith("unrated") else f"unrated: {reason}"


def game_moves(game_id: str, *, db: Db = None, orientation: str = "white") -> GameMoves:
    """One stored game's moves (SAN) and final position, drawn by python-chess as SVG from
    ``orientation``'s side (``"white"``/``"black"``), with its lichess.org link. Read from the
    game's stored source text; a text that cannot be read (damaged in the database) gives no
    moves and the reason in ``problem``. Raises ArgumentError for an unknown game id."""
    from tracker.codec import RawTextError
    from tracker.game_view import game_moves as _game_moves
    from tracker.game_view import unreadable
    from tracker.store import queries

    try:
        found = queries.game_source(open_store(db), game_id)
    except RawTextError as exc:  # damaged in the database: said, and repaired by a re-import
        return unreadable(game_id, str(exc), orientation=orientation)
    if found is None:
        raise ArgumentError(f"no game {game_id!r} in the database")
    raw, initial_fen, variant, source = found
    return _game_moves(game_id, raw, source=source, variant=variant, initial_fen=initial_fen,
                       orientation=orientation)
