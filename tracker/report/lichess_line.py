"""The real Lichess (Glicko-2) rating line of a player in a perf, from their games.

Lichess takes ``rating`` when a game starts and applies ``ratingDiff`` to the rating the player
has when it ends (``docs/rules.md`` §9). Walking the games in end order, a game that started after
the previous one ended has post-game rating ``rating + ratingDiff``; one that started before
(correspondence, games in parallel) carries a stale ``rating``, so its post-game rating is the
previous post-game rating + ``ratingDiff``. This module shows Lichess's number; it never
recomputes Glicko-2.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from tracker.core.records import Color, month_of
from tracker.core.utc import utc_from_ms
from tracker.report.replay_pass import MonthOf
from tracker.report.selection import GameLike

T = TypeVar("T", datetime, int)


@dataclass(frozen=True, slots=True)
class LichessPoint:
    """The player's Lichess rating (rating points) right after the game ``game_id`` ended."""

    at: datetime  # the game's end (its start where unknown), aware UTC
    game_id: str
    rating: int


def post_game_rating(rating: int, diff: int, created: T, previous: tuple[T, int] | None
                     ) -> int:
    """The player's Lichess rating right after a game (the rule of this module's docstring).

    ``rating``/``diff``: the game's ``rating`` (at its start) and ``ratingDiff``; ``created``:
    its start; ``previous``: ``(end, post-game rating)`` of the player's previous rated game
    in end order, ``None`` for the first. Times are any comparable values of one kind (aware
    datetimes, or ms since the epoch)."""
    if previous is not None and created < previous[0]:
        return previous[1] + diff  # stale start rating: the game overlapped the previous one
    return rating + diff


class LichessLine:
    """The Lichess line built one game at a time (:meth:`add`), in end-time order; what
    :func:`lichess_line` does over a list, for a caller that walks the games itself."""

    __slots__ = ("_prev", "points")

    def __init__(self) -> None:
        self.points: list[LichessPoint] = []
        self._prev: tuple[datetime, int] | None = None

    def add(self, game: GameLike, color: Color) -> None:
        """Take the next game, played by the player on ``color`` (a game that moved no rating
        of theirs adds no point)."""
        if not game.rated:
            return
        me = game.side(color)
        if me.rating is None or me.rating_diff is None:
            return
        post = post_game_rating(me.rating, me.rating_diff, game.created_at, self._prev)
        end = game.ended_at
        self.points.append(LichessPoint(end, game.id, post))
        self._prev = (end, post)


class MsLine:
    """:class:`LichessLine` over stored values (times in ms since the epoch), for the replay's
    pass over 100k rows: the points are kept as three columns, ``ends`` (ms) and ``ratings``
    as arrays and the game ids as one ASCII text, an id and a newline each (a million points in
    ~20 MB); no datetime is built (:meth:`points` builds the :class:`LichessPoint` list when it
    is read)."""

    __slots__ = ("_ids", "_prev", "ends", "ratings")

    def __init__(self, ends: array[int] | None = None, ids: bytes | None = None,
                 ratings: array[int] | None = None) -> None:
        self.ends: array[int] = ends if ends is not None else array("q")
        self._ids = bytearray(ids or b"")
        self.ratings: array[int] = ratings if ratings is not None else array("i")
        if not len(self.ends) == self._ids.count(b"\n") == len(self.ratings):
            raise ValueError("a line's columns must have one value per point")
        self._prev: tuple[int, int] | None = (
            (self.ends[-1], self.ratings[-1]) if self.ends else None)

    def __len__(self) -> int:
        return len(self.ends)

    def add(self, game_id: str, created_ms: int, ended_ms: int, rated: object,
            rating: int | None, diff: int | None) -> None:
        """Take the next game of the player (see :meth:`LichessLine.add`)."""
        if not rated or rating is None or diff is None:
            return
        post = post_game_rating(rating, diff, created_ms, self._prev)
        self.ends.append(ended_ms)
        self._ids += game_id.encode()
        self._ids += b"\n"
        self.ratings.append(post)
        self._prev = (ended_ms, post)

    @property
    def ids(self) -> bytes:
        """The game ids as one text, each followed by a newline (UTF-8)."""
        return bytes(self._ids)

    @property
    def game_ids(self) -> list[str]:
        """The game id of each point."""
        return self._ids.decode().split("\n")[:-1]

    def points(self) -> list[LichessPoint]:
        """The points, as :class:`LichessLine` has them."""
        return [LichessPoint(utc_from_ms(end), gid, post) for end, gid, post in zip(
            self.ends, self.game_ids, self.ratings, strict=True)]

    def last(self) -> LichessPoint:
        """The last point (the line has one)."""
        start = self._ids.rfind(b"\n", 0, len(self._ids) - 1) + 1
        game_id = self._ids[start:-1].decode()
        return LichessPoint(utc_from_ms(self.ends[-1]), game_id, self.ratings[-1])

    def monthly_last(self) -> dict[str, int]:
        """:func:`monthly_last` of the points."""
        month = MonthOf()
        return {month(end): post for end, post in zip(self.ends, self.ratings, strict=True)}


def lichess_line(games: Iterable[GameLike], user_id: str) -> list[LichessPoint]:
    """Post-game Lichess ratings of ``user_id``, one per rated game with a ``ratingDiff``.

    ``games`` must be one perf's games in end-time order (as
    :func:`tracker.store.queries.player_games` returns them); other games are ignored.
    """
    uid = user_id.lower()
    line = LichessLine()
    for g in games:
        color = g.color_of(uid)
        if color is not None:
            line.add(g, color)
    return line.points


def monthly_last(points: Iterable[LichessPoint]) -> dict[str, int]:
    """The last Lichess rating in each UTC month (``"YYYY-MM"`` → rating points)."""
    out: dict[str, int] = {}
    for p in points:
        out[month_of(p.at)] = p.rating
    return out
