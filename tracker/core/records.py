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

from tracker.core.evals import PlyEval

# The time helpers, re-exported: records are where most callers meet them.
from tracker.core.utc import datetime_to_ms as datetime_to_ms
from tracker.core.utc import month_of as month_of
from tracker.core.utc import ms_to_datetime as ms_to_datetime

Source = Literal["api", "ndjson", "pgn"]
Color = Literal["white", "black"]
#: Where a game's evals came from: Lichess's server analysis (in an export) or a local engine.
AnalysisSource = Literal["lichess", "engine"]

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
class Analysis:
    """A game's evals, one per ply after each move (White's view, see
    :class:`~tracker.core.evals.PlyEval`), and where they came from.

    ``source`` ``"lichess"``: Lichess's server analysis as an export carries it (its ``best``
    and ``judgment`` only where Lichess judged the move); the checkmated final position has no
    eval, so a game ending in mate has one eval fewer than plies. ``"engine"``: a local
    analysis by ``engine`` ``engine_version`` (e.g. ``"Stockfish"``, ``"15.1"``) at ``nodes``
    nodes per position, with the engine's best move for every ply and no judgments.
    ``dropped``: the evals the source gave out of range (a broken value, e.g. 400 digits),
    read as no eval at their plies; the import counts them (not stored). ``calibration``: the
    id of the calibration that reads a local analysis's evals on Lichess's scale
    (:mod:`tracker.analysis.engine_calibration`), ``None`` where none covers the engine and
    budget (and for Lichess's evals).
    """

    evals: tuple[PlyEval, ...]
    source: AnalysisSource = "lichess"
    engine: str | None = None
    engine_version: str | None = None
    nodes: int | None = None
    dropped: int = 0
    calibration: str | None = None


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
    - ``analysis``: the evals the source carries (NDJSON ``analysis[]``, PGN ``[%eval …]``),
      or ``None`` for a game without them.
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
    analysis: Analysis | None = field(default=None, repr=False)

    @property
    def ended_at(self) -> datetime:
        """The game's end where known, else its start (the moment that picks its rating period)."""
        return self.last_move_at or self.created_at


#: The longest text each field may hold (the store's columns are this wide).
TEXT_LIMITS: Final = {
    "id": 32, "source": 8, "variant": 16, "speed": 16, "perf": 16, "status": 32, "result": 8,
    "eco": 8, "tournament_id": 64, "initial_fen": 200, "opening_name": 400,
}
SIDE_TEXT_LIMITS: Final = {"user_id": 64, "name": 128, "title": 8}
#: Inclusive ranges of the integer fields: far wider than any real game, and within the
#: store's 32-bit integer columns.
INT_RANGES: Final = {
    "plies": (0, 100_000), "clock_initial": (0, 10**7), "clock_increment": (0, 10**5),
    "days_per_turn": (0, 10**4),
}
SIDE_INT_RANGES: Final = {"rating": (0, 10_000), "rating_diff": (-10_000, 10_000),
                          "ai_level": (0, 8)}
#: Game times a record may carry (UTC years): before 1000 or after 2999 is a broken value.
YEARS: Final = (1000, 2999)


def _text_problem(name: str, value: object, limit: int, optional: bool = True) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        return f"{name} is not text ({type(value).__name__})"
    if len(value) > limit:
        return f"{name} is longer than {limit} characters"
    return None


def _int_problem(name: str, value: object, low: int, high: int) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{name} is not an integer ({type(value).__name__})"
    if not low <= value <= high:
        shown = str(value) if abs(value) < 10**12 else "(huge)"
        return f"{name} {shown} is outside {low}..{high}"
    return None


def _time_problem(name: str, value: object, optional: bool) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, datetime) or value.tzinfo is None:
        return f"{name} is not an aware datetime"
    if not YEARS[0] <= value.year <= YEARS[1]:
        return f"{name} year {value.year} is outside {YEARS[0]}..{YEARS[1]}"
    return None


