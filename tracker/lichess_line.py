"""The real Lichess (Glicko-2) rating line of a player in a perf, from their games.

Lichess takes ``rating`` when a game starts and applies ``ratingDiff`` to the rating the player
has when it ends (spec LICHESS.md). Walking the games in end order, a game that started after
the previous one ended has post-game rating ``rating + ratingDiff``; one that started before
(correspondence, games in parallel) carries a stale ``rating``, so its post-game rating is the
previous post-game rating + ``ratingDiff``. This module shows Lichess's number; it never
recomputes Glicko-2.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from tracker.records import GameRecord, month_of


@dataclass(frozen=True, slots=True)
class LichessPoint:
    """The player's Lichess rating (rating points) right after the game ``game_id`` ended."""

    at: datetime  # the game's end (its start where unknown), aware UTC
    game_id: str
    rating: int


def lichess_line(games: Iterable[GameRecord], user_id: str) -> list[LichessPoint]:
    """Post-game Lichess ratings of ``user_id``, one per rated game with a ``ratingDiff``.

    ``games`` must be one perf's games in end-time order (as
    :func:`tracker.store.queries.player_games` returns them); other games are ignored.
    """
    uid = user_id.lower()
    out: list[LichessPoint] = []
    prev_end: datetime | None = None
    prev_post: int | None = None
    for g in games:
        color = g.color_of(uid)
        if color is None or not g.rated:
            continue
        me = g.side(color)
        if me.rating is None or me.rating_diff is None:
            continue
        if prev_post is not None and prev_end is not None and g.created_at < prev_end:
            post = prev_post + me.rating_diff  # stale start rating: the game overlapped
        else:
            post = me.rating + me.rating_diff
        end = g.ended_at
        out.append(LichessPoint(end, g.id, post))
        prev_end, prev_post = end, post
    return out


def monthly_last(points: Iterable[LichessPoint]) -> dict[str, int]:
    """The last Lichess rating in each UTC month (``"YYYY-MM"`` → rating points)."""
    out: dict[str, int] = {}
    for p in points:
        out[month_of(p.at)] = p.rating
    return out
