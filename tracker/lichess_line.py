"""The real Lichess (Glicko-2) rating line of a player in a perf, from their games.

Lichess takes ``rating`` when a game starts and applies ``ratingDiff`` to the rating the player
has when it ends (``docs/rules.md`` §9). Walking the games in end order, a game that started after
the previous one ended has post-game rating ``rating + ratingDiff``; one that started before
(correspondence, games in parallel) carries a stale ``rating``, so its post-game rating is the
previous post-game rating + ``ratingDiff``. This module shows Lichess's number; it never
recomputes Glicko-2.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from tracker.records import Color, month_of
from tracker.selection import GameLike


@dataclass(frozen=True, slots=True)
class LichessPoint:
    """The player's Lichess rating (rating points) right after the game ``game_id`` ended."""

    at: datetime  # the game's end (its start where unknown), aware UTC
    game_id: str
    rating: int


class LichessLine:
    """The Lichess line built one game at a time (:meth:`add`), in end-time order; what
    :func:`lichess_line` does over a list, for a caller that walks the games itself."""

    __slots__ = ("_prev_end", "_prev_post", "points")

    def __init__(self) -> None:
        self.points: list[LichessPoint] = []
        self._prev_end: datetime | None = None
        self._prev_post: int | None = None

    def add(self, game: GameLike, color: Color) -> None:
        """Take the next game, played by the player on ``color`` (a game that moved no rating
        of theirs adds no point)."""
        if not game.rated:
            return
        me = game.side(color)
        if me.rating is None or me.rating_diff is None:
            return
        if self._prev_post is not None and self._prev_end is not None and (
            game.created_at < self._prev_end
        ):
            post = self._prev_post + me.rating_diff  # stale start rating: the game overlapped
        else:
            post = me.rating + me.rating_diff
        end = game.ended_at
        self.points.append(LichessPoint(end, game.id, post))
        self._prev_end, self._prev_post = end, post


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