def _side_ok(s: Any) -> bool:
    v: Any
    return bool(
        s.__class__ is Side and s.provisional.__class__ is bool
        and ((v := s.user_id) is None or (v.__class__ is str and len(v) <= 64))
        and ((v := s.name) is None or (v.__class__ is str and len(v) <= 128))
        and ((v := s.title) is None or (v.__class__ is str and len(v) <= 8))
        and ((v := s.rating) is None or (v.__class__ is int and 0 <= v <= 10_000))
        and ((v := s.rating_diff) is None or (v.__class__ is int and -10_000 <= v <= 10_000))
        and ((v := s.ai_level) is None or (v.__class__ is int and 0 <= v <= 8))
    )


def _plainly_valid(g: Any) -> bool:
    """True when :func:`why_invalid` finds nothing, checked the quick way: every field of
    :data:`TEXT_LIMITS`, :data:`INT_RANGES` and the sides' by name with its limit written out
    (checked against those tables below), exact types (``str``, ``int``, ``bool``,
    ``datetime``, :class:`Side`). False sends the record to the full check, which also says
    why: a record this accepts, that one accepts too. Every source calls it once per game:
    it is on the import's hot path."""
    v: Any
    return bool(
        (v := g.id) and v.__class__ is str and len(v) <= 32
        and (v := g.source).__class__ is str and len(v) <= 8
        and (v := g.variant).__class__ is str and len(v) <= 16
        and ((v := g.speed) is None or (v.__class__ is str and len(v) <= 16))
        and ((v := g.perf) is None or (v.__class__ is str and len(v) <= 16))
        and ((v := g.status) is None or (v.__class__ is str and len(v) <= 32))
        and ((v := g.result) is None or (v.__class__ is str and len(v) <= 8))
        and ((v := g.eco) is None or (v.__class__ is str and len(v) <= 8))
        and ((v := g.tournament_id) is None or (v.__class__ is str and len(v) <= 64))
        and ((v := g.initial_fen) is None or (v.__class__ is str and len(v) <= 200))
        and ((v := g.opening_name) is None or (v.__class__ is str and len(v) <= 400))
        and ((v := g.plies) is None or (v.__class__ is int and 0 <= v <= 100_000))
        and ((v := g.clock_initial) is None or (v.__class__ is int and 0 <= v <= 10**7))
        and ((v := g.clock_increment) is None or (v.__class__ is int and 0 <= v <= 10**5))
        and ((v := g.days_per_turn) is None or (v.__class__ is int and 0 <= v <= 10**4))
        and ((v := g.rated) is None or v.__class__ is bool)
        and (v := g.created_at).__class__ is datetime and v.tzinfo is not None
        and 1000 <= v.year <= 2999
        and ((v := g.last_move_at) is None or (
            v.__class__ is datetime and v.tzinfo is not None and 1000 <= v.year <= 2999))
        and g.raw.__class__ is str and _side_ok(g.white) and _side_ok(g.black)
    )


#: The limits :func:`_plainly_valid` writes out: a change to the tables must change it too.
_QUICK_LIMITS: Final = (
    {"id": 32, "source": 8, "variant": 16, "speed": 16, "perf": 16, "status": 32, "result": 8,
     "eco": 8, "tournament_id": 64, "initial_fen": 200, "opening_name": 400},
    {"plies": (0, 100_000), "clock_initial": (0, 10**7), "clock_increment": (0, 10**5),
     "days_per_turn": (0, 10**4)},
    {"user_id": 64, "name": 128, "title": 8},
    {"rating": (0, 10_000), "rating_diff": (-10_000, 10_000), "ai_level": (0, 8)},
    (1000, 2999),
)
if _QUICK_LIMITS != (TEXT_LIMITS, INT_RANGES, SIDE_TEXT_LIMITS, SIDE_INT_RANGES, YEARS):
    raise AssertionError("_plainly_valid is out of step with the limits: update it")


def invalid_value(record: GameRecord) -> str | None:
    """Why ``record`` cannot be stored as it is — a value of the wrong type or out of range
    (a time before the year 1000, a rating of 10**30, a name that is not text…) — or ``None``.

    Every source checks its records with it, so a value out of range never reaches the
    database: the game is skipped as "invalid value" instead.
    """
    return None if _plainly_valid(record) else why_invalid(record)


