"""Lichess API game JSON (``/api/games/user/{u}``, NDJSON) → :class:`GameRecord`.

One function does the mapping, :func:`record_from_json`, used both for NDJSON files and for the
dicts berserk yields (where ``createdAt``/``lastMoveAt`` are already aware datetimes). It reads
every shape Lichess has produced: tournament ids as strings (``tournament``/``swiss``, older)
or objects (``arenaTour``/``swissTour``, since mid-2026); players with a user, without one
(anonymous, the AI), without a rating, or ``{}``.

:func:`read_ndjson` streams a file's lines: a byte-order mark and blank lines are ignored, a
line that is not a game is skipped and counted, and a last line cut in the middle (a download
that stopped) is reported as a truncation, with every game before it imported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal

import msgspec
from msgspec import UNSET, UnsetType

from tracker.core.evals import PlyEval, from_lichess_entry
from tracker.core.records import (
    BLACK_WINS,
    DRAW,
    WHITE_WINS,
    Analysis,
    GameRecord,
    Side,
    Source,
    invalid_value,
    unstorable_text,
)
from tracker.core.utc import MIN_EPOCH_MS, ms_to_datetime, utc_from_ms
from tracker.sources.files import (
    REPAIRED_ENCODING,
    SKIP_INVALID,
    SKIP_NOT_PLAYER,
    SKIP_TOO_LARGE,
    SKIP_TRUNCATED,
    ReadLog,
    decode_fallback,
    json_loads,
)
from tracker.sources.limits import MAX_NDJSON_GAME_BYTES, OversizedLine

#: Statuses of games that ended without a result (Lichess exports only finished games, but
#: ``noStart``, ``aborted`` and ``unknownFinish`` can still show up in old data).
UNFINISHED_STATUSES = frozenset({"created", "started", "aborted", "noStart", "unknownFinish"})

#: ``ai_level`` of a computer opponent whose level the export does not give: the side is
#: ``{}`` (no user, no name, no rating) in a game that is not known to be between humans.
UNKNOWN_AI_LEVEL: Final = 0

#: Game ``source`` values where a ``{}`` side is an anonymous human, not the AI.
_HUMAN_SOURCES = frozenset({"lobby", "friend", "pool", "arena", "swiss", "simul", "tournament"})

#: ``progress(games_seen)`` is called every this many lines.
PROGRESS_EVERY = 1000

_BOM = b"\xef\xbb\xbf"

#: A JSON escape of a surrogate or of NUL: the only way a line read from UTF-8 bytes gives a
#: text no database can store. Looked for only in a line that holds a backslash at all (none
#: of 2,917 real games does), so the import's hot path pays one ``memchr`` a game (0.08 µs
#: for a 730-byte line, against 16 µs to read it into a record).
_ESCAPE_OF_TROUBLE: Final = re.compile(r"\\u(?:[dD][89a-fA-F][0-9a-fA-F]{2}|0000)")


class RecordError(ValueError):
    """A game object that cannot be turned into a record (the message says why, one line)."""


class InvalidValue(RecordError):
    """A game object with a value of the wrong type or out of range (a ``createdAt`` of
    1e308, a rating of 10**30, ``"players": "x"``): skipped as "invalid value"."""


def _time(value: Any, field: str) -> datetime:
    if value.__class__ is int and value >= MIN_EPOCH_MS:  # the usual case, ms; checks as below
        return utc_from_ms(value)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)  # berserk's are aware; be safe with older ones
        return value.astimezone(UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return ms_to_datetime(value)
        except ValueError as exc:
            raise RecordError(f"{field}: {exc}") from None
    if isinstance(value, str) and value:
        # a game saved by a tool that wrote berserk's datetimes as ISO text
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            if parsed.tzinfo is None:
                return parsed.replace(tzinfo=UTC)
            return parsed.astimezone(UTC)
    raise RecordError(f"{field} missing or not a timestamp")


def _int(value: Any) -> int | None:
    # Exact-type fast paths first (a bool is not an int here): 9 calls a game on an import.
    if value is None:
        return None
    if value.__class__ is int:
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def _key(value: Any) -> str | None:
    """A variant/speed/perf field: a key string, or an object ``{"key": …}`` (older API)."""
    if value.__class__ is str:  # the usual case, without the slow isinstance(…, Mapping)
        return value or None
    if isinstance(value, Mapping):
        value = value.get("key") or value.get("name")
    return value if isinstance(value, str) and value else None


#: The largest ``|eval|`` (centipawns) or ``|mate|`` (moves) an export's analysis may hold: far
#: beyond any engine's output; a larger one is a broken value: that eval is dropped (the ply
#: is read without one) and counted (:attr:`Analysis.dropped`), the game kept.
MAX_EVAL: Final = 100_000
#: The import summary's reason for the games with an eval dropped so (``repaired``).
EVALS_DROPPED: Final = "with evals out of range dropped"


def analysis_from_json(entries: object) -> Analysis | None:
    """An export's ``analysis[]`` (one entry per ply: ``eval`` or ``mate``, ``best`` and
    ``judgment`` where Lichess judged the move) → :class:`~tracker.core.records.Analysis` from
    Lichess's server; ``None`` when absent or empty, or when an entry is malformed (a value
    of the wrong type: the game is imported without evals, never skipped). An eval out of
    range is dropped alone and counted (:func:`_checked_analysis`).
    """
    if entries.__class__ is not list or not entries:
        return None
    assert isinstance(entries, list)
    try:
        evals = tuple(from_lichess_entry(e) if isinstance(e, Mapping) else PlyEval(None, None)
                      for e in entries)
    except ValueError:
        return None
    return _checked_analysis(evals)


def _checked_analysis(evals: tuple[PlyEval, ...]) -> Analysis | None:
    """``evals`` with each one out of range dropped (no eval at its ply) and counted."""
    dropped = sum(1 for e in evals if not in_range(e))
    if dropped:
        evals = tuple(e if in_range(e) else e._replace(cp=None, mate=None) for e in evals)
    return Analysis(evals, dropped=dropped)


def in_range(e: PlyEval) -> bool:
    """Whether an eval's ``cp`` and ``mate`` are within :data:`MAX_EVAL` (or absent)."""
    return ((e.cp is None or -MAX_EVAL <= e.cp <= MAX_EVAL)
            and (e.mate is None or -MAX_EVAL <= e.mate <= MAX_EVAL))


