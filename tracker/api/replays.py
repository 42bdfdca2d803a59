"""``tracker replay``, ``tracker players``, ``tracker passes``: a player's games replayed as
FIDE rating periods, the tracked players, the saved replay passes, one game's moves."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tracker.api._db import check_writable, open_store
from tracker.core.errors import ArgumentError

if TYPE_CHECKING:
    from tracker.api._db import Db
    from tracker.report.game_view import GameMoves
    from tracker.report.replay import RealLine, ReplayReport
    from tracker.store.queries import PlayerSummary
    from tracker.store.snapshots import SavedPassInfo


def saved_passes(username: str | None = None, *, db: Db = None) -> list[SavedPassInfo]:
    """``tracker passes``: the replay passes saved in the database (of ``username`` only, when
    given), each with its player, perf, options, whether it is current (saved since the last
    write of games) and its size in bytes. Raises UnknownPlayerError for a player with no
    games."""
    from dataclasses import replace

    from tracker.report.saved_pass import describe
    from tracker.store import queries, snapshots

    store = open_store(db)
    uid = None if username is None else queries.resolve_player(store, username)
    return [replace(p, options=describe(p.options, p.version))
            for p in snapshots.list_passes(store, uid)]


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


def players(*, db: Db = None) -> list[PlayerSummary]:
    """``tracker players``: tracked players with games per perf, most games first."""
    from tracker.store import queries

    return queries.list_players(open_store(db))


def main_perf(username: str, *, db: Db = None) -> str:
    """The perf ``tracker replay USER`` takes without ``--perf``: of the perfs a replay
    accepts (the speeds, not the variants), the one with the most of the player's games.
    Raises UnknownPlayerError for a player with no games, PerfError when they have games in
    variants only."""
    from tracker.core.perfs import PerfError
    from tracker.core.records import SPEEDS
    from tracker.store import queries

    store = open_store(db)
    uid = queries.resolve_player(store, username)
    found = next((p.perf for p in queries.player_perfs(store, uid) if p.perf in SPEEDS), None)
    if found is None:
        raise PerfError(f"{username} has games in variants only: FIDE rates standard chess "
                        "only, so there is nothing to replay")
    return found


def replay(
    username: str,
    perf: str | None = None,
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
    """``tracker replay``: the player's games of ``perf`` as monthly FIDE rating periods
    (``None``: :func:`main_perf`, the perf with the most of the player's games).

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
    from tracker.importing import real_fide
    from tracker.report.replay import ReplayOptions, build_report

    store = open_store(db)
    if perf is None:
        perf = main_perf(username, db=store)
    real_list = None
    if real is None and fide_list != "none":
        real, real_list = real_fide.ratings_in_force(store, username, fide_list), fide_list
    return build_report(store, username, perf, ReplayOptions(
        start_rating=start_rating, birth_year=birth_year, rules=rules, expected=expected,
        count_provisional=count_provisional, scale=scale, start_scale=start_scale,
        chapter=chapter, real=real, real_list=real_list,
    ))


def player_dict(p: PlayerSummary) -> dict[str, Any]:
    """A player summary as JSON-able data (dates as ``YYYY-MM-DD``, UTC)."""
    from tracker.core.records import ms_to_datetime

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
    from tracker.core.codec import RawTextError
    from tracker.report.game_view import game_moves as _game_moves
    from tracker.report.game_view import unreadable
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
