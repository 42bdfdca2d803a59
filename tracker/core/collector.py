"""Python's cyclic garbage collector, paused on a hot path — only in a process that allows it.

A hot path (an import's run, a saved pass read) builds 100k-object lists, none of them in a
cycle, and the collector walks every live object again and again as they pile up (8 % of a
100k-game import; a saved pass read in 30 ms instead of 100). Pausing it is a process-wide
side effect, so library code never decides it: the hot paths ask :func:`paused`, which pauses
only once the process called :func:`allow_pauses` — the ``tracker`` command's entry does, a
program using :mod:`tracker.api` (the dashboard's server included) does not, and there the
collector is left alone.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_allowed = False


def allow_pauses(allowed: bool = True) -> None:
    """Let (``allowed``) or stop letting this process's hot paths pause the collector.
    Called by the ``tracker`` command's entry; a library caller leaves it off."""
    global _allowed
    _allowed = allowed


def pauses_allowed() -> bool:
    """Whether :func:`allow_pauses` let this process's hot paths pause the collector."""
    return _allowed


@contextmanager
def paused() -> Iterator[bool]:
    """The collector paused for the block, then enabled again, if the process allows pauses
    (:func:`allow_pauses`) and the collector is enabled; otherwise nothing changes. Yields
    whether it paused (a long block then collects its young objects now and then:
    ``gc.collect(1)``)."""
    if not _allowed or not gc.isenabled():
        yield False
        return
    gc.disable()
    try:
        yield True
    finally:
        gc.enable()