def side_from_json(obj: Mapping[str, Any] | None, *, game_source: str | None = None) -> Side:
    """``players.white``/``players.black`` → :class:`Side`.

    Handles every shape Lichess has produced: a user with rating, the AI (``aiLevel``, no user,
    no rating), an anonymous player (no user), a player without account (``name``), and ``{}``.
    ``{}`` is the computer (level unknown, :data:`UNKNOWN_AI_LEVEL`) unless the game's
    ``source`` says it was paired between humans (then an anonymous player).
    """
    if not obj:
        if game_source in _HUMAN_SOURCES:
            return Side()
        return Side(ai_level=UNKNOWN_AI_LEVEL)
    user = obj.get("user") or {}
    if user.__class__ is not dict and not isinstance(user, Mapping):
        user = {}
    user_id = user.get("id") or (user.get("name") or "").lower() or None
    name = user.get("name") or obj.get("name") or None
    return Side(
        user_id=user_id.lower() if user_id else None,
        name=name,
        title=user.get("title") or None,
        rating=_int(obj.get("rating")),
        rating_diff=_int(obj.get("ratingDiff")),
        provisional=bool(obj.get("provisional", False)),
        ai_level=_int(obj.get("aiLevel")),
    )


def _result(obj: Mapping[str, Any]) -> str | None:
    winner = obj.get("winner")
    if winner == "white":
        return WHITE_WINS
    if winner == "black":
        return BLACK_WINS
    if winner is not None:  # Lichess sends "white", "black" or no winner (a draw)
        raise ValueError(f"winner {_short_repr(winner)} is neither white nor black")
    if _key(obj.get("status")) in UNFINISHED_STATUSES:
        return None
    return DRAW


