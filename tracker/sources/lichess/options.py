"""How a Lichess import reaches Lichess and what it downloads: one frozen options object.

:class:`LichessOptions` travels from :func:`tracker.api.import_user` (whose keyword API builds
it) through :mod:`tracker.importing.lichess` to the client and the game stream, instead of
the same dozen parameters repeated at every floor.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING

from tracker.sources.lichess.client import DEFAULT_TIMEOUT, RETRY_WAIT_429_S
from tracker.sources.lichess.stream import MAX_RETRIES, RETRY_WAIT_S

if TYPE_CHECKING:
    import requests


@dataclass(frozen=True, slots=True, kw_only=True)
class LichessOptions:
    """A Lichess import's options, unchecked (:func:`tracker.importing.lichess.connect`
    checks them: ImportArgumentError for a bad perf or date).

    ``perf``: perf keys (``"blitz,rapid"`` or a sequence; none: all); ``since``: a floor
    (``YYYY-MM-DD``, a date, an aware datetime or integer ms); ``full``: ignore the sync
    cursor and read everything again; ``base_url``: the server (``None``:
    ``$LICHESS_BASE_URL``, else https://lichess.org); ``token``: the API token, sent only as
    the Authorization header, never in ``repr``; ``retry_wait_429``: seconds to wait after an
    HTTP 429; ``retry_wait``: first pause, seconds, before resuming a broken stream;
    ``timeout``: (connect, read) seconds; ``max_retries``: attempts in a row without a new game
    before stopping as partial; ``session``: an HTTP session to use (tests; default: a new
    one); ``sleep``: how waits are waited (tests); ``on_wait``: told one line each time
    Lichess asks to wait (HTTP 429), before the wait.
    """

    perf: str | Sequence[str] | None = None
    since: int | float | str | date | datetime | None = None
    full: bool = False
    base_url: str | None = None
    token: str | None = field(default=None, repr=False)
    retry_wait_429: float = RETRY_WAIT_429_S
    retry_wait: float = RETRY_WAIT_S
    timeout: tuple[float, float] = DEFAULT_TIMEOUT
    max_retries: int = MAX_RETRIES
    session: requests.Session | None = field(default=None, repr=False, compare=False)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)
    on_wait: Callable[[str], None] | None = field(default=None, repr=False, compare=False)
