"""FIDE's own ratings as Lichess serves them: the records and their decoding (pure, no I/O).

Two endpoints (spec ``SCALE.md``, "The real FIDE rating"); :mod:`tracker.sources.fide_api`
fetches them:

- ``GET /api/fide/player/{fideId}`` → ``{"id", "name", "federation", "year", "title",
  "standard", "rapid", "blitz"}``; an absent key means no rating (or no title).
  :func:`parse_profile` → :class:`FideProfile`.
- ``GET /api/fide/player/{fideId}/ratings`` → ``{"standard": [...], "rapid": [...],
  "blitz": [...]}``, each entry an integer ``YYYYMMRRRR``: the list of month ``YYYY-MM``
  published the rating ``RRRR`` (``2011091584`` = September 2011, 1584). Months with no
  change may be missing: a rating stays in force until the next entry.
  :func:`parse_rating_lists` → ``{kind: [ListEntry, …]}``.

JSON in, typed records out (:class:`FideProfile`, :class:`ListEntry`: defined in
:mod:`tracker.core.fide_records`, re-exported here): a malformed entry is skipped and described in
``errors`` (a list the caller passes), never a crash. Ratings are FIDE rating points
(integers); months are ``"YYYY-MM"`` strings (calendar months, as FIDE publishes its lists).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from tracker.core.errors import TrackerError
from tracker.core.fide_records import (
    LIST_KINDS,
    FidePlayerData,
    FideProfile,
    ListEntry,
    ListKind,
    month_str,
    next_month,
    parse_month,
)

__all__ = [
    "LIST_KINDS",
    "FideError",
    "FideIdError",
    "FidePlayerData",
    "FideProfile",
    "ListEntry",
    "ListKind",
    "UnknownFideIdError",
    "decode_entry",
    "decode_list",
    "month_str",
    "next_month",
    "parse_fide_id",
    "parse_month",
    "parse_profile",
    "parse_rating_lists",
]

#: FIDE ids are positive integers of at most 10 digits (today's are 8-9 digits).
MAX_FIDE_ID: Final = 9_999_999_999
#: A month's published rating, in rating points: anything outside is not a FIDE rating (the
#: floor has been 1000–2200 over the years; no one has reached 3000).
MIN_LIST_RATING: Final = 100
MAX_LIST_RATING: Final = 3500
#: FIDE's first rating list is from 1971; an entry before it, or after next year, is garbage
#: (a list dated 2199 would carry a rating in force, month by month, for 170 years).
MIN_LIST_YEAR: Final = 1970

class FideError(TrackerError):
    """Lichess cannot be reached or refused a FIDE request (one line, never the token)."""


class UnknownFideIdError(FideError, LookupError):
    """Lichess knows no FIDE player with that id (HTTP 404): nothing is stored. Exit code 1,
    as for an unknown player (a malformed id is FideIdError, exit 2)."""

    exit_code = 1


class FideIdError(FideError, ValueError):
    """The text given is not a FIDE id (a positive integer of at most 10 digits)."""

    exit_code = 2


# -- decoding (pure) ------------------------------------------------------------------------


def parse_fide_id(value: str | int) -> int:
    """A FIDE id from user input (``"35009192"`` or an int); FideIdError otherwise.

    >>> parse_fide_id(" 35009192 ")
    35009192
    """
    if isinstance(value, bool):
        raise FideIdError(f"{value!r} is not a FIDE id (a positive number)")
    text = str(value).strip()
    if not text.isascii() or not text.isdigit() or not 0 < int(text) <= MAX_FIDE_ID:
        raise FideIdError(f"{str(value)!r} is not a FIDE id (a positive number, up to 10 digits)")
    return int(text)


def decode_entry(entry: object) -> ListEntry:
    """A rating-list entry ``YYYYMMRRRR`` → its month and rating; ValueError with the reason
    (a year from 1970 to next year, a month 1–12, a rating 100–3500).

    >>> decode_entry(2011091584)
    ListEntry(month='2011-09', rating=1584)
    """
    if isinstance(entry, bool) or not isinstance(entry, int):
        raise ValueError(f"not an integer YYYYMMRRRR: {entry!r}")
    if entry < 0:
        raise ValueError(f"negative: {entry}")
    year, rest = divmod(entry, 1_000_000)
    month, rating = divmod(rest, 10_000)
    if not MIN_LIST_YEAR <= year <= datetime.now(UTC).year + 1:
        raise ValueError(f"year {year} out of range in {entry}")
    if not 1 <= month <= 12:
        raise ValueError(f"month {month} out of range in {entry}")
    if not MIN_LIST_RATING <= rating <= MAX_LIST_RATING:
        raise ValueError(f"rating {rating} out of range in {entry}")
    return ListEntry(month_str(year, month), rating)


def decode_list(entries: object, kind: str = "list",
                errors: list[str] | None = None) -> list[ListEntry]:
    """A list of ``YYYYMMRRRR`` entries → entries oldest first, one per month.

    A malformed entry is left out and described in ``errors`` (when given); so is a second,
    different rating for a month already seen (the first is kept). Not a list at all: no
    entries, one error.
    """
    if entries is None:
        return []
    if not isinstance(entries, list):
        if errors is not None:
            errors.append(f"FIDE {kind} list: not a list of entries ({type(entries).__name__})")
        return []
    by_month: dict[str, int] = {}
    for raw in entries:
        try:
            e = decode_entry(raw)
        except ValueError as exc:
            if errors is not None:
                errors.append(f"FIDE {kind} list: entry left out: {exc}")
            continue
        seen = by_month.get(e.month)
        if seen is None:
            by_month[e.month] = e.rating
        elif seen != e.rating and errors is not None:
            errors.append(f"FIDE {kind} list: {e.month} given twice ({seen}, then {e.rating}); "
                          f"kept {seen}")
    return [ListEntry(m, r) for m, r in sorted(by_month.items())]


def parse_rating_lists(data: object, errors: list[str] | None = None
                       ) -> dict[ListKind, list[ListEntry]]:
    """``/api/fide/player/{id}/ratings`` JSON → ``{kind: entries oldest first}`` for the three
    kinds (a kind absent from the answer is an empty list). Unknown keys are ignored."""
    if not isinstance(data, Mapping):
        if errors is not None:
            errors.append(f"FIDE ratings: not an object ({type(data).__name__})")
        data = {}
    return {kind: decode_list(data.get(kind), kind, errors) for kind in LIST_KINDS}


#: A current rating in a profile, in rating points (0 there means none).
MAX_PROFILE_RATING: Final = MAX_LIST_RATING
#: The earliest birth year taken from a profile; the latest is next year.
MIN_BIRTH_YEAR: Final = 1900
#: Characters the store keeps of a profile's texts (``fide_players`` columns).
MAX_NAME_CHARS: Final = 200
MAX_CODE_CHARS: Final = 8


def _note(errors: list[str] | None, key: str, value: object, why: str) -> None:
    if errors is not None:
        shown = repr(value)
        errors.append(f"FIDE profile: {key} left out: "
                      f"{shown if len(shown) <= 40 else shown[:37] + '...'} {why}")


def _opt_int(data: Mapping[str, Any], key: str, errors: list[str] | None, *,
             low: int = 1, high: int = MAX_PROFILE_RATING) -> int | None:
    """An optional integer in ``low..high`` (a rating 0: none, silently); ``None`` with a
    line in ``errors`` for anything else."""
    value = data.get(key)
    if value is None or (value == 0 and low == 1 and isinstance(value, int)
                         and not isinstance(value, bool)):
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        _note(errors, key, value, "is not a positive integer")
        return None
    if not low <= value <= high:
        _note(errors, key, value, f"is out of range ({low}–{high})")
        return None
    return value


def _text_problem(value: str, limit: int) -> str | None:
    """Why ``value`` cannot be stored as a profile text, ``None`` when it can."""
    if len(value) > limit:
        return f"is {len(value)} characters long (at most {limit})"
    if "\x00" in value:
        return "holds a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid text (a lone surrogate)"
    return None


def _opt_str(data: Mapping[str, Any], key: str, errors: list[str] | None = None,
             limit: int = MAX_CODE_CHARS) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        _note(errors, key, value, "is not text")
        return None
    if not value.strip():
        return None
    problem = _text_problem(value.strip(), limit)
    if problem is not None:
        _note(errors, key, value, problem)
        return None
    return value.strip()


def parse_profile(data: object, errors: list[str] | None = None, *,
                  this_year: int | None = None) -> FideProfile:
    """``/api/fide/player/{id}`` JSON → :class:`FideProfile`, every value checked before it
    can reach the store.

    The id (1 to :data:`MAX_FIDE_ID`) and the name (text of at most :data:`MAX_NAME_CHARS`
    characters) are required (ValueError without them); any other field that is missing or
    out of range becomes ``None`` (described in ``errors`` when malformed): the ratings must
    be 1–3500 (0: none), the birth year 1900 to ``this_year`` + 1 (default: the current UTC
    year), the federation and title texts of at most :data:`MAX_CODE_CHARS` characters.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"not a FIDE player object ({type(data).__name__})")
    fide_id = data.get("id")
    if isinstance(fide_id, bool) or not isinstance(fide_id, int) or not (
            0 < fide_id <= MAX_FIDE_ID):
        shown = repr(fide_id)
        raise ValueError("a FIDE player without a valid id: "
                         + (shown if len(shown) <= 40 else shown[:37] + "..."))
    raw_name = data.get("name")
    name = raw_name.strip() if isinstance(raw_name, str) else None
    if not name:
        raise ValueError(f"the FIDE player {fide_id} has no name")
    problem = _text_problem(name, MAX_NAME_CHARS)
    if problem is not None:
        raise ValueError(f"the FIDE player {fide_id}'s name {problem}")
    year = datetime.now(UTC).year if this_year is None else this_year
    return FideProfile(
        fide_id=fide_id,
        name=name,
        federation=_opt_str(data, "federation", errors),
        birth_year=_opt_int(data, "year", errors, low=MIN_BIRTH_YEAR, high=year + 1),
        title=_opt_str(data, "title", errors),
        standard=_opt_int(data, "standard", errors),
        rapid=_opt_int(data, "rapid", errors),
        blitz=_opt_int(data, "blitz", errors),
    )
