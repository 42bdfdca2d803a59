"""The one normalized game record that every source produces.

Every importer (the Lichess API fetcher, the NDJSON reader, the PGN reader) turns its input
into :class:`GameRecord` values; the store writes them and the replay reads them back. Nothing
downstream of the sources knows which format a game came from, except through
:attr:`GameRecord.source` and the raw text kept in :attr:`GameRecord.raw`.

Times are aware :class:`datetime.datetime` values in UTC at this edge and nowhere else is a
naive time accepted. Ratings are Lichess Glicko-2 ratings in rating points, as integers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

# The time helpers, re-exported: records are where most callers meet them.
from tracker.utc import datetime_to_ms as datetime_to_ms
from tracker.utc import month_of as month_of
from tracker.utc import ms_to_datetime as ms_to_datetime

Source = Literal["api", "ndjson", "pgn"]
Color = Literal["white", "black"]

#: Results as PGN writes them. ``None`` stands for an unfinished or aborted game (``*``).
WHITE_WINS: Final = "1-0"
BLACK_WINS: Final = "0-1"
DRAW: Final = "1/2-1/2"
RESULTS: Final = (WHITE_WINS, BLACK_WINS, DRAW)

#: Lichess variant keys (``variant`` in the API). ``fromPosition`` is standard chess from a
#: set-up position.
VARIANTS: Final = (
    "standard",
    "chess960",
    "crazyhouse",
    "antichess",
    "atomic",
    "horde",
    "kingOfTheHill",
    "racingKings",
    "threeCheck",
    "fromPosition",
)

#: Lichess speed keys, fastest first.
SPEEDS: Final = ("ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence")

#: The perf keys of variants: the variant key, for every variant but standard chess (whose
#: perf is its speed, also from a set-up position).
VARIANT_PERFS: Final = tuple(v for v in VARIANTS if v not in ("standard", "fromPosition"))

#: Every Lichess perf key (the ``perf`` of a record, the ``perfType`` of the game export):
#: the speeds of standard chess, then the variants.
PERFS: Final = (*SPEEDS, *VARIANT_PERFS)


class SideChecks:
    """What a side *is*, from its fields; shared by :class:`Side` and the replay's row views."""

    __slots__ = ()
    user_id: str | None
    ai_level: int | None

    @property
    def is_computer(self) -> bool:
        """True for the Lichess AI (``aiLevel``), whatever else the record says."""
        return self.ai_level is not None

    @property
    def is_human_account(self) -> bool:
        """True when the side is a Lichess account (has a user id)."""
        return self.user_id is not None


class GameSides:
    """Finding a player in a game; shared by :class:`GameRecord` and the replay's row views."""

    __slots__ = ()
    white: Any
    black: Any

    def side(self, color: Color) -> Any:
        """The :class:`Side` that played ``color``."""
        return self.white if color == "white" else self.black

    def color_of(self, user_id: str) -> Color | None:
        """The colour ``user_id`` (any case) played, or ``None`` if they did not play."""
        uid = user_id.lower()
        if self.white.user_id == uid:
            return "white"
        if self.black.user_id == uid:
            return "black"
        return None


@dataclass(frozen=True, slots=True)
class Side(SideChecks):
    """One player of a game, as the source saw them when the game started.

    ``user_id`` is the lowercase Lichess user id, ``None`` for the Lichess AI, an anonymous
    player or a player without an account. ``rating`` is the Lichess rating at the game's start
    (rating points) and ``None`` when unknown (``?``/``-`` in PGN, the AI, anonymous players):
    never 0 or 1500 in its place. ``rating_diff`` is the change Lichess applied (``None`` when
    the game moved no rating). ``provisional`` means rating deviation >= 110. ``ai_level`` is
    1-8 for the Lichess AI, else ``None``.
    """

    user_id: str | None = None
    name: str | None = None
    title: str | None = None
    rating: int | None = None
    rating_diff: int | None = None
    provisional: bool = False
    ai_level: int | None = None


@dataclass(frozen=True, slots=True)
class GameRecord(GameSides):
    """A finished (or abandoned) game, normalized from any source.

    Shapes and units:

    - ``id``: the Lichess game id (8 characters) or, for a PGN game without a Lichess ``Site``,
      a stable id derived from its content (see :func:`tracker.sources.pgn.content_id`).
    - ``created_at``: the game's start, aware UTC datetime.
    - ``last_move_at``: the game's end (Lichess ``lastMoveAt``), aware UTC; ``None`` where the
      source does not know it (PGN).
    - ``rated``: ``True``/``False``, or ``None`` when the source does not say (old PGN exports).
    - ``variant``/``speed``/``perf``: Lichess keys (``perf`` is the variant key for variants,
      the speed for standard and ``fromPosition``).
    - ``result``: ``"1-0"``, ``"0-1"``, ``"1/2-1/2"`` or ``None`` for an unfinished game.
    - ``plies``: half-moves played, ``None`` where the moves are unknown.
    - ``clock_initial``/``clock_increment``: seconds; ``days_per_turn`` for correspondence.
    - ``raw``: the source text of this game (the NDJSON line or the PGN game), UTF-8, so that a
      new derived field never needs a re-download.
    """

    id: str
    source: Source
    created_at: datetime
    white: Side
    black: Side
    last_move_at: datetime | None = None
    rated: bool | None = None
    variant: str = "standard"
    speed: str | None = None
    perf: str | None = None
    status: str | None = None
    result: str | None = None
    plies: int | None = None
    clock_initial: int | None = None
    clock_increment: int | None = None
    days_per_turn: int | None = None
    initial_fen: str | None = None
    eco: str | None = None
    opening_name: str | None = None
    tournament_id: str | None = None
    raw: str = field(default="", repr=False)

    @property
    def ended_at(self) -> datetime:
        """The game's end where known, else its start (the moment that picks its rating period)."""
        return self.last_move_at or self.created_at
