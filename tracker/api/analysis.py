"""The public Python API of the strength in the moves (re-exported by :mod:`tracker.api`):
``tracker analyse`` and ``tracker strength``, one function each, plus their ``--json``
shapes. Every function takes ``db=`` as the rest of the API does.

    import tracker.api as api
    api.analyse("me", perf="blitz", last=50, jobs=2, db="my.db").line()
    api.strength("me", perf="blitz", db="my.db").to_json()     # the --json object
    api.strength_game("q7ZvsdUF", db="my.db").white.accuracy
"""

from __future__ import annotations

import threading
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Final

from tracker.core.errors import ArgumentError, NoAnalysisError

if TYPE_CHECKING:
    from tracker.api._db import Db
    from tracker.importing.analyse import AnalyseProgress, AnalyseSummary
    from tracker.importing.workers import OnGame
    from tracker.report.strength import GameStrength, PlayerStrength


def _store(db: Db, *, create: bool = False) -> Any:
    from tracker.api._db import open_store

    return open_store(db, create=create)


def analyse(
    username: str | None = None,
    *,
    db: Db = None,
    perf: str | None = None,
    last: int | None = None,
    since: str | int | date | datetime | None = None,
    nodes: int | None = None,
    jobs: int | None = None,
    engine: str | None = None,
    progress: AnalyseProgress | None = None,
    stop: threading.Event | None = None,
    group: str | None = None,
    worker: bool = False,
    lease: float | None = None,
    on_game: OnGame | None = None,
) -> AnalyseSummary:
    """``tracker analyse``: a local engine's evals for the player's games without any.

    ``perf``: one perf (default every perf); ``last``: only the ``last`` most recent games
    (analysed or not); ``since``: only games started on or after a date (``YYYY-MM-DD``,
    date, aware datetime or integer ms); ``nodes``: nodes per position (default
    :data:`~tracker.sources.engine.DEFAULT_NODES`); ``jobs``: engine processes (default one
    per core this process may use);
    ``engine``: the UCI engine's path (default ``$TRACKER_ENGINE``, else Stockfish);
    ``progress(done, total)``; ``stop``: an Event that ends the run early (partial). Every
    finished game is stored at once: an interrupted run keeps them, and the same call goes
    on. Games with Lichess's evals are never analysed again.

    ``group`` (instead of ``username``): the games of every member of the group, each game
    once, newest first (``last``: the group's most recent games). ``worker``: one of many
    workers on one PostgreSQL database (:mod:`tracker.importing.workers`): games are claimed
    under a ``lease`` (seconds, default 60) so that each is analysed once, and the run goes on
    until no game of the set is left; ``on_game(game id, what happened)`` after each game
    this worker finished; ``progress`` then counts every worker's games.

    Raises ReadOnlyError (exit 1) on a read-only database, before any engine starts;
    ArgumentError (exit 2) for a bad value (``--worker`` on SQLite, ``--last`` with
    ``--worker``, both or neither of a player and a group), UnknownPlayerError for a player
    without games, NoGamesError (exit 1, as ``tracker replay``) for a player's perf without
    games, UnknownGroupError, EngineMissingError (one line: ``apt-get install stockfish``)
    where no engine is installed and a game needs one.
    """
    from tracker.api._db import check_writable
    from tracker.core.perfs import perf_key
    from tracker.importing.analyse import run_analyse
    from tracker.sources.engine import DEFAULT_NODES
    from tracker.sources.lichess.params import ImportArgumentError, epoch_ms
    from tracker.store import queries

    if username is not None and group is not None:
        raise ArgumentError("give a player (USERNAME) or --group NAME, not both")
    if username is None and group is None:
        raise ArgumentError("give a player (USERNAME) or --group NAME")
    if last is not None and since is not None:
        raise ArgumentError("give --last or --since, not both")
    if last is not None and last < 1:
        raise ArgumentError(f"--last must be 1 or more, got {last}")
    if worker and last is not None:
        raise ArgumentError("--last does not go with --worker (workers share every game "
                            "without evals): use --since")
    if lease is not None and not worker:
        raise ArgumentError("--lease goes with --worker")
    try:
        since_ms = epoch_ms(since, "--since") if since is not None else None
    except ImportArgumentError as exc:
        raise ArgumentError(str(exc)) from None
    key = perf_key(perf) if perf is not None else None
    # Read-only: refused before the store is opened and any engine starts.
    check_writable(db, "analysing games")
    budget = DEFAULT_NODES if nodes is None else nodes
    store = _store(db)
    check_writable(store, "analysing games")  # a role that may not write: before any engine
    if group is not None:
        from tracker.store import groups

        label = groups.check_name(group)
        members = [m.user_id for m in groups.members(store, label)]
    else:
        label = queries.resolve_player(store, username or "")
        members = [label]
        have = queries.player_perfs(store, label)
        if key is not None and not any(p.perf == key for p in have):
            # Nothing to do is not done: exit 1, as tracker replay says it (one rule).
            from tracker.report.replay import NoGamesError

            perfs = ", ".join(f"{p.perf} ({p.games})" for p in have) or "none"
            raise NoGamesError(f"{username} has no {key} games; perfs with games: {perfs}")
    if worker:
        from tracker.importing.analyse import default_jobs
        from tracker.importing.workers import DEFAULT_LEASE, run_worker

        return run_worker(store, label, members, perf=key, since_ms=since_ms, nodes=budget,
                          jobs=default_jobs() if jobs is None else jobs, engine_path=engine,
                          lease=DEFAULT_LEASE if lease is None else lease,
                          progress=progress, stop=stop, on_game=on_game)
    return run_analyse(store, label, perf=key, since_ms=since_ms, last=last, nodes=budget,
                       jobs=jobs, engine_path=engine, progress=progress, stop=stop,
                       members=members if group is not None else None)