def record_from_json(obj: Mapping[str, Any], *, source: Source = "ndjson", raw: str | None = None
                     ) -> GameRecord:
    """One Lichess game object → :class:`GameRecord`.

    ``createdAt``/``lastMoveAt`` may be integer ms since the epoch (UTC), aware datetimes
    (berserk) or ISO text. ``raw`` is the original line; by default the object is serialised
    again. Raises RecordError for an object that is not a game (no ``id`` or no
    ``createdAt``), InvalidValue (a RecordError) for one with a value of the wrong type or out
    of range (see :func:`tracker.core.records.invalid_value`): nothing else.
    """
    try:
        record = _record_from_json(obj, source, raw)
    except RecordError:
        raise
    except (AttributeError, TypeError, ValueError, OverflowError, KeyError) as exc:
        raise InvalidValue(f"invalid value ({type(exc).__name__}: {_short(exc)})") from None
    problem = invalid_value(record) or unstorable_text(record)
    if problem is not None:
        raise InvalidValue(f"invalid value: {problem}")
    return record


def _short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text[:120]


def _record_from_json(obj: Mapping[str, Any], source: Source, raw: str | None) -> GameRecord:
    gid = obj.get("id")
    if not isinstance(gid, str) or not gid:
        raise RecordError("not a Lichess game object: no 'id'")
    created = _time(obj.get("createdAt"), "createdAt")
    last = obj.get("lastMoveAt")
    players = obj.get("players") or {}
    moves = obj.get("moves")
    clock = obj.get("clock") or {}
    opening = obj.get("opening") or {}
    tournament = obj.get("tournament") or obj.get("swiss")
    if isinstance(tournament, Mapping):
        tournament = tournament.get("id")
    if not tournament:
        tour = obj.get("arenaTour") or obj.get("swissTour") or {}
        tournament = tour.get("id") if isinstance(tour, Mapping) else tour
    variant = _key(obj.get("variant")) or "standard"
    speed = _key(obj.get("speed"))
    perf = _key(obj.get("perf")) or (
        speed if variant in ("standard", "fromPosition") else variant
    )
    rated = obj.get("rated")
    game_source = obj.get("source") if isinstance(obj.get("source"), str) else None
    if raw is None:
        raw = json.dumps(obj, default=_json_default, separators=(",", ":"), ensure_ascii=False)
    return GameRecord(
        id=gid,
        source=source,
        created_at=created,
        last_move_at=_time(last, "lastMoveAt") if last is not None else None,
        rated=bool(rated) if rated is not None else None,
        variant=variant,
        speed=speed,
        perf=perf,
        status=_key(obj.get("status")),
        result=_result(obj),
        plies=len(moves.split()) if isinstance(moves, str) else None,
        clock_initial=_int(clock.get("initial")),
        clock_increment=_int(clock.get("increment")),
        days_per_turn=_int(obj.get("daysPerTurn")),
        initial_fen=obj.get("initialFen"),
        eco=opening.get("eco"),
        opening_name=opening.get("name"),
        tournament_id=str(tournament) if tournament else None,
        white=side_from_json(players.get("white"), game_source=game_source),
        black=side_from_json(players.get("black"), game_source=game_source),
        raw=raw,
        analysis=analysis_from_json(obj.get("analysis")),
    )


class _User(msgspec.Struct):
    id: str | None = None
    name: str | None = None
    title: str | None = None


class _Player(msgspec.Struct, forbid_unknown_fields=True):
    """``players.white``/``black`` as the exports write it; another key sends the line to the
    general path. UNSET tells a ``{}`` side (the AI, or an anonymous player) from one whose
    fields are null."""

    user: _User | UnsetType | None = UNSET
    name: str | UnsetType | None = UNSET
    rating: int | UnsetType | None = UNSET
    ratingDiff: int | UnsetType | None = UNSET
    provisional: bool | UnsetType | None = UNSET
    aiLevel: int | UnsetType | None = UNSET
    analysis: msgspec.Raw | UnsetType = UNSET
    berserk: msgspec.Raw | UnsetType = UNSET
    team: msgspec.Raw | UnsetType = UNSET


class _Players(msgspec.Struct):
    white: _Player | None = None
    black: _Player | None = None


