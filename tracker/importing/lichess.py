"""Import from the Lichess API: a player's games → the store, incrementally, as one run.

Two steps, so that nothing is written for a bad argument or an unknown account:

1. :func:`connect`: check the arguments, make the HTTP client, look the account up
   (UnknownUserError, TokenError before the database is even opened);
2. :func:`run_import`: into an open store, with the sync cursor of the player and perf filter
   (:func:`~tracker.sources.lichess.sync.plan_sync` says what to download,
   :func:`~tracker.sources.lichess.sync.advance_cursor` what to remember), the runner's
   :class:`~tracker.importing.runner.ImportRecorder` writing the games, the rating history
   stored when a token is given, and a linked FIDE id's profile and lists refreshed
   (:func:`tracker.importing.real_fide.refresh_player`) after a complete import.

:func:`import_user` does both. A partial import (HTTP 429 twice, a stream that keeps
breaking, Ctrl+C) keeps every game read and is never recorded as complete; the next run
resumes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from tracker.core import config
from tracker.core.cursor import Cursor
from tracker.core.errors import TrackerError
from tracker.core.records import GameRecord
from tracker.core.utc import now_ms
from tracker.importing import real_fide
from tracker.importing.runner import SKIP_NOT_STORED, ImportRecorder, ImportSummary, Progress
from tracker.sources.files import MAX_MESSAGES, SKIP_NOT_PLAYER
from tracker.sources.lichess.client import (
    DEFAULT_TIMEOUT,
    LichessClient,
    LichessError,
    LichessUser,
    make_session,
    parse_rating_history,
)
from tracker.sources.lichess.options import LichessOptions
from tracker.sources.lichess.params import check_username, parse_perfs, since_floor
from tracker.sources.lichess.stream import MAX_RETRIES, RETRY_WAIT_S, SKIP_ONGOING, GameFetcher
from tracker.sources.lichess.sync import (
    SEARCH_INDEX_LAG_MS,
    Segment,
    SegmentResult,
    advance_cursor,
    beyond,
    plan_sync,
)
from tracker.sources.ndjson import EVALS_DROPPED
from tracker.store.db import Store
from tracker.store.players import player_perfs
from tracker.store.runs import RunStatus
from tracker.store.sync import (
    has_rating_history,
    load_cursor,
    replace_rating_history,
    save_cursor,
)

__all__ = [
    "DEFAULTS",
    "DEFAULT_TIMEOUT",
    "PROGRESS_INTERVAL_S",
    "SEARCH_INDEX_LAG_MS",
    "SKIP_ONGOING",
    "LichessOptions",
    "UserImport",
    "connect",
    "import_user",
    "run_import",
]

#: The options of an import given none: every game of every perf, from https://lichess.org
#: (or ``$LICHESS_BASE_URL``), no token.
DEFAULTS: Final = LichessOptions()

#: Seconds between two progress callbacks (the bar redraws at most this often).
PROGRESS_INTERVAL_S: Final = 0.1


@dataclass(frozen=True, slots=True)
class UserImport:
    """A Lichess import ready to run: arguments checked, the account found.

    ``username`` is the name as given (checked), ``perfs`` Lichess perf keys (none: all),
    ``floor_ms`` the ``--since`` floor (ms UTC), ``full`` to ignore the cursor.
    """

    client: LichessClient
    user: LichessUser
    username: str
    perfs: tuple[str, ...]
    floor_ms: int | None
    full: bool
    with_token: bool
    retry_wait: float = RETRY_WAIT_S
    max_retries: int = MAX_RETRIES


def connect(username: str, options: LichessOptions = DEFAULTS) -> UserImport:
    """Check the arguments and look the account up; nothing is written.

    Raises ImportArgumentError (a bad username, perf or date, a ``since`` in the future),
    UnknownUserError (an unknown or closed account), TokenError (a token Lichess refuses),
    LichessError (Lichess unreachable). ``on_wait``: told one line each time Lichess asks to
    wait (HTTP 429), before the wait.
    """
    o = options
    name = check_username(username)
    perfs = parse_perfs(o.perf)
    floor = None if o.since is None else since_floor(o.since, now_ms())
    http = o.session or make_session(o.token, o.timeout)
    client = LichessClient(config.base_url(o.base_url), http, retry_wait_429=o.retry_wait_429,
                           sleep=o.sleep, on_wait=o.on_wait)
    user = client.user(name)
    return UserImport(client, user, name, perfs, floor, o.full, bool(o.token), o.retry_wait,
                      o.max_retries)


def import_user(username: str, *, store: Store, options: LichessOptions = DEFAULTS,
                progress: Progress | None = None) -> ImportSummary:
    """Import a player's games from the Lichess API into ``store``: :func:`connect`, then
    :func:`run_import`.

    ``options``: what to download and how (:class:`LichessOptions`: perfs, ``since``,
    ``full``, the server, the token, retries, timeouts). ``progress(games, games, total)``:
    the total is Lichess's game count (``count.all``, or the perfs' counts) minus the games
    already stored, ``None`` with ``since``.
    """
    return run_import(connect(username, options), store=store, progress=progress)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a run downloads: the cursor it starts from, the segments, the games expected."""

    old: Cursor | None
    segments: list[Segment]
    perf_filter: str
    total: int | None  # games expected (for the progress bar), None when unknown
    started_ms: int


