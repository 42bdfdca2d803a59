"""Fetching a FIDE player from Lichess: ``/api/fide/player/{id}`` and ``…/{id}/ratings``.

Both are read on the session the game import uses (our User-Agent, default ``(connect, read)``
timeouts, the token if any: see :func:`tracker.sources.lichess.make_session`), but not through
berserk: berserk reads a whole answer into memory with no bound on its size or its time, and
a FIDE answer is a few KB. So each answer is read here, streamed, with two bounds:

- **size**: at most :data:`MAX_ANSWER_BYTES` once decompressed (gzip and deflate are
  decompressed here, a bounded piece at a time: a 1.5 MB gzip bomb is cut off at the bound,
  never expanded in memory);
- **time**: at most :data:`ANSWER_DEADLINE_S` from the request to the last byte, however the
  bytes come (a server that sends one byte every 20 seconds never trips the read timeout).

An HTTP 429 is waited out once (:data:`RETRY_WAIT_429_S`, said through ``on_wait``). Every
failure is one :class:`~tracker.sources.fide.FideError` line, never the token. The answers are
decoded, every value checked, by :mod:`tracker.sources.fide`.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import zlib
from collections.abc import Callable
from typing import Final

import requests
import urllib3

from tracker.sources.fide import (
    FideError,
    FidePlayerData,
    UnknownFideIdError,
    parse_profile,
    parse_rating_lists,
)

LOG = logging.getLogger(__name__)

#: Seconds to wait after an HTTP 429 before the one retry (Lichess asks for a full minute).
RETRY_WAIT_429_S: Final = 60.0
#: Seconds one answer may take, from its request to its last byte.
ANSWER_DEADLINE_S: Final = 60.0
#: Bytes one answer may hold once decompressed: a real profile is ~150 bytes, a lifetime of
#: three monthly lists ~3 KB.
MAX_ANSWER_BYTES: Final = 1 << 20
#: Bytes read from the socket at a time (one read returns what has arrived, up to this).
_READ_BYTES: Final = 16 * 1024


class _TooSlow(FideError):
    """The answer's deadline passed while it was being read (internal)."""


class _Status(Exception):
    """An HTTP error status (internal: turned into a FideError by the caller)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _reason(exc: BaseException) -> str:
    if isinstance(exc, requests.Timeout):
        return "timed out"
    if isinstance(exc, requests.ConnectionError):
        return "connection error"
    return type(exc).__name__


def _decoder(encoding: str) -> zlib._Decompress | None:
    """A bounded decompressor for the answer's Content-Encoding (``None``: plain)."""
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip", "deflate"):
        return zlib.decompressobj(zlib.MAX_WBITS | 32)  # a gzip or zlib header, told apart
    raise FideError(f"Lichess sent an answer in {encoding!r}, which tracker does not read")


def read_answer(response: requests.Response, *, max_bytes: int = MAX_ANSWER_BYTES,
                deadline: float | None = None) -> bytes:
    """The body of a streamed ``response`` (``stream=True``), decompressed, at most
    ``max_bytes``; ``deadline``: a :func:`time.monotonic` time it must end by (checked
    between reads, each read returning what has arrived). Raises FideError (too large, too
    slow, damaged compression)."""
    decoder = _decoder(response.headers.get("Content-Encoding", "").strip().lower())
    body = bytearray()

    def keep(data: bytes) -> None:
        body.extend(data)
        if len(body) > max_bytes:
            raise FideError(f"Lichess sent an answer over {max_bytes // 1024} KB "
                            "(decompressed): not a FIDE answer, left unread")

    try:
        while True:
            if deadline is not None and time.monotonic() > deadline:
                raise _TooSlow("too slow")
            chunk = response.raw.read1(_READ_BYTES, decode_content=False)
            if not chunk:
                break
            if decoder is None:
                keep(chunk)
                continue
            keep(decoder.decompress(chunk, max_bytes + 1 - len(body)))
            while decoder.unconsumed_tail:  # never more than the bound at a time
                keep(decoder.decompress(decoder.unconsumed_tail, max_bytes + 1 - len(body)))
        if decoder is not None:
            keep(decoder.flush())
    except zlib.error:
        raise FideError("Lichess sent a damaged compressed answer") from None
    except (urllib3.exceptions.HTTPError, OSError) as exc:  # cut, reset, a read timeout
        timed_out = isinstance(exc, urllib3.exceptions.TimeoutError | TimeoutError)
        raise FideError("the answer broke off ("
                        + ("timed out" if timed_out else type(exc).__name__) + ")") from None
    finally:
        response.close()
    return bytes(body)


