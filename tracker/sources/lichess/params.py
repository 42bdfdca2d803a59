"""The arguments of a Lichess import, checked before anything is asked or written.

A username, perf keys and time windows (integer milliseconds since the epoch, UTC, as Lichess
wants them) from what a person types: ``"Blitz, rapid"``, ``"2024-01-01"``, ``"2024-01"``.
Each function raises :class:`ImportArgumentError` (exit code 2) with a one-line message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Final

from tracker.core.errors import TrackerError
from tracker.core.records import PERFS
from tracker.core.utc import MIN_EPOCH_MS, datetime_to_ms

#: Lichess usernames: 2-30 letters, digits, ``_`` or ``-``.
#: A Lichess username: 2-30 letters, digits, ``_`` or ``-``, starting with a letter or digit.
_USERNAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{1,29}$")


class ImportArgumentError(TrackerError, ValueError):
    """A bad username, perf, date or time window given to the importer."""

    exit_code = 2


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


def since_floor(value: int | float | str | date | datetime, now_ms: int) -> int:
    """The ``--since`` floor in ms UTC (see :func:`epoch_ms`); ImportArgumentError for one
    after ``now_ms``: no game can be that new, and the sync cursor would start there, so that
    later syncs would never ask for the games played until then."""
    floor = epoch_ms(value, "since")
    if floor > now_ms:
        try:
            shown = datetime.fromtimestamp(floor / 1000, UTC).date().isoformat()
        except (OverflowError, ValueError, OSError):
            shown = f"{floor} ms"
        raise ImportArgumentError(f"since {shown} is in the future: give a date up to today")
    return floor


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


def check_username(username: str) -> str:
    """``username`` stripped, if it can be a Lichess username; else ImportArgumentError."""
    name = (username or "").strip()
    if not _USERNAME.fullmatch(name):
        raise ImportArgumentError(
            f"{username!r} is not a Lichess username (2-30 letters, digits, _ or -, "
            "starting with a letter or digit)"
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