def analysed_perfs(username: str, *, db: Db = None) -> dict[str, int]:
    """``{perf: analysed games}`` of the player, most analysed first (empty: none)."""
    from tracker.store import queries
    from tracker.store.analysis import analysed_perfs as _perfs

    store = _store(db)
    return _perfs(store, queries.resolve_player(store, username))


def strength(username: str, *, db: Db = None, perf: str | None = None) -> PlayerStrength:
    """``tracker strength USER``: what the player's analysed games of ``perf`` show (default:
    the perf with the most analysed games): per game accuracy, ACPL, judgments, the level and
    the turning point; per month and for the last 20 games the level together.
    ``.to_json()`` is the ``--json`` contract (docs/analysis.md). Raises
    UnknownPlayerError, PerfError, NoAnalysisError (no analysed games there)."""
    from tracker.core.perfs import perf_key
    from tracker.report.strength import player_strength
    from tracker.store import queries
    from tracker.store.analysis import analysed_perfs as _perfs

    store = _store(db)
    uid = queries.resolve_player(store, username)
    if perf is None:
        have = _perfs(store, uid)
        if not have:
            raise NoAnalysisError(f"no analysed games of {username}: run tracker analyse "
                                  f"{username}, or import with Lichess's evals")
        perf = next(iter(have))
    return player_strength(store, uid, perf_key(perf))


def strength_game(game_id: str, *, db: Db = None) -> GameStrength:
    """``tracker strength --game ID``: both sides of one analysed game (see
    :class:`~tracker.report.strength.GameStrength`). Raises NoAnalysisError."""
    from tracker.report.strength import one_game

    return one_game(_store(db), game_id.strip())


def strength_json(report: PlayerStrength) -> dict[str, Any]:
    """The ``tracker strength USER --perf P --json`` object."""
    return report.to_json()


def strength_game_json(game: GameStrength) -> dict[str, Any]:
    """The ``tracker strength --game ID --json`` object: both sides in the games' keys."""
    from tracker.report.strength import game_json

    return game_json(game)


def check_analyse_args(nodes: int | None, jobs: int | None,
                       lease: float | None = None) -> None:
    """Raise ArgumentError (exit code 2) for a node budget, job count or lease out of range
    (``None``: the default): the CLI checks before it opens anything."""
    from tracker.importing.analyse import check_nodes_jobs, default_jobs
    from tracker.sources.engine import DEFAULT_NODES

    check_nodes_jobs(DEFAULT_NODES if nodes is None else nodes,
                     default_jobs() if jobs is None else jobs)
    if lease is not None:
        from tracker.importing.workers import check_lease

        check_lease(lease)


#: :data:`tracker.sources.engine.DEFAULT_NODES`, written out so that ``tracker --help`` need
#: not load python-chess's engine module (asyncio: ~0.1-0.3 s); a test keeps them equal.
DEFAULT_NODES: Final = 10_000


def default_nodes() -> int:
    """The node budget per position ``tracker analyse`` uses by default."""
    return DEFAULT_NODES


def default_jobs() -> int:
    """The engine processes ``tracker analyse`` runs at once by default (``--jobs``, the
    dashboard's panel): one per core this process may use (its CPU affinity), 1 to 64."""
    from tracker.importing.analyse import default_jobs as jobs

    return jobs()