class _Clock(msgspec.Struct):
    initial: int | None = None
    increment: int | None = None


class _Opening(msgspec.Struct):
    eco: str | None = None
    name: str | None = None


class _Judgment(msgspec.Struct):
    name: Literal["Inaccuracy", "Mistake", "Blunder"] | None = None


#: An eval or mate within :data:`MAX_EVAL`, checked by the decoder itself.
_Eval = Annotated[int, msgspec.Meta(ge=-MAX_EVAL, le=MAX_EVAL)]


class _Entry(msgspec.Struct):
    """One ``analysis[]`` entry (its ``variation`` and judgment ``comment`` are not read).
    A value out of range fails the typed decoder: the general path then reads the line."""

    cp: _Eval | None = msgspec.field(default=None, name="eval")
    mate: _Eval | None = None
    best: str | None = None
    judgment: _Judgment | None = None


class _Game(msgspec.Struct):
    """The fields of an export line the record reads, with the types the exports use."""

    id: str
    createdAt: int
    lastMoveAt: int | None = None
    rated: bool | None = None
    variant: str | None = None
    speed: str | None = None
    perf: str | None = None
    status: str | None = None
    source: str | None = None
    #: Any other winner fails this decoder: the general path reads the line and says why.
    winner: Literal["white", "black"] | None = None
    moves: str | None = None
    clock: _Clock | None = None
    opening: _Opening | None = None
    players: _Players | None = None
    daysPerTurn: int | None = None
    initialFen: str | None = None
    tournament: str | None = None
    swiss: str | None = None
    arenaTour: msgspec.Raw | None = None
    swissTour: msgspec.Raw | None = None
    #: Decoded only when the line has it: a game without evals costs nothing more.
    analysis: list[_Entry | None] | None = None


_decode_game = msgspec.json.Decoder(_Game).decode
_MIN_MS: Final = 10**11


def _typed_side(p: _Player | None, game_source: str | None) -> Side:
    """:func:`side_from_json` for a typed player (same result for the same JSON)."""
    if p is None or (p.user is UNSET and p.name is UNSET and p.rating is UNSET
                     and p.ratingDiff is UNSET and p.provisional is UNSET and p.aiLevel is UNSET
                     and p.analysis is UNSET and p.berserk is UNSET and p.team is UNSET):
        if game_source in _HUMAN_SOURCES:
            return Side()
        return Side(ai_level=UNKNOWN_AI_LEVEL)
    user = p.user or _NO_USER
    user_id = user.id or (user.name or "").lower() or None
    rating, diff, ai = p.rating, p.ratingDiff, p.aiLevel
    return Side(  # positional (a third cheaper than by keyword, twice a game): Side's field order
        user_id.lower() if user_id else None,  # user_id
        user.name or p.name or None,  # name
        user.title or None,  # title
        rating if rating.__class__ is int else None,  # rating
        diff if diff.__class__ is int else None,  # rating_diff
        bool(p.provisional),  # provisional
        ai if ai.__class__ is int else None,  # ai_level
    )


def _plies(moves: str) -> int:
    """``len(moves.split())``: the moves counted by their spaces when they are the usual one
    space apart (a fifth of the time of splitting them into a list), else split."""
    if moves.isprintable() and moves[:1] != " " and moves[-1:] != " " and "  " not in moves:
        # printable: no whitespace but the ASCII space (no tab, line end or Unicode space)
        return moves.count(" ") + 1 if moves else 0
    return len(moves.split())


_NO_USER: Final = _User()


