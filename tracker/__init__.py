"""tracker: replay your Lichess games as FIDE rating periods.

The public Python API, one function per ``tracker`` command (see :mod:`tracker.api`)::

    import tracker
    tracker.import_file("lichess_me.pgn", db="my.db", user="me")
    tracker.import_user("me", db="my.db")
    report = tracker.replay("me", "blitz", db="my.db")
    tracker.calc(1500, 20, [(1700, "1")]).new_rating   # 1515

They are loaded on first use, so ``import tracker`` stays cheap.
"""

from __future__ import annotations

from typing import Any

from tracker._version import __version__

__all__ = [
    "__version__",
    "calc",
    "dashboard",
    "demo",
    "group_add",
    "group_calibrate",
    "group_create",
    "group_list",
    "group_members",
    "group_remove",
    "group_table",
    "import_file",
    "import_user",
    "players",
    "replay",
    "settings",
    "sync",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from tracker import api

        return getattr(api, name)
    raise AttributeError(f"module 'tracker' has no attribute {name!r}")
