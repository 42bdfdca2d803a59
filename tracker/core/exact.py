"""Exact numbers as text: points as JSON shows them, amounts to a fixed number of decimals,
and :func:`dumps`, the one place an exact number becomes JSON text.

Light on purpose (the standard library only): ``tracker calc`` and the report's JSON share it
without loading the store.
"""

from __future__ import annotations

import json
import re
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any, Final

#: Words whose plural is not the word + "s".
_PLURALS: Final = {"inaccuracy": "inaccuracies"}


def plural(n: int, word: str, sep: str = "") -> str:
    """A count with its word, singular for one: ``"1 game"``, ``"2 games"``, ``"1 blunder"``,
    ``"3 inaccuracies"``; ``sep=","`` separates thousands (``"2,907 games"``)."""
    return f"{n:{sep}} {word if n == 1 else _PLURALS.get(word, word + 's')}"


def points(x: Fraction) -> int | Decimal:
    """Points (a multiple of ½) as JSON shows them: ``1``, ``0``, ``7.5``."""
    return int(x) if x.denominator == 1 else Decimal(x.numerator) / Decimal(x.denominator)


def shown(x: Fraction | Decimal | None, places: str = "0.01") -> Decimal | None:
    """An exact amount as a Decimal with ``places`` decimals, rounded half up for display only
    (table amounts are exact hundredths and come out unchanged)."""
    if x is None:
        return None
    d = Decimal(x.numerator) / Decimal(x.denominator) if isinstance(x, Fraction) else x
    return d.quantize(Decimal(places), rounding=ROUND_HALF_UP)


def figure(x: int | Fraction | Decimal, *, signed: bool = False) -> str:
    """An exact number as text for people, on every Python (``Fraction`` takes no format spec
    before 3.12): an integer as ``1549``; a fraction with a finite decimal expansion exactly
    (``3099/2`` → ``1549.5``); any other fraction to two decimals, rounded half up for display
    only (``1/3`` → ``0.33``); a Decimal as written (``15.20``, never ``1.52E+1``).
    ``signed``: a ``+`` before a positive number (a change: ``+2.5``; zero stays ``0``)."""
    if isinstance(x, Fraction):
        den = x.denominator
        for p in (2, 5):
            while den % p == 0:
                den //= p
        if x.denominator == 1:
            text = str(x.numerator)
        elif den == 1:  # terminating: exact (the context's 28 digits hold any rating)
            text = format(Decimal(x.numerator) / Decimal(x.denominator), "f")
        else:
            text = format(shown(x), "f")
    elif isinstance(x, Decimal):
        text = format(x, "f")
    else:
        text = str(int(x))
    return f"+{text}" if signed and x > 0 else text


_DECIMAL_TOKEN = re.compile(r'"\\u0000dec:(-?[0-9.]+)"')


def _jsonable(o: Any) -> Any:
    # Exact numbers become a marked string that dumps() turns back into a bare JSON number.
    if isinstance(o, dict):
        return {k: _jsonable(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [_jsonable(v) for v in o]
    if isinstance(o, Decimal):
        return f"\u0000dec:{o}"
    if isinstance(o, Fraction):
        return f"\u0000dec:{points(o)}"
    if isinstance(o, date):
        return o.isoformat()
    return o


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    """JSON with :class:`~decimal.Decimal` written as exact numbers (``15.20``, never
    ``15.199999``): the output boundary is the only place a number becomes text."""
    return _DECIMAL_TOKEN.sub(r"\1", json.dumps(_jsonable(obj), indent=indent,
                                                ensure_ascii=False))