def _plan(job: UserImport, store: Store) -> _Plan:
    user, perfs = job.user, job.perfs
    started = now_ms()
    perf_filter = ",".join(sorted(perfs))
    old = load_cursor(store, user.id, perf_filter)
    if old is not None and beyond(old, started):
        old = None  # moved past now by an older tracker (a file game dated in the future)
    segments = plan_sync(old, perfs=perfs, floor_ms=job.floor_ms, full=job.full)
    total = None
    if job.floor_ms is None:
        total = (user.games(perfs) if job.full or old is None
                 else _expected_games(store, user, perfs))
    return _Plan(old, segments, perf_filter, total, started)


class _Feed:
    """Where a download's games go: records to the recorder, skips counted (a few of their
    messages kept as warnings), progress reported at most every :data:`PROGRESS_INTERVAL_S`.
    A game the player (``player``, a lowercase id) did not play is skipped as
    :data:`~tracker.sources.files.SKIP_NOT_PLAYER`, as ``import-file --user`` skips it: a
    server that answers with another user's games stores none of them."""

    def __init__(self, recorder: ImportRecorder, progress: Progress | None,
                 total: int | None, player: str | None = None) -> None:
        self.recorder = recorder
        self.progress = progress
        self.total = total
        self.player = player
        self.warnings: list[str] = []
        self._last_report = 0.0

    def report(self, force: bool = False) -> None:
        if self.progress is None:
            return
        now = time.monotonic()
        if force or now - self._last_report >= PROGRESS_INTERVAL_S:
            self._last_report = now
            n = self.recorder.read
            self.progress(n, n, None if self.total is None else max(self.total, n))

    def game(self, record: GameRecord) -> None:
        if self.player is not None and self.player not in (record.white.user_id,
                                                           record.black.user_id):
            self.skip(SKIP_NOT_PLAYER, f"game {record.id}: not a game of {self.player} "
                      "(the server sent another player's game): skipped")
            return
        self.recorder.add(record)
        if record.analysis is not None and record.analysis.dropped:
            self.recorder.repair(EVALS_DROPPED)
        self.report()

    def skip(self, reason: str, message: str | None) -> None:
        self.recorder.skip(reason)
        if message is not None and len(self.warnings) < MAX_MESSAGES:
            self.warnings.append(message)
        if reason != SKIP_ONGOING:
            self.report()


def _cursor_mover(store: Store, job: UserImport, plan: _Plan,
                  results: list[SegmentResult]) -> Callable[[ImportSummary], None]:
    """The hook that moves the cursor over the games that are stored, once the run's end is
    recorded."""

    def move_cursor(summary: ImportSummary) -> None:
        if summary.skipped.get(SKIP_NOT_STORED) or (
                summary.stored + sum(summary.skipped.values()) < summary.read):
            return  # the store refused the last batch: the cursor must not pass it
        cursor = advance_cursor(plan.old, plan.segments, results, started_ms=plan.started_ms,
                                floor_ms=job.floor_ms)
        if cursor is not None and cursor != plan.old:
            store.ensure_player(job.user.id, job.user.username)
            save_cursor(store, job.user.id, plan.perf_filter, cursor)

    return move_cursor