def _text_trouble(value: str | None) -> str | None:
    """What in ``value`` no database can store: a NUL character (PostgreSQL refuses it in
    text) or a lone surrogate (a JSON escape such as ``\\ud800`` alone decodes to one, and
    UTF-8 cannot encode it); ``None`` when it can be stored."""
    if value is None or (value.isascii() and "\x00" not in value):
        return None
    if "\x00" in value:
        return "a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "a lone surrogate (a \\ud800-\\udfff escape without its pair)"
    return None


def player_name_problem(name: str) -> str | None:
    """Why ``name``, a player's name a person typed (``--user``, a command's ``USERNAME``),
    can name no stored player — it holds a NUL or a lone surrogate (a command-line argument
    that is not UTF-8 arrives so), or it is longer than a side's ``user_id`` column — or
    ``None``. Checked before the name is looked up or written: no database takes it."""
    if "\x00" in name:
        return "it holds a NUL character"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "it is not UTF-8 text"
    limit = SIDE_TEXT_LIMITS["user_id"]
    if len(name.strip()) > limit:
        return f"it is {len(name.strip())} characters long (at most {limit})"
    return None


def unstorable_text(record: GameRecord) -> str | None:
    """Why a text of ``record`` cannot be stored — a field holding a NUL character or a lone
    surrogate, or a raw text holding a lone surrogate — or ``None``.

    Not part of :func:`invalid_value`'s quick check, which every game passes through: a source
    calls it when its input can hold such a character (a JSON line with a ``\\u`` escape of a
    surrogate or of NUL, a PGN game with a NUL byte, a game object from the API), and skips
    the game as "invalid value" when it says why."""
    for name in TEXT_LIMITS:
        trouble = _text_trouble(getattr(record, name))
        if trouble:
            return f"{name} holds {trouble}"
    for color in ("white", "black"):
        side = record.side(color)
        for name in SIDE_TEXT_LIMITS:
            trouble = _text_trouble(getattr(side, name))
            if trouble:
                return f"{color} {name} holds {trouble}"
    raw = record.raw
    if not raw.isascii():
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:
            return "the game's text holds a lone surrogate"
    return None


def why_invalid(record: GameRecord) -> str | None:
    """:func:`invalid_value` without its quick check: each field checked in turn, the first
    problem said."""
    if not record.id:
        return "no id"
    return (_game_fields_problem(record) or _side_problem("white", record.white)
            or _side_problem("black", record.black))


def _game_fields_problem(record: GameRecord) -> str | None:
    """The first problem of the game's own fields (texts, numbers, rated, times, raw text)."""
    for name, limit in TEXT_LIMITS.items():
        problem = _text_problem(name, getattr(record, name), limit,
                                optional=name not in ("id", "source", "variant"))
        if problem:
            return problem
    for name, (low, high) in INT_RANGES.items():
        problem = _int_problem(name, getattr(record, name), low, high)
        if problem:
            return problem
    rated: object = record.rated  # the types say bool; a source may still hand anything
    if rated is not None and not isinstance(rated, bool):
        return "rated is not true or false"
    problem = (_time_problem("createdAt", record.created_at, optional=False)
               or _time_problem("lastMoveAt", record.last_move_at, optional=True))
    if problem:
        return problem
    raw: object = record.raw
    return None if isinstance(raw, str) else "raw text is not text"


def _side_problem(color: str, side: object) -> str | None:
    """The first problem of one side (``color``: white or black), or ``None``."""
    if not isinstance(side, Side):
        return f"{color} is not a player"
    for name, limit in SIDE_TEXT_LIMITS.items():
        problem = _text_problem(f"{color} {name}", getattr(side, name), limit)
        if problem:
            return problem
    for name, (low, high) in SIDE_INT_RANGES.items():
        problem = _int_problem(f"{color} {name}", getattr(side, name), low, high)
        if problem:
            return problem
    provisional: object = side.provisional
    return None if isinstance(provisional, bool) else f"{color} provisional is not true or false"
