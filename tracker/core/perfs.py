"""The perfs a replay accepts: Lichess perf keys, spelled in any case.

The vocabulary itself (:data:`~tracker.core.records.PERFS`: the speeds, then the variants) is the
records'; this module only says which of those keys a FIDE replay takes and turns a
user's spelling into the key.
"""

from __future__ import annotations

from typing import Final

from tracker.core.errors import TrackerError
from tracker.core.records import PERFS, SPEEDS


class PerfError(TrackerError, ValueError):
    """A perf that cannot be replayed: unknown, or a variant (FIDE rates standard chess only)."""

    exit_code = 2  # a bad --perf: a usage error


#: Perf keys by their lowercase spelling, so ``--perf Blitz`` and ``ultrabullet`` work.
_PERF_KEYS: Final = {k.lower(): k for k in PERFS}


def perf_key(perf: str) -> str:
    """The Lichess perf key for ``perf`` in any case (``"Blitz"`` → ``"blitz"``).

    Raises PerfError for an unknown perf and for a variant: FIDE rates standard chess only
    (``docs/rules.md`` §5), so a variant's games are stored but never replayed.
    """
    key = _PERF_KEYS.get(perf.strip().lower())
    if key is None:
        raise PerfError(f"unknown perf {perf!r}: use one of {', '.join(SPEEDS)}")
    if key not in SPEEDS:
        raise PerfError(
            f"{key} is a variant: FIDE rates standard chess only, so its games are stored but "
            f"never replayed; use one of {', '.join(SPEEDS)}"
        )
    return key
