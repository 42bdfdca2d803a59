"""The group table's public API (``tracker group show``, the dashboard's Group page),
re-exported by :mod:`tracker.api`: each member's hypothetical FIDE rating now (the scale
models' median and band), their real FIDE rating and the gap, their Lichess rating, their
games of the last 30 days and the change over the last three months. Computed by
:mod:`tracker.report.group` from each member's replay report, saved per member as the
Overview's pass is.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Final

from tracker.api._db import open_store
from tracker.api.groups import group_members
from tracker.core.errors import ArgumentError

if TYPE_CHECKING:
    from tracker.api._db import Db
    from tracker.report.group import GroupRow

#: The perf a group table shows when none is given.
DEFAULT_PERF: Final = "blitz"

#: The columns of ``tracker group show --csv`` (and the keys of each player in ``--json``),
#: in order: a contract.
GROUP_KEYS: Final = (
    "username", "fide", "fide_min", "fide_max", "club", "real_fide", "gap", "lichess",
    "games_30d", "change_3m", "games_3m", "level", "games", "counted", "fide_id", "note",
)

#: ``--sort`` keys → the row's value they sort by.
SORT_KEYS: Final[dict[str, str]] = {
    "fide": "fide", "club": "club", "real": "real_fide", "gap": "gap", "lichess": "lichess",
    "games": "recent_games", "change": "change", "name": "username",
}


@dataclass(frozen=True, slots=True)
class GroupTable:
    """``tracker group show``: the group's name, the perf, the moment it is ``as_of``
    (``now_ms``, ms since the epoch, UTC), the scale models whose median and band the table
    gives, one :class:`~tracker.report.group.GroupRow` per member, and the group's club
    model (``club``: its name with n; ``None`` when the group has none for the perf)."""

    group: str
    perf: str
    now_ms: int
    models: tuple[str, ...]
    rows: list[GroupRow]
    club: str | None = None

    @property
    def as_of(self) -> date:
        return datetime.fromtimestamp(self.now_ms / 1000, tz=UTC).date()

    @property
    def banded(self) -> bool:
        """Whether the FIDE-style figures have a band: two models or more cover the perf."""
        return len(self.models) > 1

    @property
    def scale_words(self) -> str:
        """What the FIDE-style column is, in words: "the median and band of lebowitz,
        mathtuition"; with one model covering the perf, that model's alone ("lebowitz, the one
        model covering rapid": no median, no band); "no model covers rapid"."""
        if not self.models:
            return f"no model covers {self.perf}"
        if not self.banded:
            return f"{self.models[0]}, the one model covering {self.perf}"
        return f"the median and band of {', '.join(self.models)}"


def _now_ms(now: datetime | date | int | None) -> int:
    if now is None:
        return int(datetime.now(UTC).timestamp() * 1000)
    if isinstance(now, int):
        return now
    if isinstance(now, datetime):
        if now.tzinfo is None:
            raise ArgumentError("now must be an aware datetime (UTC)")
        return int(now.timestamp() * 1000)
    return int(datetime(now.year, now.month, now.day, 23, 59, 59, tzinfo=UTC).timestamp()
               * 1000)


def group_table(name: str, perf: str = DEFAULT_PERF, *, db: Db = None,
                now: datetime | date | int | None = None) -> GroupTable:
    """``tracker group show NAME --perf P``: one row per member, in the group's order.

    ``now``: the moment the table answers for (default: now; a date means its end, UTC; an
    int is ms since the epoch): the rating in force then, the 30 days and three months before
    it. A member whose figures are missing (no games imported, none in the perf, unrated,
    a perf no model covers) has a row with ``note`` saying why. Raises UnknownGroupError,
    PerfError (exit 2: not a standard perf).
    """
    from tracker.core.perfs import perf_key
    from tracker.core.records import SPEEDS
    from tracker.fide.scale import models_for
    from tracker.report.group import club_scale, table_rows

    key = perf_key(perf)
    if key not in SPEEDS:
        from tracker.core.perfs import PerfError

        raise PerfError(f"{perf!r} is not a standard perf: use one of {', '.join(SPEEDS)}")
    store = open_store(db)
    members = group_members(name, db=store)
    now_ms = _now_ms(now)
    club = club_scale(store, name.strip(), key)
    return GroupTable(name.strip(), key, now_ms, tuple(m.key for m in models_for(key)),
                      table_rows(store, members, key, now_ms, club),
                      club.label if club else None)