def _download(fetcher: GameFetcher, segments: list[Segment], feed: _Feed,
              results: list[SegmentResult]) -> tuple[RunStatus, str | None]:
    """Download the segments in turn into ``feed``, each one's result in ``results``;
    ``(status, message)``: ``partial`` from the first that stops unfinished."""
    try:
        for seg in segments:
            res = fetcher.records(seg, feed.game, feed.skip)
            results.append(res)
            if not res.complete:
                return "partial", res.message
    except BaseException:
        results.append(fetcher.result)  # how far the segment got, for the cursor
        raise
    return "complete", None


def run_import(job: UserImport, *, store: Store, progress: Progress | None = None,
               refresh_fide: bool = True, history_if_new: bool = False) -> ImportSummary:
    """Run a connected import into ``store``; see the module docstring.

    ``refresh_fide=False``: a linked FIDE id is not refreshed (``tracker sync`` refreshes it
    once a UTC day, see :func:`tracker.importing.real_fide.refresh_due`; ``tracker import`` always).
    ``history_if_new`` (``tracker sync``): the rating history (token only) is fetched only
    when the run received games or none is stored for the player: Lichess's history moves
    only when a rated game ends, and such a game is one this run receives.

    Returns the :class:`ImportSummary`: ``complete``, or ``partial`` with a message saying why
    and that a new run resumes. Its warnings name games that could not be read and a rating
    history that could not be stored.
    """
    plan = _plan(job, store)
    target = job.user.username + (f" [{plan.perf_filter}]" if plan.perf_filter else "")
    recorder = ImportRecorder(store, "api", target, player=job.user.id)
    fetcher = GameFetcher(job.client, job.username, retry_wait=job.retry_wait,
                          max_retries=job.max_retries)
    feed = _Feed(recorder, progress, plan.total, job.user.id)
    results: list[SegmentResult] = []
    recorder.on_finish(_cursor_mover(store, job, plan, results))
    with recorder:
        feed.report(force=True)
        status, message = _download(fetcher, plan.segments, feed, results)
        feed.report(force=True)
        if status == "partial":
            message = f"{message} ({recorder.read} games read and kept)"
        else:  # complete: the rating history (with a token) and a linked FIDE id
            if job.with_token and (not history_if_new or recorder.read > 0
                                   or not has_rating_history(store, job.user.id)):
                message = _store_rating_history(store, job.client, job.user, feed.warnings)
            if refresh_fide:
                _refresh_fide(store, job, feed.warnings)
        waits = job.client.waits
        if waits:  # the summary says it happened (the bar said it while waiting)
            feed.warnings.append(
                f"Lichess asked to wait {len(waits)} time{'s' * (len(waits) != 1)} (HTTP 429, "
                f"too many requests): {sum(waits):.0f} s waited in all")
        summary = recorder.finish(status, message)
    summary.warnings = feed.warnings
    return summary


def _refresh_fide(store: Store, job: UserImport, warnings: list[str]) -> None:
    """Refresh the player's linked FIDE profile and lists (none linked: nothing, no request)
    on the import's session; any failure is one warning line, never a failed import (its
    games are stored already)."""
    try:
        real_fide.refresh_player(store, job.user.id, base_url=job.client.base,
                                 session_factory=lambda: job.client.session)
    except TrackerError as exc:
        warnings.append(f"FIDE rating not refreshed: {exc}")
    except Exception as exc:  # a store or HTTP failure nothing above foresaw: still one line
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        warnings.append(f"FIDE rating not refreshed: {type(exc).__name__}"
                        + (f": {first}" if first else ""))


def _expected_games(store: Store, user: LichessUser, perfs: Sequence[str]) -> int | None:
    """Lichess's count of the player's games (in ``perfs``) minus those already stored."""
    count = user.games(perfs)
    if count is None:
        return None
    stored = sum(p.games for p in player_perfs(store, user.id) if not perfs or p.perf in perfs)
    return max(count - stored, 0)


def _store_rating_history(store: Store, client: LichessClient, user: LichessUser,
                          warnings: list[str]) -> str | None:
    """Fetch and store the rating history (token only); a failure is a warning, not an error."""
    try:
        data = client.rating_history(user.id)
    except LichessError as exc:
        warnings.append(f"rating history not stored: {exc}")
        return None
    series = parse_rating_history(data, errors=warnings)
    if not series:
        return None
    store.ensure_player(user.id, user.username)
    points = replace_rating_history(store, user.id, series)
    return f"rating history stored: {len(series)} perfs, {points} days"