def typed_record(line: str | bytes, raw: str, source: Source = "ndjson") -> GameRecord | None:
    """The record of one export line through a typed decoder (msgspec) straight into the
    fields it reads, or ``None`` when the line is not in the exports' usual shape (other
    types, an old key form, bad JSON): then :func:`record_from_json` over ``json.loads``
    decides, so the record (or the error) is always the one that path gives."""
    try:
        g = _decode_game(line)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    if not g.id or g.createdAt < _MIN_MS or (g.lastMoveAt is not None and g.lastMoveAt < _MIN_MS):
        return None
    variant = g.variant or "standard"
    speed = g.speed or None
    clock = g.clock
    opening = g.opening
    players = g.players
    tournament: Any = g.tournament or g.swiss
    if not tournament and (g.arenaTour is not None or g.swissTour is not None):
        # an object since mid-2026: read as record_from_json reads it
        tour = (json.loads(g.arenaTour) if g.arenaTour is not None else None) or (
            json.loads(g.swissTour) if g.swissTour is not None else None) or {}
        tournament = tour.get("id") if isinstance(tour, Mapping) else tour
    winner = g.winner
    status = g.status or None
    # Positional, in GameRecord's field order (a quarter cheaper than by keyword, once a game
    # on an import's hot path); test_ndjson_typed checks the record equals the general path's.
    return GameRecord(
        g.id,  # id
        source,  # source
        utc_from_ms(g.createdAt),  # created_at
        _typed_side(players.white if players else None, g.source),  # white
        _typed_side(players.black if players else None, g.source),  # black
        utc_from_ms(g.lastMoveAt) if g.lastMoveAt is not None else None,  # last_move_at
        g.rated,  # rated
        variant,  # variant
        speed,  # speed
        g.perf or (speed if variant in ("standard", "fromPosition") else variant),  # perf
        status,  # status
        (WHITE_WINS if winner == "white" else BLACK_WINS if winner == "black"
         else None if status in UNFINISHED_STATUSES else DRAW),  # result
        _plies(g.moves) if g.moves is not None else None,  # plies
        clock.initial if clock is not None else None,  # clock_initial
        clock.increment if clock is not None else None,  # clock_increment
        g.daysPerTurn,  # days_per_turn
        g.initialFen,  # initial_fen
        opening.eco if opening is not None else None,  # eco
        opening.name if opening is not None else None,  # opening_name
        str(tournament) if tournament else None,  # tournament_id
        raw,  # raw
        _typed_analysis(g.analysis) if g.analysis else None,  # analysis
    )


def _typed_analysis(entries: list[_Entry | None]) -> Analysis:
    """:func:`analysis_from_json` for typed entries (the same result for the same JSON; the
    decoder has checked the ranges)."""
    return Analysis(tuple([
        _NO_EVAL if e is None else
        PlyEval(e.cp, e.mate, e.best, None if e.judgment is None else e.judgment.name)
        for e in entries]))


_NO_EVAL: Final = PlyEval(None, None)


def _checked_record(line: str, source: Source) -> GameRecord:
    """The record of one line, the typed decoder first, then :func:`_record_of_line`; every
    value checked (:func:`tracker.core.records.invalid_value`). Raises InvalidValue for a value
    of the wrong type or out of range, RecordError or ValueError for a line that is no game."""
    try:
        record = typed_record(line, line, source)
    except (OverflowError, ValueError, TypeError):  # e.g. a createdAt beyond year 9999
        record = None
    if record is None:
        return _record_of_line(line, source)  # checked by record_from_json
    problem = invalid_value(record)
    if problem is None and "\\" in line and _ESCAPE_OF_TROUBLE.search(line):
        problem = unstorable_text(record)
    if problem is not None:
        raise InvalidValue(f"invalid value: {problem}")
    return record


