"""The Lichess API as a source: pure (HTTP in, game records out), nothing stored here.

- :mod:`~tracker.sources.lichess.params`: a username, perfs, time windows, checked;
- :mod:`~tracker.sources.lichess.client`: berserk with our User-Agent, timeouts, 429s, errors;
  the account and its rating history;
- :mod:`~tracker.sources.lichess.stream`: the game stream, resumed when it breaks;
- :mod:`~tracker.sources.lichess.sync`: the sync plan, pure: cursor → downloads → cursor;
- :mod:`~tracker.sources.lichess.options`: an import's options as one object.

The import runner that drives them into the store is :mod:`tracker.importing.lichess`.
"""

from __future__ import annotations

from tracker.core.cursor import Cursor
from tracker.sources.lichess.client import (
    DEFAULT_TIMEOUT,
    RETRY_WAIT_429_S,
    LichessClient,
    LichessError,
    LichessSession,
    LichessTokenSession,
    LichessUser,
    TokenError,
    UnknownUserError,
    make_session,
    parse_rating_history,
    series_perf_key,
)
from tracker.sources.lichess.options import LichessOptions
from tracker.sources.lichess.params import (
    ImportArgumentError,
    check_username,
    epoch_ms,
    month_window,
    parse_perfs,
)
from tracker.sources.lichess.stream import (
    MAX_RETRIES,
    RETRY_WAIT_S,
    SKIP_ONGOING,
    GameFetcher,
)
from tracker.sources.lichess.sync import (
    SEARCH_INDEX_LAG_MS,
    Segment,
    SegmentResult,
    advance_cursor,
    plan_sync,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_RETRIES",
    "RETRY_WAIT_429_S",
    "RETRY_WAIT_S",
    "SEARCH_INDEX_LAG_MS",
    "SKIP_ONGOING",
    "Cursor",
    "GameFetcher",
    "ImportArgumentError",
    "LichessClient",
    "LichessError",
    "LichessOptions",
    "LichessSession",
    "LichessTokenSession",
    "LichessUser",
    "Segment",
    "SegmentResult",
    "TokenError",
    "UnknownUserError",
    "advance_cursor",
    "check_username",
    "epoch_ms",
    "make_session",
    "month_window",
    "parse_perfs",
    "parse_rating_history",
    "plan_sync",
    "series_perf_key",
]
