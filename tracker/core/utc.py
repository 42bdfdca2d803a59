"""Time in UTC, the one way tracker counts it: integer milliseconds since the epoch.

Every stored time is an ``int`` of ms since 1970-01-01 UTC (``*_ms`` names); every time in a
record is an aware :class:`~datetime.datetime` in UTC. This module converts between the two and
nothing else does:

- :func:`ms_to_datetime`: checked, for values from outside (a file, the API);
- :func:`utc_from_ms`: unchecked and fast, for values the store already checked on the way in;
- :func:`datetime_to_ms`: exact (no float round trip), refuses a naive datetime;
- :func:`now_ms`, :func:`month_of`.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Final

#: 1970-01-01T00:00:00Z.
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
#: Below this a timestamp is seconds, not milliseconds (10**11 ms is March 1973).
MIN_EPOCH_MS: Final = 10**11
_ONE_MS: Final = timedelta(milliseconds=1)


def ms_to_datetime(ms: object) -> datetime:
    """Milliseconds since the epoch (UTC) → aware UTC datetime.

    Accepts an int, or a float only when integral. Raises ValueError for a value from 0 to
    10**11, which is seconds, not milliseconds (a timestamp in seconds read as milliseconds
    lands in 1970), and for one beyond the dates a datetime holds (e.g. 6.8e19).

    >>> ms_to_datetime(1704067200000)
    datetime.datetime(2024, 1, 1, 0, 0, tzinfo=datetime.timezone.utc)
    """
    if isinstance(ms, bool) or not isinstance(ms, int):
        if isinstance(ms, float) and ms.is_integer():
            ms = int(ms)
        else:
            raise ValueError(f"timestamp must be integer milliseconds, got {ms!r}")
    if 0 <= ms < MIN_EPOCH_MS:
        raise ValueError(f"timestamp {ms} looks like seconds, not milliseconds since the epoch")
    try:
        moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, OSError) as error:  # beyond what the platform's time functions hold
        raise ValueError(f"timestamp {ms} is out of range: {error}") from None
    return moment.replace(microsecond=(ms % 1000) * 1000)


def utc_from_ms(ms: int) -> datetime:
    """Stored milliseconds → aware UTC datetime: :func:`ms_to_datetime` without the checks
    (the value was checked on the way in), exactly the same result at a third of the cost."""
    return EPOCH + timedelta(0, 0, 0, ms)  # (days, seconds, µs, ms): positional is 1/4 faster


def datetime_to_ms(dt: datetime) -> int:
    """Aware datetime → integer milliseconds since the epoch, UTC (exact).

    Raises ValueError for a naive datetime (its time zone would be the host's, a classic bug).
    """
    try:  # a naive datetime cannot be subtracted from an aware one: no check needed first
        return (dt - EPOCH) // _ONE_MS
    except TypeError:
        if dt.tzinfo is None or dt.utcoffset() is None:
            raise ValueError("naive datetime: give an aware datetime (UTC)") from None
        raise


def now_ms() -> int:
    """Now, in milliseconds since the epoch, UTC."""
    return time.time_ns() // 1_000_000


def month_of(dt: datetime) -> str:
    """The UTC calendar month of an aware datetime, as ``"YYYY-MM"`` (a FIDE rating period)."""
    u = dt.astimezone(UTC)
    return f"{u.year:04d}-{u.month:02d}"
