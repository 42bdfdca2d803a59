"""The Lichess API fetcher: ``tracker import USERNAME`` on berserk, robust, incremental, resumable.

berserk gives the endpoints; this module adds what it lacks (spec ``LICHESS.md``):

- **A User-Agent of our own** on every request (:data:`tracker.config.USER_AGENT`): Lichess
  answers 404 to ``python-requests``/``python-urllib3``, which berserk sends, and
  ``berserk.TokenSession`` drops the session's default headers, so it is set on both sessions.
- **Timeouts** ``(connect, read)`` on every request (:class:`LichessSession`).
- **HTTP 429**: wait :data:`RETRY_WAIT_429_S` (a full minute, as Lichess asks), then continue
  where the stream stopped; a second 429 in a row stops the import as ``partial``.
- **A broken stream** (connection cut, read timeout, a truncated line): every complete game is
  kept, the download resumes with ``until`` just past the oldest game received (newest-first
  order, ids deduplicated); after :data:`MAX_RETRIES` attempts in a row that bring no new game,
  the import stops as ``partial`` and says so. A partial import is never recorded as complete.
- **Unknown or closed accounts**: :class:`UnknownUserError` (exit code 2) before anything is
  written.
- **Incremental sync** with a :class:`~tracker.store.sync.Cursor` per player and perf filter
  (see :func:`plan_sync` for what is asked and :func:`advance_cursor` for what is remembered).
- **Rating history** (``/api/user/{u}/rating-history``, months 0-based) with a token.

The token only ever travels as the ``Authorization`` header: it is never printed, logged,
stored, or put in a message.

Time windows are integer milliseconds since the epoch, UTC (:func:`epoch_ms`,
:func:`month_window`). Lichess filters ``since``/``until`` on ``createdAt`` — on
``lastMoveAt``, for window *and* order, as soon as ``perfType`` (or ``rated``, ``color``,
``analysed``) is given, because it then answers from its search index. A sync with a perf
filter therefore counts in ``lastMoveAt``, one without in ``createdAt``; each has its cursor.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from typing import Any, Final

import berserk
import berserk.exceptions
import requests

from tracker import config
from tracker.config import USER_AGENT
from tracker.errors import Terminated, TrackerError
from tracker.importing import SKIP_UNREADABLE, ImportRecorder, ImportSummary, Progress
from tracker.records import PERFS
from tracker.sources.ndjson import RecordError, record_from_json
from tracker.store.db import Store
from tracker.store.queries import player_perfs
from tracker.store.sync import (
    Cursor,
    load_cursor,
    newest_game_ms,
    replace_rating_history,
    save_cursor,
)
from tracker.utc import MIN_EPOCH_MS, datetime_to_ms, now_ms

LOG = logging.getLogger(__name__)

#: Seconds to wait after an HTTP 429: Lichess asks for "a full minute" after any 429.
RETRY_WAIT_429_S: Final = 60.0
#: Seconds before resuming a broken stream; doubled on each attempt in a row, up to
#: :data:`RETRY_WAIT_MAX_S`.
RETRY_WAIT_S: Final = 2.0
RETRY_WAIT_MAX_S: Final = 30.0
#: Attempts in a row that bring no new game before an import stops as partial.
MAX_RETRIES: Final = 5
#: (connect, read) seconds. Lichess streams a game every 15-50 ms; 30 s of silence is a dead
#: stream, not a slow one.
DEFAULT_TIMEOUT: Final = (5.0, 30.0)

DAY_MS: Final = 86_400_000
#: Incremental syncs with a perf filter count in ``lastMoveAt`` on Lichess's search index,
#: which is fed a little after a game ends: re-read this much before the newest stored game.
SEARCH_INDEX_LAG_MS: Final = 10 * 60 * 1000
#: The correspondence pass re-reads games that ended this long before the last sync (the
#: search index's lag, and clocks that disagree), deduplicated by id.
CORRESPONDENCE_OVERLAP_MS: Final = DAY_MS
#: Rating-history series names whose perf key is not the camel-cased name.
_HISTORY_NAMES: Final = {"puzzles": "puzzle"}
#: Lichess usernames: 2-30 letters, digits, ``_`` or ``-``.
_USERNAME: Final = re.compile(r"^[A-Za-z0-9_-]{2,30}$")
#: Statuses of games still being played (exported only with ``ongoing=true``).
ONGOING_STATUSES: Final = frozenset({"created", "started"})

SKIP_ONGOING: Final = "still being played (imported when it ends)"


# -- errors -----------------------------------------------------------------------------------


class LichessError(TrackerError):
    """Lichess cannot be reached or refused a request (one line, never the token)."""


class UnknownUserError(LichessError, LookupError):
    """No such Lichess account, or it is closed: nothing is written."""

    exit_code = 2


class TokenError(LichessError):
    """The API token cannot be read, or Lichess refuses it."""

    exit_code = 2


class ImportArgumentError(TrackerError, ValueError):
    """A bad username, perf, date or time window given to the importer."""

    exit_code = 2


# -- time windows -----------------------------------------------------------------------------


def epoch_ms(value: int | float | str | date | datetime, name: str = "time") -> int:
    """Any accepted time → integer milliseconds since the epoch, UTC (what Lichess wants).

    Accepts integer ms (a float only when integral), an aware datetime, a date or a
    ``YYYY-MM-DD`` string (UTC midnight). Refuses a number below 10**11: it is seconds, and
    Lichess would silently answer for January 1970. Refuses a naive datetime (its zone would
    be the host's).

    >>> epoch_ms("2024-01-01"), epoch_ms(1704067200000.0)
    (1704067200000, 1704067200000)
    """
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            value = int(text)
        else:
            try:
                value = date.fromisoformat(text)
            except ValueError:
                raise ImportArgumentError(
                    f"{name} must be a date YYYY-MM-DD, got {value!r}"
                ) from None
    if isinstance(value, datetime):
        try:
            return datetime_to_ms(value)
        except ValueError:
            raise ImportArgumentError(f"{name}: naive datetime, give an aware one (UTC)") from None
    if isinstance(value, date):
        return datetime_to_ms(datetime(value.year, value.month, value.day, tzinfo=UTC))
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ImportArgumentError(f"{name} must be milliseconds or a date, got {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise ImportArgumentError(f"{name} must be whole milliseconds, got {value!r}")
        value = int(value)
    if abs(value) < MIN_EPOCH_MS:
        raise ImportArgumentError(
            f"{name} {value} looks like seconds: Lichess wants milliseconds since the epoch"
        )
    return value


def month_window(period: str) -> tuple[int, int]:
    """The ``since`` (inclusive) and ``until`` (exclusive) of a UTC calendar month, in ms.

    >>> month_window("2024-01")
    (1704067200000, 1706745600000)
    """
    m = re.fullmatch(r"(\d{4})-(\d{2})", period.strip())
    if m is None or not 1 <= int(m.group(2)) <= 12:
        raise ImportArgumentError(f"a month is YYYY-MM, got {period!r}")
    year, month = int(m.group(1)), int(m.group(2))
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return datetime_to_ms(start), datetime_to_ms(end)


def _ms(value: Any) -> int | None:
    """A game's ``createdAt``/``lastMoveAt`` as berserk gives it (aware datetime) or as JSON
    gives it (ms) → ms; exact (no float round trip)."""
    if isinstance(value, datetime):
        return datetime_to_ms(value if value.tzinfo else value.replace(tzinfo=UTC))
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


# -- names ------------------------------------------------------------------------------------


def check_username(username: str) -> str:
    """``username`` stripped, if it can be a Lichess username; else ImportArgumentError."""
    name = (username or "").strip()
    if not _USERNAME.fullmatch(name):
        raise ImportArgumentError(
            f"{username!r} is not a Lichess username (2-30 letters, digits, _ or -)"
        )
    return name


def parse_perfs(perf: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"blitz,rapid"`` (or a list) → Lichess perf keys, any case, duplicates dropped."""
    if not perf:
        return ()
    items = perf.split(",") if isinstance(perf, str) else [p for x in perf for p in x.split(",")]
    known = {p.lower(): p for p in PERFS}
    out: list[str] = []
    for item in (i.strip() for i in items):
        if not item:
            continue
        key = known.get(item.lower())
        if key is None:
            raise ImportArgumentError(f"unknown perf {item!r}: one of {', '.join(PERFS)}")
        if key not in out:
            out.append(key)
    return tuple(out)


# -- rating history ---------------------------------------------------------------------------


def perf_key(name: str) -> str:
    """A rating-history series name → its perf key: ``"King of the Hill"`` → ``kingOfTheHill``,
    ``"Three-Check"`` → ``threeCheck``, ``"UltraBullet"`` → ``ultraBullet``."""
    words = [w for w in re.split(r"[\s\-]+", name.strip()) if w]
    if not words:
        return name
    key = words[0][0].lower() + words[0][1:] + "".join(w[0].upper() + w[1:] for w in words[1:])
    return _HISTORY_NAMES.get(key.lower(), key)


def parse_rating_history(
    data: Iterable[Mapping[str, Any]], errors: list[str] | None = None
) -> dict[str, list[tuple[date, int]]]:
    """``/api/user/{u}/rating-history`` → ``{perf: [(UTC day, rating), …]}``, oldest first.

    Lichess's months are **0-based**: ``[2024, 0, 31, 1500]`` is 31 January 2024. A perf with
    no points is no series (no error). A point that is not a real date is left out and
    described in ``errors`` when a list is given.

    >>> parse_rating_history([{"name": "Blitz", "points": [[2024, 11, 31, 1530]]}])
    {'blitz': [(datetime.date(2024, 12, 31), 1530)]}
    """
    out: dict[str, list[tuple[date, int]]] = {}
    for entry in data:
        name = str(entry.get("name") or "")
        points: list[tuple[date, int]] = []
        for point in entry.get("points") or ():
            try:
                year, month0, day, rating = point
                points.append((date(int(year), int(month0) + 1, int(day)), int(rating)))
            except (TypeError, ValueError):
                if errors is not None:
                    errors.append(f"rating history {name}: not a day and a rating: {point!r}")
        if points:
            out[perf_key(name)] = sorted(points)
    return out


# -- HTTP -------------------------------------------------------------------------------------


class _DefaultTimeout:
    """Gives every request of a :class:`requests.Session` a default ``(connect, read)`` timeout
    (berserk passes none, and requests' default is to wait forever)."""

    timeout: tuple[float, float] = DEFAULT_TIMEOUT

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> requests.Response:
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self.timeout
        return super().request(method, url, *args, **kwargs)  # type: ignore[misc]


class LichessSession(_DefaultTimeout, requests.Session):
    """An anonymous session: our User-Agent and default timeouts."""

    def __init__(self, timeout: tuple[float, float] = DEFAULT_TIMEOUT,
                 user_agent: str = USER_AGENT) -> None:
        super().__init__()
        self.timeout = timeout
        self.headers["User-Agent"] = user_agent


class LichessTokenSession(_DefaultTimeout, berserk.TokenSession):
    """berserk's token session with our User-Agent and default timeouts.

    ``TokenSession`` replaces the default headers by the Authorization header alone (urllib3
    would then send ``python-urllib3/x``, which Lichess answers with 404): the defaults and our
    User-Agent are put back.
    """

    def __init__(self, token: str, timeout: tuple[float, float] = DEFAULT_TIMEOUT,
                 user_agent: str = USER_AGENT) -> None:
        super().__init__(token)
        self.timeout = timeout
        headers = requests.utils.default_headers()
        headers.update(self.headers)
        headers["User-Agent"] = user_agent
        self.headers = headers

    def __repr__(self) -> str:
        return "<LichessTokenSession>"  # never the token


def make_session(token: str | None = None,
                 timeout: tuple[float, float] = DEFAULT_TIMEOUT) -> requests.Session:
    """The session for Lichess: with the token when one is given."""
    if token:
        return LichessTokenSession(token, timeout)
    return LichessSession(timeout)


def _reason(exc: BaseException) -> str:
    """A few words on why a request or a stream failed (never a URL with secrets, never a
    traceback)."""
    if isinstance(exc, berserk.exceptions.ApiError) and not isinstance(
        exc, berserk.exceptions.ResponseError
    ):
        exc = exc.error  # berserk wraps the requests exception
    if isinstance(exc, ValueError):  # JSONDecodeError, UnicodeDecodeError
        return "a truncated line"
    text = str(exc).lower()
    if isinstance(exc, requests.Timeout) or "timed out" in text:
        return "read timed out" if "read" in text or "connect" not in text else "connect timed out"
    if isinstance(exc, requests.exceptions.ChunkedEncodingError) or "ended prematurely" in text:
        return "connection cut"
    if "refused" in text:
        return "connection refused"
    if isinstance(exc, requests.ConnectionError):
        return "connection error"
    return type(exc).__name__


@dataclass(frozen=True, slots=True)
class LichessUser:
    """What ``GET /api/user/{u}`` says: the id, the spelling, game counts (for progress)."""

    id: str
    username: str
    games_all: int | None
    perf_games: dict[str, int] = field(default_factory=dict)

    def games(self, perfs: Sequence[str] = ()) -> int | None:
        """Games in ``perfs`` (all games without), as Lichess counts them."""
        if not perfs:
            return self.games_all
        return sum(self.perf_games.get(p, 0) for p in perfs)


class LichessClient:
    """The three endpoints the importer uses, with 429 handling and one-line errors.

    ``sleep`` is injectable for tests; ``retry_wait_429`` is the wait after a 429.
    """

    def __init__(self, base: str, session: requests.Session, *,
                 retry_wait_429: float = RETRY_WAIT_429_S,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.base = base
        self.client = berserk.Client(session=session, base_url=base)
        self.retry_wait_429 = retry_wait_429
        self.sleep = sleep

    def _error(self, exc: berserk.exceptions.ResponseError, username: str,
               what: str) -> LichessError:
        code = exc.status_code
        if code == 404:
            return UnknownUserError(
                f"no Lichess account {username!r} at {self.base} (unknown or closed)"
            )
        if code in (401, 403):
            return TokenError(f"Lichess refused the API token (HTTP {code}): check "
                              "$LICHESS_TOKEN or --token-file")
        if code == 429:
            return LichessError(f"Lichess answered 429 (too many requests) twice in a row for "
                                f"{what}: try again in a few minutes")
        return LichessError(f"Lichess answered HTTP {code} for {what}")

    def _call(self, fn: Callable[[], Any], username: str, what: str) -> Any:
        for attempt in (1, 2):
            try:
                return fn()
            except berserk.exceptions.ResponseError as exc:
                if exc.status_code == 429 and attempt == 1:
                    LOG.info("HTTP 429 on %s: waiting %.0f s", what, self.retry_wait_429)
                    self.sleep(self.retry_wait_429)
                    continue
                raise self._error(exc, username, what) from None
            except ValueError:
                raise LichessError(f"Lichess sent an unreadable answer for {what}") from None
            except (berserk.exceptions.ApiError, requests.RequestException) as exc:
                raise LichessError(f"cannot reach {self.base} ({_reason(exc)})") from None
        raise AssertionError("unreachable")

    def user(self, username: str) -> LichessUser:
        """The account; UnknownUserError for an unknown or closed one."""
        data = self._call(lambda: self.client.users.get_public_data(username), username,
                          "the account")
        if not isinstance(data, Mapping) or not data.get("id"):
            raise LichessError(f"Lichess sent no account data for {username!r}")
        if data.get("disabled") or data.get("closed"):
            raise UnknownUserError(f"the Lichess account {username!r} is closed")
        count = data.get("count") or {}
        perfs = data.get("perfs") or {}
        return LichessUser(
            id=str(data["id"]).lower(),
            username=str(data.get("username") or username),
            games_all=count.get("all") if isinstance(count.get("all"), int) else None,
            perf_games={k: int(v.get("games") or 0) for k, v in perfs.items()
                        if isinstance(v, Mapping)},
        )

    def rating_history(self, username: str) -> list[Mapping[str, Any]]:
        data = self._call(lambda: self.client.users.get_rating_history(username), username,
                          "the rating history")
        return list(data or [])


# -- the game stream --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Segment:
    """One download of a sync: ``[since_ms, until_ms)`` (``None``: open), newest first.

    ``kind``: ``all`` (first or full sync), ``gap`` (what an unfinished run left), ``new``
    (games since the cursor), ``correspondence`` (games of that perf that ended since the last
    sync). ``stored_to_ms``: once the earlier segments are done, every game up to this time is
    stored (the base a ``new`` segment extends). With ``perf_type`` the times are
    ``lastMoveAt`` (Lichess's search index), else ``createdAt``.
    """

    kind: str
    since_ms: int | None
    until_ms: int | None
    perf_type: str | None = None
    ongoing: bool = False
    stored_to_ms: int | None = None

    @property
    def by_last_move(self) -> bool:
        return self.perf_type is not None

    def params(self) -> dict[str, Any]:
        return {k: v for k, v in (("since", self.since_ms), ("until", self.until_ms),
                                  ("perfType", self.perf_type),
                                  ("ongoing", self.ongoing or None)) if v is not None}


@dataclass(slots=True)
class SegmentResult:
    """How a segment went. Times in the segment's time key (ms); ``oldest_ongoing_ms`` is the
    ``createdAt`` of the oldest real-time game still being played."""

    complete: bool = False
    message: str | None = None
    games: int = 0
    newest_ms: int | None = None
    oldest_ms: int | None = None
    oldest_ongoing_ms: int | None = None


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
        self.ongoing_seen: set[str] = set()
        self.result = SegmentResult()

    def _open(self, seg: Segment, until: int | None) -> Iterator[dict[str, Any]]:
        LOG.info("GET /api/games/user/%s since=%s until=%s perfType=%s", self.username,
                 seg.since_ms, until, seg.perf_type)
        return iter(self.client.client.games.export_by_player(
            self.username, since=seg.since_ms, until=until, perf_type=seg.perf_type,
            ongoing=True if seg.ongoing else None,
        ))

    def stream(self, seg: Segment, on_game: Callable[[dict[str, Any]], None],
               on_ongoing: Callable[[dict[str, Any]], None] | None = None) -> SegmentResult:
        """Download ``seg``; ``on_game`` gets each finished game once (berserk's dict).

        Returns when the stream ended (``complete``) or the import must stop (``message``).
        Raises UnknownUserError, TokenError or LichessError for answers that retrying cannot
        fix.
        """
        res = self.result = SegmentResult()
        key = "lastMoveAt" if seg.by_last_move else "createdAt"
        until = seg.until_ms
        failures = 0  # attempts in a row that brought no new game
        in_a_row_429 = 0
        while True:
            games = self._open(seg, until)
            got_new = False
            while True:
                try:
                    obj = next(games)
                except StopIteration:
                    res.complete = True
                    return res
                except berserk.exceptions.ResponseError as exc:
                    failure = self._failure(exc)
                    break
                except (berserk.exceptions.ApiError, requests.RequestException,
                        ValueError) as exc:
                    failure = _reason(exc)
                    break
                in_a_row_429 = 0
                got_new |= self._take(obj, key, seg, res, on_game, on_ongoing)
            if failure == "429":
                in_a_row_429 += 1
                if in_a_row_429 >= 2:
                    res.message = ("Lichess answered 429 (too many requests) twice in a row; "
                                   "run the import again in a few minutes to resume")
                    return res
                LOG.info("HTTP 429: waiting %.0f s before resuming", self.client.retry_wait_429)
                self.client.sleep(self.client.retry_wait_429)
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
            if res.oldest_ms is not None:
                # ``until`` is exclusive: +1 asks again for the oldest game received, so a game
                # sharing its millisecond is not lost (the id check drops the repeat).
                resume = res.oldest_ms + 1
                until = resume if seg.until_ms is None else min(resume, seg.until_ms)

    def _failure(self, exc: berserk.exceptions.ResponseError) -> str:
        code = exc.status_code
        exc.response.close()  # give the connection back before the next attempt
        if code == 429:
            return "429"
        if code >= 500:
            return f"HTTP {code}"
        raise self.client._error(exc, self.username, "the games") from None

    def _take(self, obj: dict[str, Any], key: str, seg: Segment, res: SegmentResult,
              on_game: Callable[[dict[str, Any]], None],
              on_ongoing: Callable[[dict[str, Any]], None] | None) -> bool:
        gid = obj.get("id")
        t = _ms(obj.get(key))
        if t is None:
            t = _ms(obj.get("createdAt"))
        if t is not None and (res.oldest_ms is None or t < res.oldest_ms):
            res.oldest_ms = t
        if obj.get("status") in ONGOING_STATUSES:
            created = _ms(obj.get("createdAt"))
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


# -- the cursor ---------------------------------------------------------------------------------


def _after(stored_to: int | None, floor: int | None, by_last_move: bool) -> int | None:
    """The first time still to ask for when every game up to ``stored_to`` is stored."""
    if stored_to is None:
        return floor
    start = stored_to - SEARCH_INDEX_LAG_MS if by_last_move else stored_to + 1
    return start if floor is None else max(start, floor)


def plan_sync(cursor: Cursor | None, *, perfs: Sequence[str] = (), floor_ms: int | None = None,
              full: bool = False, top_ms: int | None = None) -> list[Segment]:
    """The downloads of one sync, in order.

    - No cursor (first sync) or ``full``: everything since ``floor_ms`` (``--since``).
    - Else, first the gap an unfinished run left (``(newest, resume_until]``), then the games
      after the newest stored one (``top_ms`` after a gap, the cursor's ``newest`` otherwise).
      In ``createdAt`` the window starts 1 ms after it: the cursor already stands before any
      game that was still being played (see :func:`advance_cursor`), so nothing finished since
      can be older. In ``lastMoveAt`` it starts :data:`SEARCH_INDEX_LAG_MS` before it.
    - Then, without a perf filter, the **correspondence pass**: correspondence games that ended
      since the last sync (``perfType=correspondence``, hence ``lastMoveAt``), whatever their
      ``createdAt``. A correspondence game can run for months: waiting for it with the
      ``createdAt`` window would re-download every game since it started on every sync, while
      this pass costs one request that usually returns nothing.

    ``floor_ms`` bounds every window from below.
    """
    perf_type = ",".join(perfs) or None
    by_last_move = perf_type is not None
    ongoing = not by_last_move  # the search index holds finished games only
    if full or cursor is None:
        return [Segment("all", floor_ms, None, perf_type, ongoing)]
    segments: list[Segment] = []
    stored_to = cursor.newest_ms
    if cursor.resume_until_ms is not None:
        segments.append(Segment("gap", _after(cursor.newest_ms, floor_ms, by_last_move),
                                cursor.resume_until_ms + 1, perf_type, ongoing))
        stored_to = max(top_ms or cursor.resume_until_ms, cursor.resume_until_ms)
    segments.append(Segment("new", _after(stored_to, floor_ms, by_last_move), None, perf_type,
                            ongoing, stored_to_ms=stored_to))
    if not by_last_move and cursor.last_sync_at_ms is not None:
        since = cursor.last_sync_at_ms - CORRESPONDENCE_OVERLAP_MS
        segments.append(Segment("correspondence", since if floor_ms is None else
                                max(since, floor_ms), None, "correspondence", False))
    return segments


def _max(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def advance_cursor(old: Cursor | None, plan: Sequence[Segment],
                   results: Sequence[SegmentResult], *, started_ms: int,
                   floor_ms: int | None = None) -> Cursor | None:
    """The cursor after a sync that ran ``plan`` with ``results`` (shorter when it stopped).

    ``newest_ms``: every game up to this time is stored (``createdAt`` or ``lastMoveAt``, as the
    filter's windows count). It never passes a real-time game that was still being played: it
    stays 1 ms before the oldest one's ``createdAt``, so the game is asked for again once it has
    ended. ``resume_until_ms``: an unfinished run stored the games down to this time but not
    those between ``newest_ms`` and it. ``last_sync_at_ms``: the start of the last sync that
    completed, where the next correspondence pass looks back from.
    """
    cur = old
    for seg, res in zip(plan, results, strict=False):
        last_sync = cur.last_sync_at_ms if cur else None
        if seg.kind in ("all", "new"):
            base = seg.stored_to_ms if seg.kind == "new" else (
                floor_ms - 1 if floor_ms is not None else None)
            if res.complete:
                newest = _max(base, res.newest_ms)
                if res.oldest_ongoing_ms is not None:
                    limit = res.oldest_ongoing_ms - 1
                    newest = limit if newest is None else min(newest, limit)
                cur = Cursor(newest, None, last_sync)
            elif res.oldest_ms is not None:
                cur = Cursor(base, res.oldest_ms, last_sync)
            elif seg.kind == "new":
                cur = Cursor(base, None, last_sync)
        elif seg.kind == "gap" and cur is not None:
            if res.complete:
                cur = Cursor(cur.newest_ms, None, last_sync)
            elif res.oldest_ms is not None:
                cur = Cursor(cur.newest_ms, min(res.oldest_ms, cur.resume_until_ms or
                                                res.oldest_ms), last_sync)
    if cur is not None and len(results) == len(plan) and all(r.complete for r in results):
        cur = replace(cur, last_sync_at_ms=started_ms)
    return cur


# -- the import -------------------------------------------------------------------------------


def _restore_ms(obj: dict[str, Any]) -> dict[str, Any]:
    """berserk turned ``createdAt``/``lastMoveAt`` into datetimes: back to the exact integer
    ms of the export, so the raw JSON stored is the line Lichess sent."""
    for k in ("createdAt", "lastMoveAt"):
        v = obj.get(k)
        if isinstance(v, datetime):
            obj[k] = _ms(v)
    return obj


#: Seconds between two progress callbacks (the bar redraws at most this often).
PROGRESS_INTERVAL_S: Final = 0.1


def import_user(
    username: str,
    *,
    store: Store | None = None,
    db: str | None = None,
    perf: str | Sequence[str] | None = None,
    since: int | float | str | date | datetime | None = None,
    full: bool = False,
    base_url: str | None = None,
    token: str | None = None,
    progress: Progress | None = None,
    retry_wait_429: float = RETRY_WAIT_429_S,
    retry_wait: float = RETRY_WAIT_S,
    timeout: tuple[float, float] = DEFAULT_TIMEOUT,
    max_retries: int = MAX_RETRIES,
    session: requests.Session | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ImportSummary:
    """Import a player's games from the Lichess API into the store; see the module docstring.

    ``perf``: perf keys (``"blitz,rapid"``); ``since``: a floor (``YYYY-MM-DD``, a date, an
    aware datetime or integer ms); ``full``: ignore the cursor and read everything again.
    ``progress(games, games, total)``: the total is Lichess's game count (``count.all``, or the
    perfs' counts) minus the games already stored, ``None`` with ``since``.

    The account is checked before the database is opened: an unknown or closed one raises
    UnknownUserError and changes nothing. Returns the :class:`ImportSummary`: ``complete``, or
    ``partial`` with a message saying why and that a new run resumes.
    """
    name = check_username(username)
    perfs = parse_perfs(perf)
    floor = None if since is None else epoch_ms(since, "since")
    base = config.base_url(base_url)
    http = session or make_session(token, timeout)
    client = LichessClient(base, http, retry_wait_429=retry_wait_429, sleep=sleep)
    user = client.user(name)  # before anything is written

    store = store or Store(db)
    started = now_ms()
    perf_filter = ",".join(sorted(perfs))
    old = load_cursor(store, user.id, perf_filter)
    top = newest_game_ms(store, user.id, perfs, by_last_move=bool(perfs))
    plan = plan_sync(old, perfs=perfs, floor_ms=floor, full=full, top_ms=top)
    total = None if floor is not None else (
        user.games(perfs) if full or old is None else _expected_games(store, user, perfs))
    target = user.username + (f" [{perf_filter}]" if perf_filter else "")
    recorder = ImportRecorder(store, "api", target, player=user.id)
    fetcher = GameFetcher(client, name, retry_wait=retry_wait, max_retries=max_retries)
    warnings: list[str] = []
    last_report = 0.0

    def report(force: bool = False) -> None:
        nonlocal last_report
        if progress is None:
            return
        now = time.monotonic()
        if force or now - last_report >= PROGRESS_INTERVAL_S:
            last_report = now
            n = recorder.read
            progress(n, n, None if total is None else max(total, n))

    def on_game(obj: dict[str, Any]) -> None:
        try:
            record = record_from_json(_restore_ms(obj), source="api")
        except RecordError as exc:
            recorder.skip(SKIP_UNREADABLE)
            if len(warnings) < 20:
                warnings.append(f"game {obj.get('id')!r}: {exc}")
        else:
            recorder.add(record)
        report()

    def on_ongoing(_obj: dict[str, Any]) -> None:
        recorder.skip(SKIP_ONGOING)

    results: list[SegmentResult] = []
    status, message = "complete", None
    report(force=True)
    try:
        for seg in plan:
            res = fetcher.stream(seg, on_game, on_ongoing)
            results.append(res)
            if not res.complete:
                status, message = "partial", res.message
                break
    except BaseException as exc:
        results.append(fetcher.result)
        if isinstance(exc, KeyboardInterrupt):
            why = "stopped (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
            status, message = "partial", f"{why}; run the import again to resume"
        else:
            status = "failed"
            message = str(exc) if isinstance(exc, TrackerError) else f"{type(exc).__name__}: {exc}"
        try:
            kept = _finish(store, recorder, user, old, plan, results, started, floor,
                           perf_filter, status, message)
            if isinstance(exc, KeyboardInterrupt):
                exc.summary = kept  # type: ignore[attr-defined]  # for the CLI's last line
        except Exception:  # the store itself failed: the original error is the one to report
            LOG.exception("could not record the end of import run %s", recorder.run_id)
        raise
    report(force=True)
    if status == "complete" and token:
        message = _store_rating_history(store, client, user, warnings)
    elif status == "partial":
        message = f"{message} ({recorder.read} games read and kept)"
    summary = _finish(store, recorder, user, old, plan, results, started, floor, perf_filter,
                      status, message)
    summary.warnings = warnings
    return summary


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


def _finish(store: Store, recorder: ImportRecorder, user: LichessUser, old: Cursor | None,
            plan: Sequence[Segment], results: Sequence[SegmentResult], started: int,
            floor: int | None, perf_filter: str, status: str,
            message: str | None) -> ImportSummary:
    """Record the run's end, then move the cursor (only over games that are stored)."""
    summary = recorder.finish(status, message)
    if summary.stored + sum(summary.skipped.values()) < summary.read:
        return summary  # the store refused the last batch: the cursor must not pass it
    cursor = advance_cursor(old, plan, results, started_ms=started, floor_ms=floor)
    if cursor is not None and cursor != old:
        store.ensure_player(user.id, user.username)
        save_cursor(store, user.id, perf_filter, cursor)
    return summary