def sort_rows(rows: Sequence[GroupRow], key: str = "fide", *, descending: bool = True
              ) -> list[GroupRow]:
    """The rows sorted by ``key`` (one of :data:`SORT_KEYS`), highest first (names: Z first)
    unless ``descending`` is False; rows without a value last, in their order. Raises
    ArgumentError for an unknown key."""
    if key not in SORT_KEYS:
        raise ArgumentError(f"unknown sort key {key!r}: use one of {', '.join(SORT_KEYS)}")
    field = SORT_KEYS[key]
    if key == "name":
        return sorted(rows, key=lambda r: r.username.lower(), reverse=descending)
    value: Callable[[GroupRow], Any] = lambda r: getattr(r, field)  # noqa: E731
    have = [r for r in rows if value(r) is not None]
    return sorted(have, key=value, reverse=descending) + [r for r in rows if value(r) is None]


def _exact(x: Fraction | int | None) -> int | Decimal | None:
    """A rating as JSON shows it: an integer, or a half (a median of two) as ``1499.5``."""
    if x is None or isinstance(x, int):
        return x
    from tracker.core.exact import points

    return points(x)


def row_json(row: GroupRow) -> dict[str, Any]:
    """One member with exactly :data:`GROUP_KEYS` (numbers exact, ``null`` when missing;
    ``level`` ``"not analysed"`` without analysed games)."""
    from tracker.report.group import NOT_ANALYSED

    return {
        "username": row.username, "fide": _exact(row.fide), "fide_min": row.fide_low,
        "fide_max": row.fide_high, "club": row.club, "real_fide": row.real_fide,
        "gap": _exact(row.gap),
        "lichess": row.lichess, "games_30d": row.recent_games, "change_3m": _exact(row.change),
        "games_3m": row.games_3m,
        "level": row.level or NOT_ANALYSED, "games": row.games, "counted": row.counted,
        "fide_id": row.fide_id, "note": row.note,
    }


def group_table_json(table: GroupTable, sort: str | None = None, *,
                     descending: bool | None = None) -> dict[str, Any]:
    """The ``tracker group show --json`` object: ``group``, ``perf``, ``as_of``
    (``YYYY-MM-DD``), ``models`` (the scale models of the median and band), ``club_model``
    (the group's club model, ``null`` without one: each player's ``club`` is their rating on
    it), ``fide_list`` (``standard``: the real list compared), ``players`` (each with
    :data:`GROUP_KEYS`), sorted by ``sort`` when given (``descending`` default: highest
    first, names A first)."""
    if descending is None:
        descending = sort != "name"
    rows = sort_rows(table.rows, sort, descending=descending) if sort else table.rows
    return {"group": table.group, "perf": table.perf, "as_of": table.as_of.isoformat(),
            "models": list(table.models), "club_model": table.club, "fide_list": "standard",
            "players": [row_json(r) for r in rows]}


def group_table_csv(table: GroupTable, sort: str | None = None, *,
                    descending: bool | None = None) -> str:
    """``tracker group show --csv``: a header of :data:`GROUP_KEYS` and one line per member
    (an empty cell for a missing value, text a spreadsheet would compute escaped: see
    :func:`~tracker.report.presentation.csv_cell`), sorted as :func:`group_table_json` sorts."""
    from tracker.report.presentation import csv_cell

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(GROUP_KEYS)
    for player in group_table_json(table, sort, descending=descending)["players"]:
        writer.writerow([csv_cell(player[k]) for k in GROUP_KEYS])
    return buf.getvalue()