def _get_json(session: requests.Session, url: str, *, max_bytes: int,
              deadline_s: float) -> object:
    """One GET of a JSON answer, bounded in size and time (see the module docstring).

    Raises _Status for an HTTP error, FideError for the rest (one line)."""
    outcome: dict[str, object] = {}
    deadline = time.monotonic() + deadline_s

    def fetch() -> None:
        try:
            response = session.get(url, stream=True, headers={
                "Accept": "application/json", "Accept-Encoding": "gzip, deflate"})
            if response.status_code >= 400:
                response.close()
                raise _Status(response.status_code)
            outcome["body"] = read_answer(response, max_bytes=max_bytes, deadline=deadline)
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    # The request runs in a thread the caller waits for until the deadline: a server that
    # trickles its headers holds no one but that thread (it stops at its next read).
    worker = threading.Thread(target=fetch, name="fide-answer", daemon=True)
    worker.start()
    worker.join(deadline_s)
    if worker.is_alive():
        raise FideError(f"Lichess did not answer within {deadline_s:.0f} s (gave up)")
    error = outcome.get("error")
    if isinstance(error, _TooSlow):
        raise FideError(f"Lichess did not answer within {deadline_s:.0f} s (gave up)")
    if isinstance(error, BaseException):
        raise error
    body = outcome["body"]
    assert isinstance(body, bytes)
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise FideError("Lichess sent an answer that is not JSON") from None


def fetch_fide_player(
    session: requests.Session,
    base_url: str,
    fide_id: int,
    *,
    retry_wait_429: float = RETRY_WAIT_429_S,
    sleep: Callable[[float], None] = time.sleep,
    on_wait: Callable[[str], None] | None = None,
    max_bytes: int = MAX_ANSWER_BYTES,
    deadline_s: float = ANSWER_DEADLINE_S,
) -> FidePlayerData:
    """The profile and the three rating lists of ``fide_id`` from the Lichess at ``base_url``.

    ``session``: the import's session (our User-Agent, timeouts, optional token). An HTTP 429
    is waited out once (``retry_wait_429`` seconds; ``on_wait`` is told, one line, else the
    line is logged as a warning), a second one is an error. Each answer: at most
    ``max_bytes`` decompressed and ``deadline_s`` seconds.
    Raises UnknownFideIdError (404), FideError (any other failure: one line, no token).
    The profile must name the id asked for; a malformed or out-of-range value is only in
    ``errors`` (see :func:`~tracker.sources.fide.parse_profile`).
    """
    base = base_url.rstrip("/")
    tell = on_wait or LOG.warning

    def call(path: str, what: str) -> object:
        for attempt in (1, 2):
            try:
                return _get_json(session, f"{base}{path}", max_bytes=max_bytes,
                                 deadline_s=deadline_s)
            except _Status as exc:
                if exc.code == 404:
                    raise UnknownFideIdError(
                        f"no FIDE player with id {fide_id} at {base_url}") from None
                if exc.code == 429 and attempt == 1:
                    tell(f"Lichess asks to wait (HTTP 429): fetching {what} of FIDE player "
                         f"{fide_id} again in {retry_wait_429:.0f} s")
                    sleep(retry_wait_429)
                    continue
                raise FideError(f"Lichess answered HTTP {exc.code} for {what} of FIDE "
                                f"player {fide_id}") from None
            except FideError as exc:
                raise FideError(f"{what} of FIDE player {fide_id}: {exc}") from None
            except requests.RequestException as exc:
                raise FideError(f"cannot reach {base_url} ({_reason(exc)})") from None
        raise AssertionError("unreachable")

    errors: list[str] = []
    raw_profile = call(f"/api/fide/player/{fide_id}", "the profile")
    try:
        profile = parse_profile(raw_profile, errors)
    except ValueError as exc:
        raise FideError(f"Lichess sent no usable profile for FIDE player {fide_id}: {exc}"
                        ) from None
    if profile.fide_id != fide_id:
        raise FideError(f"Lichess answered FIDE player {profile.fide_id} when asked for "
                        f"{fide_id}")
    raw_lists = call(f"/api/fide/player/{fide_id}/ratings", "the rating lists")
    lists = parse_rating_lists(raw_lists, errors)
    return FidePlayerData(profile, lists, errors)
