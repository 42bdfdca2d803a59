"""How a replay report is shown: the ``--json`` object, the periods CSV, one game's row, a
game's URL, and :func:`dumps`, the one place an exact number becomes text.

Nothing here computes a rating: it formats what :mod:`tracker.report` built.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Final

from tracker.selection import other

if TYPE_CHECKING:  # the report's types, for annotations only (tracker.report imports this)
    from tracker.fide.scale import Conversion
    from tracker.report import Band, GameDetail, PeriodRow, ReplayReport

#: The keys of one period in ``tracker replay --json``, in order (a contract: scripts use it).
PERIOD_KEYS: Final = (
    "period",
    "games",
    "excluded",
    "score",
    "expected_score",
    "k",
    "rating_before",
    "change",
    "rating_after",
    "performance",
    "lichess_rating",
)


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


def period_json(row: PeriodRow) -> dict[str, Any]:
    """One period with exactly :data:`PERIOD_KEYS` (Decimals for exact numbers)."""
    r = row.result
    return {
        "period": r.period,
        "games": r.games,
        "excluded": dict(sorted(row.excluded.items())),
        "score": points(r.score),
        "expected_score": shown(r.expected_score),
        "k": r.k,
        "rating_before": r.rating_before,
        "change": shown(r.change),
        "rating_after": r.rating_after,
        "performance": r.performance,
        "lichess_rating": row.lichess_rating,
    }


def band_json(band: Band) -> dict[str, Any]:
    """One period's band: ``min``, ``median`` (may end in .5), ``max``, ``models``."""
    return {
        "min": band.min,
        "median": None if band.median is None else points(band.median),
        "max": band.max,
        "models": dict(band.models),
    }


def conversion_json(conversions: Mapping[str, Conversion]) -> dict[str, Any]:
    """Conversions by model key as JSON: the Lichess rating, the model's own output and the
    FIDE rating on today's scale (``null`` = unrated), per model."""
    return {k: {"lichess": c.lichess, "model_output": c.output, "fide": c.rating}
            for k, c in conversions.items()}


def report_json(report: ReplayReport) -> dict[str, Any]:
    """The ``tracker replay --json`` object (numbers exact: see :func:`dumps`).

    On the Lichess scale without a real FIDE line it is the original contract: ``player``,
    ``perf``, ``rules``, ``expected``, ``periods`` (each with exactly :data:`PERIOD_KEYS`).
    On a FIDE scale (or with a real FIDE line) it also has ``scale``, ``scale_label``,
    ``chapter``; with a model, ``model`` (whose figures the periods hold), ``models`` and
    ``conversions`` (the current Lichess rating through each model covering the perf); with
    ``--scale all``, each period's ``band``; with a real FIDE line, each period's ``fide_real``
    and ``gap`` and the top-level ``mean_abs_gap``.
    """
    out: dict[str, Any] = {
        "player": report.player,
        "perf": report.perf,
        "rules": report.settings.rules,
        "expected": report.settings.expected,
    }
    if report.scale == "lichess" and not report.real:
        out["periods"] = [period_json(r) for r in report.periods]
        return out
    out["scale"] = report.scale
    out["scale_label"] = report.scale_label
    out["chapter"] = report.settings.chapter
    if report.model is not None:
        out["model"] = report.model.key
        out["models"] = [m.key for m in report.models]
        out["conversions"] = conversion_json(report.conversions)
    if report.start_ratings:
        out["start_ratings"] = dict(report.start_ratings)
    periods = []
    for row in report.periods:
        j = period_json(row)
        if row.band is not None:
            j["band"] = band_json(row.band)
        if report.real:
            j["fide_real"] = row.fide_real
            j["gap"] = row.gap
        periods.append(j)
    out["periods"] = periods
    if report.real:
        out["fide_list"] = report.real_list
        out["mean_abs_gap"] = shown(report.mean_abs_gap)
    return out


def excluded_text(excluded: dict[str, int]) -> str:
    """Games left out by reason as one line, ``"casual: 1; provisional opponent: 6"`` (``""``
    when none), reasons in alphabetical order as in :func:`period_json`."""
    return "; ".join(f"{reason}: {n}" for reason, n in sorted(excluded.items()))


#: The columns :func:`periods_csv` adds after :data:`PERIOD_KEYS` on a FIDE scale (``band_*``
#: with ``--scale all``) or with a real FIDE line (``fide_real``, ``gap``).
SCALE_CSV_KEYS: Final = ("scale", "band_min", "band_median", "band_max", "fide_real", "gap")


def periods_csv(report: ReplayReport) -> str:
    """The periods of ``tracker replay --json`` as CSV: a header of :data:`PERIOD_KEYS`, then one
    row per period. Numbers exact as in the JSON, an empty cell for null, ``excluded`` written
    with :func:`excluded_text`. On a FIDE scale or with a real FIDE line the columns of
    :data:`SCALE_CSV_KEYS` follow (the scale's label, the band, the real rating and the gap)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    extra = report.scale != "lichess" or bool(report.real)
    writer.writerow((*PERIOD_KEYS, *(SCALE_CSV_KEYS if extra else ())))
    for row in report.periods:
        j = period_json(row)
        j["excluded"] = excluded_text(j["excluded"])
        if extra:
            band = band_json(row.band) if row.band is not None else {}
            j.update(scale=report.scale_label, band_min=band.get("min"),
                     band_median=band.get("median"), band_max=band.get("max"),
                     fide_real=row.fide_real, gap=row.gap)
        writer.writerow("" if j[k] is None else j[k]
                        for k in (*PERIOD_KEYS, *(SCALE_CSV_KEYS if extra else ())))
    return buf.getvalue()


#: The keys of one game of a period (:func:`game_row`), in order: what the dashboard's Games
#: page shows. ``date`` is the game's end (UTC); ``expected`` (PD) and ``delta`` (ΔR) are set
#: for counted games of a rated period only; ``url`` is ``None`` for a game without a Lichess id.
GAME_KEYS: Final = (
    "date",
    "colour",
    "opponent",
    "opponent_rating",
    "result",
    "counted",
    "reason",
    "expected",
    "delta",
    "url",
)

LICHESS_GAME_URL: Final = "https://lichess.org/"


def game_url(game_id: str, color: str | None = None) -> str | None:
    """The game on lichess.org, seen from ``color``'s side; ``None`` for a PGN game that has no
    Lichess id (its id is a content digest, ``pgn-…``)."""
    if game_id.startswith("pgn-"):
        return None
    return LICHESS_GAME_URL + game_id + ("/black" if color == "black" else "")


def game_row(detail: GameDetail) -> dict[str, Any]:
    """One game of a period with exactly :data:`GAME_KEYS` (Decimals for PD and ΔR, result in
    points, ``None`` for an unfinished game)."""
    sel = detail.selected
    game = sel.game
    opp = game.side(other(sel.color))
    if opp.is_computer:
        opponent = f"Lichess AI level {opp.ai_level}"
    else:
        opponent = opp.name or opp.user_id or "anonymous"
    places = "0.01" if isinstance(detail.expected, Fraction) else "0.0001"
    return {
        "date": game.ended_at,
        "colour": sel.color,
        "opponent": opponent,
        "opponent_rating": opp.rating,
        "result": points(detail.score) if detail.score is not None else None,
        "counted": sel.counts,
        "reason": sel.reason,
        "expected": shown(detail.expected, places),
        "delta": shown(detail.delta, places),
        "url": game_url(game.id, sel.color),
    }


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
