"""The game stream of a Lichess import: a player's games, segment by segment, with resume.

A download (:class:`~tracker.sources.lichess.sync.Segment`) comes newest first; this module
turns it into :class:`~tracker.core.records.GameRecord` values and survives what a long stream
meets:

- **HTTP 429**: wait :data:`~tracker.sources.lichess.client.RETRY_WAIT_429_S` (a full minute,
  as Lichess asks), then continue where the stream stopped; a second 429 in a row stops the
  segment, unfinished.
- **A broken stream** (connection cut, read timeout, a truncated line): every complete game is
  kept, the download resumes with ``until`` just past the oldest game received (ids
  deduplicated); after :data:`MAX_RETRIES` attempts in a row that bring no new game, the
  segment stops unfinished and says so.
- **A line that is no game** (not JSON, or over the 1 MB cap on one game): skipped and
  counted once per run, whatever the resumes; the download goes on past it.

It reads and writes nothing else: the import runner (:mod:`tracker.importing.lichess`) stores
the records and decides what an unfinished segment means for the run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, Final

import berserk.exceptions
import requests

from tracker.core.records import GameRecord
from tracker.core.utc import datetime_to_ms
from tracker.sources.files import SKIP_INVALID, SKIP_UNREADABLE
from tracker.sources.lichess.client import BadLine, LichessClient, failure_reason
from tracker.sources.lichess.sync import Segment, SegmentResult
from tracker.sources.ndjson import InvalidValue, RecordError, record_from_json

LOG = logging.getLogger(__name__)

#: Seconds before resuming a broken stream; doubled on each attempt in a row, up to
#: :data:`RETRY_WAIT_MAX_S`.
RETRY_WAIT_S: Final = 2.0
RETRY_WAIT_MAX_S: Final = 30.0
#: Attempts in a row that bring no new game before a download stops unfinished.
MAX_RETRIES: Final = 5
#: Statuses of games still being played (exported only with ``ongoing=true``).
ONGOING_STATUSES: Final = frozenset({"created", "started"})

SKIP_ONGOING: Final = "still being played (imported when it ends)"


def game_time_ms(value: Any) -> int | None:
    """A game's ``createdAt``/``lastMoveAt`` as berserk gives it (aware datetime) or as JSON
    gives it (ms) → ms; exact (no float round trip)."""
    if isinstance(value, datetime):
        return datetime_to_ms(value if value.tzinfo else value.replace(tzinfo=UTC))
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def restore_ms(obj: dict[str, Any]) -> dict[str, Any]:
    """berserk turned ``createdAt``/``lastMoveAt`` into datetimes: back to the exact integer
    ms of the export, so the raw JSON stored is the line Lichess sent."""
    for k in ("createdAt", "lastMoveAt"):
        v = obj.get(k)
        if isinstance(v, datetime):
            obj[k] = game_time_ms(v)
    return obj


class GameFetcher:
    """Streams a player's games segment by segment, surviving 429s and broken streams.

    Game ids are remembered across the segments of a run, so a resumed download or an
    overlapping window never hands the same game over twice.
    """

    def __init__(self, client: LichessClient, username: str, *,
                 retry_wait: float = RETRY_WAIT_S, max_retries: int = MAX_RETRIES) -> None:
        self.client = client
        self.username = username
        self.retry_wait = retry_wait
        self.max_retries = max_retries
        self.seen: set[str] = set()
        self.ongoing_seen: set[str | None] = set()
        self.bad_seen: set[bytes] = set()  # lines that are no game, counted once per run
        self.result = SegmentResult()

    def _open(self, seg: Segment, until: int | None) -> Iterator[dict[str, Any] | BadLine]:
        return self.client.export_games(self.username, since=seg.since_ms, until=until,
                                        perf_type=seg.perf_type, ongoing=seg.ongoing)

    def records(self, seg: Segment, on_record: Callable[[GameRecord], None],
                on_skip: Callable[[str, str | None], None]) -> SegmentResult:
        """Download ``seg`` as records: ``on_record`` gets each finished game once.

        ``on_skip(reason, message)`` is told of each game not turned into a record: one still
        being played (:data:`SKIP_ONGOING`, once per game), one that cannot be read
        (:data:`~tracker.sources.files.SKIP_UNREADABLE`, with a message), one with a value of
        the wrong type or out of range (:data:`~tracker.sources.files.SKIP_INVALID`), a line
        that is no game (:class:`~tracker.sources.lichess.client.BadLine`'s reason). See
        :meth:`stream`.
        """

        def on_game(obj: dict[str, Any]) -> None:
            try:
                record = record_from_json(restore_ms(obj), source="api")
            except RecordError as exc:
                reason = SKIP_INVALID if isinstance(exc, InvalidValue) else SKIP_UNREADABLE
                on_skip(reason, f"game {obj.get('id')!r}: {exc}")
            else:
                on_record(record)

        return self.stream(seg, on_game, lambda _obj: on_skip(SKIP_ONGOING, None),
                           lambda bad: on_skip(bad.reason, bad.message))

    def stream(self, seg: Segment, on_game: Callable[[dict[str, Any]], None],
               on_ongoing: Callable[[dict[str, Any]], None] | None = None,
               on_bad: Callable[[BadLine], None] | None = None) -> SegmentResult:
        """Download ``seg``; ``on_game`` gets each finished game once (the JSON object),
        ``on_ongoing`` each game still being played, once, ``on_bad`` each line that is no
        game, once per run.

        Returns when the stream ended (``complete``) or the download must stop (``message``).
        Raises UnknownUserError, TokenError or LichessError for answers that retrying cannot
        fix.
        """
        res = self.result = SegmentResult()
        key = "lastMoveAt" if seg.by_last_move else "createdAt"
        until = seg.until_ms
        failures = 0  # attempts in a row that brought no new game
        in_a_row_429 = 0
        while True:
            failure, received, got_new = self._read(self._open(seg, until), key, res,
                                                    on_game, on_ongoing, on_bad)
            if failure is None:
                res.complete = True
                return res
            if received:
                in_a_row_429 = 0
            if failure == "429":
                in_a_row_429 += 1
                if in_a_row_429 >= 2:
                    res.message = ("Lichess answered 429 (too many requests) twice in a row; "
                                   "run the import again in a few minutes to resume")
                    return res
                wait = self.client.asked_to_wait("resuming the download")
            else:
                in_a_row_429 = 0
                failures = 1 if got_new else failures + 1
                if failures > self.max_retries:
                    res.message = (f"the download broke {failures} times in a row ({failure}); "
                                   "run the import again to resume")
                    return res
                wait = min(self.retry_wait * 2 ** (failures - 1), RETRY_WAIT_MAX_S)
                LOG.info("stream broke (%s): resuming in %.1f s", failure, wait)
            self.client.sleep(wait)
            until = _resumed_until(res, seg, until)

    def _read(self, games: Iterator[dict[str, Any] | BadLine], key: str, res: SegmentResult,
              on_game: Callable[[dict[str, Any]], None],
              on_ongoing: Callable[[dict[str, Any]], None] | None,
              on_bad: Callable[[BadLine], None] | None) -> tuple[str | None, bool, bool]:
        """Read one download to its end or its break: ``(why it broke, None when it ended;
        anything received; a new game received)``."""
        received = got_new = False
        while True:
            try:
                obj = next(games)
            except StopIteration:
                return None, received, got_new
            except berserk.exceptions.ResponseError as exc:
                return self._failure(exc), received, got_new
            except (berserk.exceptions.ApiError, requests.RequestException, ValueError) as exc:
                return failure_reason(exc), received, got_new
            received = True
            if isinstance(obj, BadLine):
                if obj.key not in self.bad_seen:  # counted once, whatever the resumes
                    self.bad_seen.add(obj.key)
                    if on_bad is not None:
                        on_bad(obj)
                continue
            got_new |= self._take(obj, key, res, on_game, on_ongoing)

    def _failure(self, exc: berserk.exceptions.ResponseError) -> str:
        code = exc.status_code
        exc.response.close()  # give the connection back before the next attempt
        if code == 429:
            return "429"
        if code >= 500:
            return f"HTTP {code}"
        raise self.client.error(exc, self.username, "the games") from None

    def _take(self, obj: dict[str, Any], key: str, res: SegmentResult,
              on_game: Callable[[dict[str, Any]], None],
              on_ongoing: Callable[[dict[str, Any]], None] | None) -> bool:
        gid = obj.get("id")
        t = game_time_ms(obj.get(key))
        if t is None:
            t = game_time_ms(obj.get("createdAt"))
        if t is not None and (res.oldest_ms is None or t < res.oldest_ms):
            res.oldest_ms = t
        if obj.get("status") in ONGOING_STATUSES:
            created = game_time_ms(obj.get("createdAt"))
            if obj.get("speed") != "correspondence" and created is not None and (
                res.oldest_ongoing_ms is None or created < res.oldest_ongoing_ms
            ):
                res.oldest_ongoing_ms = created
            if gid not in self.ongoing_seen:
                self.ongoing_seen.add(gid)
                if on_ongoing is not None:
                    on_ongoing(obj)
            return False
        if gid in self.seen:
            return False
        if isinstance(gid, str):
            self.seen.add(gid)
        if t is not None and (res.newest_ms is None or t > res.newest_ms):
            res.newest_ms = t
        res.games += 1
        on_game(obj)
        return True


def _resumed_until(res: SegmentResult, seg: Segment, until: int | None) -> int | None:
    """The ``until`` of the download that resumes a broken one: just above the oldest game
    received (``until`` is exclusive: +1 asks again for that game, so a game sharing its
    millisecond is not lost; the id check drops the repeat)."""
    if res.oldest_ms is None:
        return until
    resume = res.oldest_ms + 1
    return resume if seg.until_ms is None else min(resume, seg.until_ms)
