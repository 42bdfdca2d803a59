"""Fetching a FIDE player from Lichess: ``/api/fide/player/{id}`` and ``…/{id}/ratings``.

Both go through berserk on the session the game import uses (our User-Agent, default
``(connect, read)`` timeouts, the token if any: see :func:`tracker.sources.lichess.make_session`).
berserk has ``Fide.get_player(id)`` (``client.fide``, whose ``Client`` forgets ``base_url`` in
0.14: the Fide client is built directly); 0.14 has no method for the rating lists, so
:class:`FideRatingsClient` adds one the way berserk's own clients are written (same
requestor, same errors). The answers are decoded by :mod:`tracker.sources.fide`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final, cast

import berserk
import berserk.exceptions
import requests
from berserk.clients.base import BaseClient
from berserk.clients.fide import Fide

from tracker.sources.fide import (
    FideError,
    FidePlayerData,
    UnknownFideIdError,
    parse_profile,
    parse_rating_lists,
)

#: Seconds to wait after an HTTP 429 before the one retry (Lichess asks for a full minute).
RETRY_WAIT_429_S: Final = 60.0


class FideRatingsClient(BaseClient):
    """``/api/fide/player/{id}/ratings``, missing from berserk 0.14, as a berserk client."""

    def get_ratings(self, player_id: int) -> dict[str, list[int]]:
        """The rating lists of a FIDE player: ``{kind: [YYYYMMRRRR, …]}``.

        Raises berserk.exceptions.ResponseError for an HTTP error (404: unknown id).
        """
        return cast(dict[str, list[int]], self._r.get(f"/api/fide/player/{player_id}/ratings"))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, berserk.exceptions.ApiError) and not isinstance(
        exc, berserk.exceptions.ResponseError
    ):
        exc = exc.error  # berserk wraps the requests exception
    if isinstance(exc, requests.Timeout):
        return "timed out"
    if isinstance(exc, requests.ConnectionError):
        return "connection error"
    return type(exc).__name__


def fetch_fide_player(
    session: requests.Session,
    base_url: str,
    fide_id: int,
    *,
    retry_wait_429: float = RETRY_WAIT_429_S,
    sleep: Callable[[float], None] = time.sleep,
) -> FidePlayerData:
    """The profile and the three rating lists of ``fide_id`` from the Lichess at ``base_url``.

    ``session``: the import's session (our User-Agent, timeouts, optional token). An HTTP 429
    is waited out once (``retry_wait_429`` seconds), a second one is an error.
    Raises UnknownFideIdError (404), FideError (any other failure: one line, no token).
    The profile must name the id asked for; malformed list entries are only ``errors``.
    """
    # berserk 0.14's Client builds its Fide client without base_url (always lichess.org):
    # build berserk's Fide client ourselves, on our server.
    fide_client = Fide(session, base_url)
    ratings_client = FideRatingsClient(session, base_url)

    def call(fn: Callable[[], object], what: str) -> object:
        for attempt in (1, 2):
            try:
                return fn()
            except berserk.exceptions.ResponseError as exc:
                if exc.status_code == 404:
                    raise UnknownFideIdError(
                        f"no FIDE player with id {fide_id} at {base_url}") from None
                if exc.status_code == 429 and attempt == 1:
                    sleep(retry_wait_429)
                    continue
                raise FideError(f"Lichess answered HTTP {exc.status_code} for {what} of FIDE "
                                f"player {fide_id}") from None
            except ValueError:
                raise FideError(f"Lichess sent an unreadable answer for {what} of FIDE player "
                                f"{fide_id}") from None
            except (berserk.exceptions.ApiError, requests.RequestException) as exc:
                raise FideError(f"cannot reach {base_url} ({_reason(exc)})") from None
        raise AssertionError("unreachable")

    errors: list[str] = []
    raw_profile = call(lambda: fide_client.get_player(fide_id), "the profile")
    try:
        profile = parse_profile(raw_profile, errors)
    except ValueError as exc:
        raise FideError(f"Lichess sent no usable profile for FIDE player {fide_id}: {exc}"
                        ) from None
    if profile.fide_id != fide_id:
        raise FideError(f"Lichess answered FIDE player {profile.fide_id} when asked for "
                        f"{fide_id}")
    raw_lists = call(lambda: ratings_client.get_ratings(fide_id), "the rating lists")
    lists = parse_rating_lists(raw_lists, errors)
    return FidePlayerData(profile, lists, errors)
