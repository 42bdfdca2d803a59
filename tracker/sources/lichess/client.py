"""The Lichess HTTP client: berserk with our User-Agent, timeouts, 429 handling, one-line errors.

berserk gives the endpoints; this module adds what it lacks (spec ``LICHESS.md``):

- **A User-Agent of our own** on every request (:data:`tracker.core.config.USER_AGENT`): Lichess
  answers 404 to ``python-requests``/``python-urllib3``, which berserk sends, and
  ``berserk.TokenSession`` drops the session's default headers, so it is set on both sessions.
- **Timeouts** ``(connect, read)`` on every request (:class:`LichessSession`).
- **HTTP 429** on a single request: wait :data:`RETRY_WAIT_429_S` (a full minute, as Lichess
  asks) and try once more.
- **Unknown or closed accounts**: :class:`UnknownUserError` (exit code 2).
- **Rating history** (``/api/user/{u}/rating-history``, months 0-based) read into series.
- **The game stream** read by :func:`read_game_stream`, not berserk's line reader: linear in
  a line's length, one game at most 1 MB, and a line that is no game skipped, not the end.

The token only ever travels as the ``Authorization`` header: it is never printed, logged,
stored, or put in a message.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Final

import berserk
import berserk.exceptions
import requests
from requests.structures import CaseInsensitiveDict

from tracker.core.config import USER_AGENT
from tracker.core.errors import TrackerError
from tracker.sources.files import SKIP_TOO_LARGE, SKIP_TRUNCATED, json_loads
from tracker.sources.limits import MAX_NDJSON_GAME_BYTES, OversizedLine, capped_lines

LOG = logging.getLogger(__name__)

#: Seconds to wait after an HTTP 429: Lichess asks for "a full minute" after any 429.
RETRY_WAIT_429_S: Final = 60.0
#: (connect, read) seconds. Lichess streams a game every 15-50 ms; 30 s of silence is a dead
#: stream, not a slow one.
DEFAULT_TIMEOUT: Final = (5.0, 30.0)
#: Rating-history series names whose perf key is not the camel-cased name.
_HISTORY_NAMES: Final = {"puzzles": "puzzle"}


# -- errors -----------------------------------------------------------------------------------


class LichessError(TrackerError):
    """Lichess cannot be reached or refused a request (one line, never the token)."""


class UnknownUserError(LichessError, LookupError):
    """No such Lichess account, or it is closed: nothing is written. Exit code 1, as for a
    player unknown to the database (the README's one rule: a name nothing answers to is
    "nothing done"; a malformed one is a usage error, 2)."""

    exit_code = 1


class TokenError(LichessError):
    """The API token cannot be read, or Lichess refuses it."""

    exit_code = 2


# -- rating history ---------------------------------------------------------------------------


#: What a perf key of the rating history may be (``rating_history.perf`` is 32 wide).
_PERF_KEY: Final = re.compile(r"[A-Za-z0-9]{1,32}")


def series_perf_key(name: str) -> str:
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
        if not points:
            continue
        key = series_perf_key(name)
        if not _PERF_KEY.fullmatch(key):  # the store's column holds a perf key
            if errors is not None:
                errors.append(f"rating history: {name[:40]!r} is not a perf's name: left out")
            continue
        out[key] = sorted(points)
    return out


# -- HTTP -------------------------------------------------------------------------------------


class _TimeoutSession(requests.Session):
    """A :class:`requests.Session` that gives every request a default ``(connect, read)``
    timeout (berserk passes none, and requests' default is to wait forever)."""

    timeout: tuple[float, float] = DEFAULT_TIMEOUT

    def request(self, method: str | bytes, url: str | bytes, *args: Any,
                **kwargs: Any) -> requests.Response:
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self.timeout
        return super().request(method, url, *args, **kwargs)


class LichessSession(_TimeoutSession):
    """An anonymous session: our User-Agent and default timeouts."""

    def __init__(self, timeout: tuple[float, float] = DEFAULT_TIMEOUT,
                 user_agent: str = USER_AGENT) -> None:
        super().__init__()
        self.timeout = timeout
        self.headers["User-Agent"] = user_agent


class LichessTokenSession(_TimeoutSession, berserk.TokenSession):
    """berserk's token session with our User-Agent and default timeouts.

    ``TokenSession`` replaces the default headers by the Authorization header alone (urllib3
    would then send ``python-urllib3/x``, which Lichess answers with 404): the defaults and our
    User-Agent are put back.
    """

    def __init__(self, token: str, timeout: tuple[float, float] = DEFAULT_TIMEOUT,
                 user_agent: str = USER_AGENT) -> None:
        berserk.TokenSession.__init__(self, token)
        self.timeout = timeout
        headers: CaseInsensitiveDict[str | bytes] = CaseInsensitiveDict(
            {**requests.utils.default_headers(), **self.headers, "User-Agent": user_agent})
        self.headers = headers

    def __repr__(self) -> str:
        return "<LichessTokenSession>"  # never the token


def make_session(token: str | None = None,
                 timeout: tuple[float, float] = DEFAULT_TIMEOUT) -> requests.Session:
    """The session for Lichess: with the token when one is given."""
    if token:
        return LichessTokenSession(token, timeout)
    return LichessSession(timeout)


def failure_reason(exc: BaseException) -> str:
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
                 sleep: Callable[[float], None] = time.sleep,
                 on_wait: Callable[[str], None] | None = None) -> None:
        self.base = base
        #: The HTTP session (our User-Agent, timeouts, the token): other Lichess endpoints
        #: (the FIDE lists) go through it too.
        self.session = session
        self.client = berserk.Client(session=session, base_url=base)
        self.retry_wait_429 = retry_wait_429
        self.sleep = sleep
        #: Told one line when Lichess asks to wait (HTTP 429), before the wait: the progress
        #: bar says it instead of sitting at 0 games/s.
        self.on_wait = on_wait
        #: Each wait Lichess asked for, in seconds: the import's summary says they happened.
        self.waits: list[float] = []

    def asked_to_wait(self, what: str) -> float:
        """Lichess answered 429 for ``what``: record the wait, tell ``on_wait`` (else log it)
        and return the seconds to wait (:attr:`retry_wait_429`)."""
        wait = self.retry_wait_429
        self.waits.append(wait)
        line = (f"Lichess asked to wait (HTTP 429, too many requests): {what} again in "
                f"{wait:.0f} s")
        if self.on_wait is not None:
            self.on_wait(line)
        else:
            LOG.info("%s", line)
        return wait

    def error(self, exc: berserk.exceptions.ResponseError, username: str,
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
                    self.sleep(self.asked_to_wait(f"asking for {what}"))
                    continue
                raise self.error(exc, username, what) from None
            except ValueError:
                raise LichessError(f"Lichess sent an unreadable answer for {what}") from None
            except (berserk.exceptions.ApiError, requests.RequestException) as exc:
                raise LichessError(f"cannot reach {self.base} ({failure_reason(exc)})") from None
        raise AssertionError("unreachable")

    def user(self, username: str) -> LichessUser:
        """The account; UnknownUserError for an unknown or closed one."""
        data = self._call(lambda: self.client.users.get_public_data(username), username,
                          "the account")
        if not isinstance(data, Mapping) or not data.get("id"):
            raise LichessError(f"Lichess sent no account data for {username!r}")
        if data.get("disabled") or data.get("closed"):
            raise UnknownUserError(f"the Lichess account {username!r} is closed")
        if str(data["id"]).lower() != username.lower():  # ids are lowercase usernames
            raise LichessError(f"Lichess answered for another account than {username!r}")
        spelled = data.get("username")
        count = data.get("count") or {}
        perfs = data.get("perfs") or {}
        return LichessUser(
            id=username.lower(),
            username=spelled if isinstance(spelled, str) and spelled.lower() == username.lower()
            else username,
            games_all=count.get("all") if isinstance(count.get("all"), int) else None,
            perf_games={k: int(v.get("games") or 0) for k, v in perfs.items()
                        if isinstance(v, Mapping)},
        )

    def rating_history(self, username: str) -> list[Mapping[str, Any]]:
        """``/api/user/{u}/rating-history`` as Lichess sends it (see
        :func:`parse_rating_history`)."""
        data = self._call(lambda: self.client.users.get_rating_history(username), username,
                          "the rating history")
        return list(data or [])

    def export_games(self, username: str, *, since: int | None, until: int | None,
                     perf_type: str | None, ongoing: bool
                     ) -> Iterator[dict[str, Any] | BadLine]:
        """The raw game stream of ``/api/games/user/{u}`` (newest first): JSON objects, and a
        :class:`BadLine` for each line that is no game; lazily (the request is sent on the
        first ``next``).

        The endpoint, parameters and headers berserk's ``export_by_player`` sends, on the same
        session, read with :func:`read_game_stream` instead of berserk's line reader (512-byte
        reads, quadratic in a line's length; the first bad line ended the stream). Errors
        surface while iterating (berserk's ResponseError for an HTTP error, requests'
        exceptions, a ValueError for a last line cut short):
        :class:`~tracker.sources.lichess.stream.GameFetcher` handles them.
        """
        LOG.info("GET /api/games/user/%s since=%s until=%s perfType=%s", username, since,
                 until, perf_type)
        params = {k: v for k, v in (("since", since), ("until", until), ("perfType", perf_type),
                                    ("ongoing", True if ongoing else None)) if v is not None}
        # Lichess's server analysis where a game has one (analysis[], each player's ACPL and
        # judgment counts), and each player's accuracy: analysed games arrive analysed.
        params.update(EXPORT_FLAGS)
        response = self.session.get(f"{self.base}/api/games/user/{username}", params=params,
                                    stream=True, headers={"Accept": "application/x-ndjson"})
        try:
            if not response.ok:
                raise berserk.exceptions.ResponseError(response)
            yield from read_game_stream(response.iter_content(chunk_size=STREAM_CHUNK_BYTES))
        finally:
            response.close()


#: What every game export asks for besides the window: Lichess's evals and accuracy.
EXPORT_FLAGS: Final = {"evals": "true", "accuracy": "true"}

#: Bytes asked of the HTTP stream at a time (a chunked answer gives what has arrived).
STREAM_CHUNK_BYTES: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line of the game stream that is no game: not JSON, not an object, or over the size
    cap. ``reason`` is the skip reason, ``message`` says what it was, ``key`` tells the line
    apart within a run (a resumed download sends it again)."""

    reason: str
    message: str
    key: bytes


def read_game_stream(chunks: Iterable[bytes], max_line_bytes: int = MAX_NDJSON_GAME_BYTES
                     ) -> Iterator[dict[str, Any] | BadLine]:
    """The games of an NDJSON byte stream (cut anywhere) as JSON objects, in time linear in
    its length and memory bounded by ``max_line_bytes`` and a chunk.

    A line that is not a JSON object is a :class:`BadLine` ("truncated or invalid line") and
    the stream goes on; so is a line over ``max_line_bytes`` ("game too large"), which is
    never held. A last line cut short (no line end: the server stopped in the middle of it)
    raises ValueError: the download broke, and is resumed.
    """
    it = iter(chunks)
    for line in capped_lines(lambda _n: next(it, b""), max_line_bytes):
        if line.__class__ is OversizedLine or len(line) > max_line_bytes:
            size = getattr(line, "size", len(line))
            yield BadLine(SKIP_TOO_LARGE, f"a game of {size:,} bytes in the stream, over the "
                          f"limit of {max_line_bytes:,}: skipped",
                          b"L" + hashlib.blake2b(line[:256]).digest() + str(size).encode())
            continue
        text = line.strip()
        if not text:
            continue
        try:
            obj = json_loads(text)
        except (ValueError, RecursionError):
            if not line.endswith(b"\n"):
                raise ValueError("the stream ends in the middle of a line") from None
            obj = None
        if isinstance(obj, dict):
            yield obj
            continue
        shown = text[:40].decode("utf-8", "replace")
        yield BadLine(SKIP_TRUNCATED, f"a line that is not a game ({shown!r}…): skipped",
                      b"J" + hashlib.blake2b(text).digest())
