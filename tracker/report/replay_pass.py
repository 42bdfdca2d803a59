"""One pass over a player's games of a perf, from plain rows, for the replay report.

:func:`tracker.report.replay.build_report` over 100k games spent most of its time building 100k
:class:`~tracker.core.records.GameRecord` objects (frozen dataclasses, two sides and two datetimes
each) that the periods and the Lichess line do not need. Here the rows of
:func:`tracker.store.queries.replay_rows` go through the *same* rules —
:func:`tracker.report.selection.exclusion_reason` via one reused, mutable stand-in for a record
(:class:`RowView`), and :func:`tracker.report.lichess_line.post_game_rating` on the stored
milliseconds (:class:`~tracker.report.lichess_line.MsLine`) — so nothing is decided twice and
nothing is allocated per game but the results. The full records (``report.games``) and the Lichess
line's points (``report.lichess``) are built on first use, by :class:`LazyList`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar, overload

from tracker.core.records import GameSides, SideChecks
from tracker.core.utc import datetime_to_ms, utc_from_ms

T = TypeVar("T")

#: Stored milliseconds → aware UTC datetime (the store's values are checked on the way in).
utc = utc_from_ms


class SideView(SideChecks):
    """The :class:`~tracker.core.records.Side` attributes the selection and the Lichess line
    read."""

    __slots__ = ("ai_level", "name", "provisional", "rating", "rating_diff", "user_id")

    def __init__(self) -> None:
        self.user_id: str | None = None
        self.name: str | None = None
        self.rating: int | None = None
        self.rating_diff: int | None = None
        self.provisional = False
        self.ai_level: int | None = None


class RowView(GameSides):
    """One row of :func:`~tracker.store.queries.replay_rows` seen as a game record (it
    satisfies :class:`tracker.report.selection.GameLike`); the same object is refilled for every row
    (:meth:`load`), so keep nothing of it but values. ``created_ms``/``ended_ms``: the game's
    start and end (its start where the end is unknown), ms since the epoch, UTC."""

    __slots__ = ("black", "created_ms", "ended_ms", "id", "plies", "rated", "result",
                 "source", "status", "variant", "white")

    def __init__(self) -> None:
        self.white = SideView()
        self.black = SideView()
        self.id = self.source = self.variant = ""
        self.created_ms = self.ended_ms = 0
        self.rated: bool | None = None
        self.status: str | None = None
        self.result: str | None = None
        self.plies: int | None = None

    def load(self, row: Sequence[Any]) -> None:
        (self.id, self.source, self.created_ms, self.ended_ms, rated, self.variant,
         self.status, self.result, self.plies, color) = row[:10]
        self.rated = None if rated is None else bool(rated)  # SQLite gives 0/1
        me, opp = (self.white, self.black) if color == "white" else (self.black, self.white)
        me.user_id, me.name, me.rating, me.rating_diff, mp, me.ai_level = row[10:16]
        opp.user_id, opp.name, opp.rating, opp.rating_diff, op, opp.ai_level = row[16:22]
        me.provisional, opp.provisional = bool(mp), bool(op)

    @property
    def created_at(self) -> datetime:
        return utc(self.created_ms)

    @property
    def ended_at(self) -> datetime:
        return utc(self.ended_ms)


class MonthOf:
    """``"YYYY-MM"`` (UTC) of a time in ms; remembers the last month's bounds, so a run of
    games in time order costs two comparisons a game."""

    __slots__ = ("_hi", "_label", "_lo")

    def __init__(self) -> None:
        self._lo = self._hi = 0
        self._label = ""

    def __call__(self, ms: int) -> str:
        if self._lo <= ms < self._hi:
            return self._label
        d = utc(ms)
        start = datetime(d.year, d.month, 1, tzinfo=UTC)
        end = datetime(d.year + (d.month == 12), d.month % 12 + 1, 1, tzinfo=UTC)
        self._lo = datetime_to_ms(start)
        self._hi = datetime_to_ms(end)
        self._label = f"{d.year:04d}-{d.month:02d}"
        return self._label


class LazyList(Sequence[T]):
    """A list read on first use: its length known at once, its items built by ``load``
    (``report.games``: the full records, with their period and reason, read from the
    database; ``report.lichess``: the Lichess line's points)."""

    def __init__(self, count: int, load: Callable[[], list[T]],
                 last: Callable[[], T] | None = None) -> None:
        self._count = count
        self._last = last  # the last item without loading them all (``[-1]``)
        self._load: Callable[[], list[T]] | None = load
        self._items: list[T] | None = None

    def _all(self) -> list[T]:
        if self._items is None:
            assert self._load is not None
            self._items, self._load = self._load(), None
        return self._items

    def __len__(self) -> int:
        return self._count if self._items is None else len(self._items)

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...
    def __getitem__(self, i: int | slice) -> T | list[T]:
        if i == -1 and self._items is None and self._last is not None and self._count:
            return self._last()
        return self._all()[i]

    def __iter__(self) -> Iterator[T]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyList):
            other = other._all()
        return self._all() == other

    __hash__ = None  # type: ignore[assignment]  # unhashable, like the list it stands for

    def __repr__(self) -> str:
        return f"LazyList({self._count} items)" if self._items is None else repr(self._items)


#: ``report.games``: every game of the perf with its period and reason, read on first use.
LazySelected = LazyList
