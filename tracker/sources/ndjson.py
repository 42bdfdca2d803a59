"""Lichess API game JSON (``/api/games/user/{u}``, NDJSON) → :class:`GameRecord`.

One function does the mapping, :func:`record_from_json`, used both for NDJSON files and for the
dicts berserk yields (where ``createdAt``/``lastMoveAt`` are already aware datetimes).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from tracker.records import BLACK_WINS, DRAW, WHITE_WINS, GameRecord, Side, Source, ms_to_datetime

#: Statuses of games that ended without a result (Lichess exports only finished games, but
#: ``noStart``, ``aborted`` and ``unknownFinish`` can still show up in old data).
UNFINISHED_STATUSES = frozenset({"created", "started", "aborted", "noStart", "unknownFinish"})


class RecordError(ValueError):
    """A game object that cannot be turned into a record (the message says why, one line)."""


def _time(value: Any, field: str) -> datetime:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)  # berserk's are aware; be safe with older ones
        return value.astimezone(UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return ms_to_datetime(value)  # type: ignore[arg-type]
        except ValueError as exc:
            raise RecordError(f"{field}: {exc}") from None
    raise RecordError(f"{field} missing or not a timestamp")


def _int(value: Any) -> int | None:
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


def side_from_json(obj: Mapping[str, Any] | None) -> Side:
    """``players.white``/``players.black`` → :class:`Side`.

    Handles every shape Lichess has produced: a user with rating, the AI (``aiLevel``, no user,
    no rating), an anonymous player (no user), a player without account (``name``), and ``{}``.
    """
    if not obj:
        return Side()
    user = obj.get("user") or {}
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
    if obj.get("status") in UNFINISHED_STATUSES:
        return None
    return DRAW


def record_from_json(obj: Mapping[str, Any], *, source: Source = "ndjson", raw: str | None = None
                     ) -> GameRecord:
    """One Lichess game object → :class:`GameRecord`.

    ``createdAt``/``lastMoveAt`` may be integer ms since the epoch (UTC) or aware datetimes
    (berserk). ``raw`` is the original line; by default the object is serialised again.
    Raises RecordError for an object that is not a game (no ``id`` or no ``createdAt``).
    """
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
    if not tournament:
        tour = obj.get("arenaTour") or obj.get("swissTour") or {}
        tournament = tour.get("id") if isinstance(tour, Mapping) else None
    if raw is None:
        raw = json.dumps(obj, default=_json_default, separators=(",", ":"), ensure_ascii=False)
    return GameRecord(
        id=gid,
        source=source,
        created_at=created,
        last_move_at=_time(last, "lastMoveAt") if last is not None else None,
        rated=bool(obj.get("rated", False)),
        variant=obj.get("variant") or "standard",
        speed=obj.get("speed"),
        perf=obj.get("perf") or obj.get("speed"),
        status=obj.get("status"),
        result=_result(obj),
        plies=len(moves.split()) if isinstance(moves, str) else None,
        clock_initial=_int(clock.get("initial")),
        clock_increment=_int(clock.get("increment")),
        days_per_turn=_int(obj.get("daysPerTurn")),
        initial_fen=obj.get("initialFen"),
        eco=opening.get("eco"),
        opening_name=opening.get("name"),
        tournament_id=str(tournament) if tournament else None,
        white=side_from_json(players.get("white")),
        black=side_from_json(players.get("black")),
        raw=raw,
    )


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def read_ndjson(lines: Iterable[str], *, source: Source = "ndjson",
                errors: list[str] | None = None) -> Iterator[GameRecord]:
    """Parse NDJSON lines lazily; yields records, never holds the file in memory.

    Blank lines and a byte-order mark are ignored. A line that is not a game (bad JSON, e.g. a
    truncated last line, or an object without id) is skipped and described in ``errors``
    (``"line N: reason"``) when a list is given, so the caller can report it.
    """
    for lineno, line in enumerate(lines, 1):
        text = line.strip().lstrip("\ufeff")
        if not text:
            continue
        try:
            obj = json.loads(text)
            if not isinstance(obj, dict):
                raise RecordError("not a JSON object")
            yield record_from_json(obj, source=source, raw=text)
        except (ValueError, RecordError) as exc:  # JSONDecodeError is a ValueError
            if errors is not None:
                errors.append(f"line {lineno}: {_reason(exc)}")


def _reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return "invalid or truncated JSON"
    return str(exc)
