"""The real FIDE rating's records: a FIDE profile, a month of a rating list, a fetch.

What :mod:`tracker.sources.fide` decodes from Lichess's FIDE answers and
:mod:`tracker.store.fide` keeps. Ratings are FIDE rating points (integers); months are
``"YYYY-MM"`` strings (calendar months, as FIDE publishes its lists); they sort as text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

ListKind = Literal["standard", "rapid", "blitz"]
#: FIDE's three rating lists, in the order FIDE names them.
LIST_KINDS: Final[tuple[ListKind, ...]] = get_args(ListKind)

_MONTH: Final = re.compile(r"^(\d{4})-(\d{2})$")


@dataclass(frozen=True, slots=True)
class FideProfile:
    """A FIDE player as ``/api/fide/player/{id}`` gives it.

    ``standard``/``rapid``/``blitz``: the current published ratings in FIDE rating points,
    ``None`` where the player has none. ``birth_year``: FIDE's ``year`` field. ``title``:
    FIDE's title code (``GM``, ``IM``, ``WFM``…) or ``None``. ``federation``: FIDE's
    three-letter code (``IND``).
    """

    fide_id: int
    name: str
    federation: str | None = None
    birth_year: int | None = None
    title: str | None = None
    standard: int | None = None
    rapid: int | None = None
    blitz: int | None = None

    def rating(self, kind: ListKind) -> int | None:
        """The current rating on the ``kind`` list (rating points), or ``None``."""
        value: int | None = getattr(self, kind)
        return value


@dataclass(frozen=True, slots=True)
class ListEntry:
    """One published month of one rating list: the rating (rating points) of list ``month``
    (``"YYYY-MM"``)."""

    month: str
    rating: int


@dataclass(frozen=True, slots=True)
class FidePlayerData:
    """What a fetch brings: the profile, the lists (``{kind: entries, oldest first}``, every
    kind present, possibly empty), and one line per entry left out."""

    profile: FideProfile
    lists: dict[ListKind, list[ListEntry]]
    errors: list[str] = field(default_factory=list)


def month_str(year: int, month: int) -> str:
    """``(2011, 9)`` → ``"2011-09"``."""
    return f"{year:04d}-{month:02d}"


def parse_month(text: str) -> tuple[int, int]:
    """``"2011-09"`` → ``(2011, 9)``; ValueError for anything else."""
    m = _MONTH.fullmatch(text.strip())
    if m is None or not 1 <= int(m.group(2)) <= 12:
        raise ValueError(f"a month is YYYY-MM, got {text!r}")
    return int(m.group(1)), int(m.group(2))


def next_month(month: str) -> str:
    """The month after ``month`` (``"2011-12"`` → ``"2012-01"``)."""
    year, mon = parse_month(month)
    return month_str(year + mon // 12, mon % 12 + 1)