def _record_of_line(line: str, source: Source) -> GameRecord:
    """``json_loads`` and :func:`record_from_json`: every shape Lichess has produced."""
    obj = json_loads(line)
    if not isinstance(obj, dict):
        raise RecordError("not a JSON object")
    return record_from_json(obj, source=source, raw=line)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def read_ndjson(
    lines: Iterable[bytes] | Iterable[str],
    *,
    source: Source = "ndjson",
    players: Collection[str] | None = None,
    log: ReadLog | None = None,
    errors: list[str] | None = None,
    progress: Callable[[int], None] | None = None,
    max_line_bytes: int = MAX_NDJSON_GAME_BYTES,
) -> Iterator[GameRecord]:
    """Parse NDJSON lines (bytes or text) lazily; yields records, never holds the file.

    A line longer than ``max_line_bytes`` (or an :class:`~tracker.sources.limits.OversizedLine`
    the line reader did not hold) is skipped as "game too large", unparsed.

    Blank lines and a byte-order mark are ignored. A line that is not a game (bad JSON, or an
    object without id) is skipped and counted in ``log`` as "truncated or invalid line"
    (``"line N: reason"`` in ``log.messages`` and in ``errors`` when given). When that line is
    the last one and has no line end, the input was cut: ``log.truncated`` says so. A line
    that is not UTF-8 is read as cp1252 and counted as repaired. ``players``: keep only games
    of these names (the others are counted as "not the player's game").
    """
    log = log if log is not None else ReadLog()
    wanted = {p.strip().lower() for p in players} if players else None
    dropped = 0
    last_bad: tuple[int, bool] | None = None  # (line, had a line end) of the last bad line
    each: Iterable[bytes | str] = lines
    try:
        for lineno, line in enumerate(each, 1):
            if progress is not None and lineno % PROGRESS_EVERY == 0:
                progress(lineno)
            if len(line) > max_line_bytes or line.__class__ is OversizedLine:
                _skip_too_large(log, lineno, line, max_line_bytes)
                continue
            decoded = _decoded(line)
            if decoded is None:  # a blank line
                continue
            text, repaired, ends = decoded
            last_bad = None
            if wanted is not None and not any(w in text.lower() for w in wanted):
                dropped += 1  # a game of others: not even parsed (its names are not in it)
                continue
            try:
                record = _checked_record(text, source)
            except (ValueError, RecordError, RecursionError) as exc:  # JSONDecodeError too
                if _skip_bad(log, errors, lineno, exc):
                    last_bad = (lineno, ends)
                continue
            if wanted is not None and record.white.user_id not in wanted and (
                record.black.user_id not in wanted
            ):
                dropped += 1
                continue
            if repaired:
                log.repair(REPAIRED_ENCODING, f"line {lineno}: not UTF-8, read as cp1252")
            yield record
        _note_cut(log, last_bad)
    finally:
        _count_dropped(log, dropped)


def _skip_too_large(log: ReadLog, lineno: int, line: bytes | str, max_line_bytes: int) -> None:
    size = getattr(line, "size", len(line))
    log.skip(SKIP_TOO_LARGE, f"line {lineno}: a game of {size:,} bytes, over the limit of "
             f"{max_line_bytes:,}: skipped")


def _decoded(line: bytes | str) -> tuple[str, bool, bool] | None:
    """A line as ``(text stripped, repaired, has a line end)``: UTF-8, else cp1252
    (repaired); a byte-order mark removed. ``None`` for a blank line."""
    if isinstance(line, str):
        text = line.strip().lstrip("\ufeff").strip()
        return (text, False, line.endswith("\n")) if text else None
    raw = line.strip()
    if raw[:3] == _BOM:
        raw = raw[3:].strip()
    if not raw:
        return None
    try:
        return raw.decode("utf-8"), False, line.endswith(b"\n")
    except UnicodeDecodeError:
        return decode_fallback(raw), True, line.endswith(b"\n")


def _skip_bad(log: ReadLog, errors: list[str] | None, lineno: int, exc: Exception) -> bool:
    """Count a line that is no game, or a game with a bad value; True when it may be the
    sign of a cut file (a whole game with a bad value is not)."""
    message = f"line {lineno}: {_reason(exc)}"
    invalid = isinstance(exc, InvalidValue)
    log.skip(SKIP_INVALID if invalid else SKIP_TRUNCATED, message)
    if errors is not None:
        errors.append(message)
    return not invalid


def _note_cut(log: ReadLog, last_bad: tuple[int, bool] | None) -> None:
    """A bad last line without a line end: the input was cut there."""
    if last_bad is not None and not last_bad[1]:
        log.truncated = (
            f"the last line ({last_bad[0]}) is cut in the middle of a game: the file is "
            "incomplete; every game before it was read"
        )


def _count_dropped(log: ReadLog, dropped: int) -> None:
    if dropped:
        log.skip(SKIP_NOT_PLAYER, n=dropped)


def _reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return "invalid or truncated JSON"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    return _short(exc)
