"""Which games count for a FIDE replay, with a reason for every game that does not.

The rule is ``docs/rules.md`` §5.

A game counts for a player's replay in a perf only if it is of that perf and standard chess,
rated, finished with a result after both players moved, and against a human opponent with a
numeric, non-provisional rating. Every other game of the perf gets exactly one reason, the
first that applies, in the order of :data:`REASONS`, so the counts per period add up.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final, Protocol

from tracker.core.records import BLACK_WINS, DRAW, WHITE_WINS, Color, GameRecord, Side, month_of
from tracker.core.utc import now_ms, utc_from_ms

# Reasons a game of the perf is left out, in the order they are checked. Who the opponent was
# comes before how the game was played: a game against the AI or an anonymous player is always
# casual too, and "opponent is the computer" / "opponent unrated" says more (cases C03, C04).
#: A game that ends after the replay is made (a mistyped date, a clock far ahead: a PGN game
#: dated 2999.01.01): no rating period can have rated it yet. Checked first.
FUTURE: Final = "dated in the future"
VARIANT: Final = "variant or from position"
CASUAL: Final = "casual"
RATED_UNKNOWN: Final = "rated unknown"
NO_RATING_CHANGE: Final = "rated without rating change"
UNFINISHED: Final = "unfinished or aborted"
UNPLAYED: Final = "fewer than 2 plies"
COMPUTER: Final = "opponent is the computer"
ANONYMOUS: Final = "anonymous opponent"
OPPONENT_UNRATED: Final = "opponent unrated"
PROVISIONAL: Final = "provisional opponent"

REASONS: Final = (
    FUTURE,
    VARIANT,
    COMPUTER,
    OPPONENT_UNRATED,
    ANONYMOUS,
    CASUAL,
    RATED_UNKNOWN,
    NO_RATING_CHANGE,
    UNFINISHED,
    UNPLAYED,
    PROVISIONAL,
)

class SideLike(Protocol):
    """What the selection and the Lichess line read of one side of a game (rating points).

    :class:`~tracker.core.records.Side` satisfies it, and so does the replay's reused row view
    (:class:`tracker.report.replay_pass.SideView`).
    """

    @property
    def user_id(self) -> str | None: ...
    @property
    def rating(self) -> int | None: ...
    @property
    def rating_diff(self) -> int | None: ...
    @property
    def provisional(self) -> bool: ...
    @property
    def is_computer(self) -> bool: ...
    @property
    def is_human_account(self) -> bool: ...


class GameLike(Protocol):
    """What the selection and the Lichess line read of a game: a
    :class:`~tracker.core.records.GameRecord`, or a stored row seen as one
    (:class:`tracker.report.replay_pass.RowView`). Times are aware UTC datetimes."""

    @property
    def id(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def rated(self) -> bool | None: ...
    @property
    def status(self) -> str | None: ...
    @property
    def result(self) -> str | None: ...
    @property
    def plies(self) -> int | None: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def ended_at(self) -> datetime: ...

    def side(self, color: Color) -> SideLike: ...
    def color_of(self, user_id: str) -> Color | None: ...


def other(color: Color) -> Color:
    """The opponent's colour."""
    return "black" if color == "white" else "white"


#: Statuses of games that were never really played (Lichess ``noStart``, aborted, abandoned).
UNPLAYED_STATUSES: Final = frozenset({"aborted", "noStart", "abandoned", "created", "started"})


@dataclass(frozen=True, slots=True)
class Selected:
    """One game of the perf as the replay sees it.

    ``period``: ``"YYYY-MM"``, the UTC month of the game's end (its start where the end is
    unknown). ``score_halves``: the player's score in half points (2 win, 1 draw, 0 loss),
    ``None`` for an unfinished game. ``reason``: ``None`` if the game counts, else why not.
    """

    game: GameRecord
    color: Color
    period: str
    score_halves: int | None
    reason: str | None

    @property
    def counts(self) -> bool:
        return self.reason is None

    @property
    def opponent_rating(self) -> int | None:
        opponent: Side = self.game.side(other(self.color))
        return opponent.rating


def score_halves(result: str | None, color: Color) -> int | None:
    """The player's score in half points from a PGN result, ``None`` for no result."""
    if result == DRAW:
        return 1
    if result == WHITE_WINS:
        return 2 if color == "white" else 0
    if result == BLACK_WINS:
        return 0 if color == "white" else 2
    return None


def exclusion_reason(game: GameLike, color: Color, *, count_provisional: bool = False
                     ) -> str | None:
    """Why ``game`` does not count for the player on ``color``, or ``None`` if it counts.

    The perf is not checked here (the caller selects the perf's games), nor the date (see
    :data:`FUTURE`: :func:`select_games` and the report's pass check it first).
    """
    me = game.side(color)
    opp = game.side(other(color))
    if game.variant != "standard":
        return VARIANT
    if opp.is_computer:
        return COMPUTER
    if opp.rating is None:  # "?" or "-" in PGN, an anonymous player, no rating in the JSON
        return OPPONENT_UNRATED
    if not opp.is_human_account:  # a rating but no account (e.g. "NN" in another site's PGN)
        return ANONYMOUS
    if game.rated is False:
        return CASUAL
    if game.rated is None:
        return RATED_UNKNOWN
    if game.source != "pgn" and me.rating_diff is None and opp.rating_diff is None:
        # The API always gives ratingDiff for a game that moved ratings; without one, Lichess
        # did not rate it (e.g. a game it voided), so neither do we. Flagged by this reason.
        return NO_RATING_CHANGE
    if game.result is None:
        return UNFINISHED
    if game.status in UNPLAYED_STATUSES or (game.plies is not None and game.plies < 2):
        return UNPLAYED
    if opp.provisional and not count_provisional:
        return PROVISIONAL
    return None


def select_games(games: list[GameRecord] | tuple[GameRecord, ...], user_id: str, perf: str, *,
                 count_provisional: bool = False, now: int | None = None) -> list[Selected]:
    """The player's games of ``perf``, each with its period, score and reason (or none).

    ``games`` are the player's games (any perf); games of other perfs or that the player did
    not play are dropped silently. Order is kept. ``now``: ms since the epoch UTC (default:
    now); a game that ends after it is left out as :data:`FUTURE`.
    """
    uid = user_id.lower()
    after = utc_from_ms(now_ms() if now is None else now)
    out: list[Selected] = []
    for g in games:
        if g.perf != perf:
            continue
        color = g.color_of(uid)
        if color is None:
            continue
        reason = (FUTURE if g.ended_at > after else
                  exclusion_reason(g, color, count_provisional=count_provisional))
        out.append(Selected(g, color, month_of(g.ended_at), score_halves(g.result, color), reason))
    return out
