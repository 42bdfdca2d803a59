"""How a replay report is shown: the periods CSV, one game's row, a game's URL, and
:func:`dumps`, the one place an exact number becomes text (the ``--json`` object it writes is
built by :mod:`tracker.report.replay` and re-exported here).

Nothing here computes a rating: it formats what :mod:`tracker.report.replay` built.
"""

from __future__ import annotations

import csv
import io
import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

# The ``--json`` object itself (exact numbers, the contract scripts read) is the report's own:
# built in tracker.report.replay and re-exported here beside the text formats made from it.
from tracker.core.exact import dumps as dumps
from tracker.core.exact import figure as figure
from tracker.core.exact import points as points
from tracker.core.exact import shown as shown
from tracker.fide.rules import round_half_away
from tracker.fide.scale import range_note
from tracker.report.replay import PERIOD_KEYS as PERIOD_KEYS
from tracker.report.replay import GameDetail, PeriodRow, ReplayReport, rating_json
from tracker.report.replay import band_json as band_json
from tracker.report.replay import conversion_json as conversion_json
from tracker.report.replay import period_json as period_json
from tracker.report.replay import report_json as report_json
from tracker.report.selection import other


def excluded_text(excluded: dict[str, int]) -> str:
    """Games left out by reason as one line, ``"casual: 1; provisional opponent: 6"`` (``""``
    when none), reasons in alphabetical order as in :func:`period_json`."""
    return "; ".join(f"{reason}: {n}" for reason, n in sorted(excluded.items()))


#: The columns :func:`periods_csv` adds after :data:`PERIOD_KEYS` on a FIDE scale (``band_*``
#: with ``--scale all``) or with a real FIDE line (``fide_real``, ``gap``).
SCALE_CSV_KEYS: Final = ("scale", "band_min", "band_median", "band_max", "fide_real", "gap")


#: What a spreadsheet reads as the start of a formula in a cell of text (OWASP's list).
_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A value fit for a cell of every CSV export: ``""`` for ``None``; text a spreadsheet
    would compute (``=…``, ``+…``, ``-2-3``, ``@…``, a leading tab or CR) behind a ``'``, so it
    shows as written; numbers (a gap of ``-3.5``) as they are."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def periods_csv(report: ReplayReport) -> str:
    """The periods of ``tracker replay --json`` as CSV: a header of :data:`PERIOD_KEYS`, then one
    row per period. Numbers exact as in the JSON, an empty cell for null, ``excluded`` written
    with :func:`excluded_text`, text cells as :func:`csv_cell` writes them. On a FIDE scale
    or with a real FIDE line the columns of :data:`SCALE_CSV_KEYS` follow (the scale's label,
    the band, the real rating and the gap)."""
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
                     fide_real=row.fide_real, gap=rating_json(row.gap))
        writer.writerow(csv_cell(j[k])
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


#: The columns of a period's games as CSV (:func:`games_csv`): :data:`GAME_KEYS`, the
#: opponent's rating on the replay's scale (``opponent_on_scale``, empty where the model
#: cannot place it) and that scale (``scale``: the model whose replay gives PD, ΔR and the
#: opponent's rating; with several models one of them, not their median).
GAME_CSV_KEYS: Final = (*GAME_KEYS, "opponent_on_scale", "scale")


def games_json(details: list[GameDetail]) -> list[dict[str, Any]]:
    """A period's games as ``tracker replay --period M --json`` gives them: each
    :func:`game_row` with its ``date`` as ISO 8601 UTC text, ``opponent_on_scale`` and
    ``scale`` (:data:`GAME_CSV_KEYS`)."""
    out = []
    for d in details:
        row = game_row(d)
        row["date"] = row["date"].isoformat().replace("+00:00", "Z")
        row["opponent_on_scale"] = d.opponent_rating
        row["scale"] = d.scale
        out.append(row)
    return out


def games_csv(details: list[GameDetail]) -> str:
    """A period's games as CSV, for a player's own spreadsheet: a header of
    :data:`GAME_CSV_KEYS`, then one row per game as :func:`games_json` gives it (``result``
    1, 0.5 or 0; expected and ΔR exact as shown; ``counted`` ``True``/``False``), each cell
    as :func:`csv_cell` writes it (``""`` for none, text a spreadsheet would compute behind a
    ``'``)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(GAME_CSV_KEYS)
    for row in games_json(details):
        writer.writerow(csv_cell(row[k]) for k in GAME_CSV_KEYS)
    return buf.getvalue()


# The answer in words: what the CLI's last lines and the dashboard's headline say.

#: How a half is shown, said once where one can appear (a median of two models, a gap from
#: it): FIDE publishes whole numbers only.
HALF_NOTE: Final = ("A median of two models that ends in .5 is shown as a whole number, "
                    "rounded half up as FIDE rounds a rating (1549.5 → 1550); --json keeps "
                    "the exact value.")


def whole_rating(x: int | Fraction | Decimal | None) -> int | None:
    """A rating as FIDE prints it: a whole number, a half rounded up as FIDE rounds a rating
    (1549.5 → 1550; a gap of −94.5 → −94, so that the gap shown is the rating shown minus the
    real one); ``None`` stays ``None``. The exact value is ``--json``'s."""
    if x is None:
        return None
    f = Fraction(x)
    return math.floor(f + Fraction(1, 2))


def floor_note(new_rating: int) -> str | None:
    """What FIDE does with a rating under its floor, as ``tracker calc`` and the Calculator say
    it beside the new rating: ``"below 1400, FIDE's floor: not published, the player is
    unrated from the next period"``; ``None`` at 1400 or more (rules.md §7, the replay's own
    "fell to 1361, below 1400")."""
    from tracker.fide.replay import RATING_FLOOR

    if new_rating >= RATING_FLOOR:
        return None
    return (f"below {RATING_FLOOR}, FIDE's floor: not published, the player is unrated from "
            "the next period")


def rating_text(x: int | Fraction | Decimal | None, empty: str = "-", *,
                signed: bool = False) -> str:
    """A rating as people read it, whole as FIDE publishes it: ``1499``, ``1550`` for a median
    of two ending in .5 (:func:`whole_rating`, :data:`HALF_NOTE`), never ``1640.0`` nor
    ``3211/2``; ``empty`` for none. ``signed``: a change or a gap, ``+`` before a positive one
    (``+3``, ``-3``, ``0``)."""
    r = whole_rating(x)
    if r is None:
        return empty
    return f"{r:+}" if signed and r else str(r)


def has_half(report: ReplayReport) -> bool:
    """Whether any rating the report shows (before, after, performance, gap, the answer) ends
    in .5: then :data:`HALF_NOTE` is said once beside it."""
    def half(x: object) -> bool:
        return isinstance(x, (Fraction, Decimal)) and Fraction(x).denominator != 1

    return half(report.current_rating) or any(
        half(v) for row in report.periods
        for v in (row.rating_before, row.rating_after, row.performance, row.gap))


def k_text(row: PeriodRow) -> str:
    """K of a period: ``20``, or the models' range ``12–13`` where they differ, ``-`` while
    unrated."""
    ks = row.k_range
    if ks is None:
        return "-"
    return str(ks[0]) if ks[0] == ks[1] else f"{ks[0]}–{ks[1]}"


def start_text(report: ReplayReport) -> str:
    """How the replay starts, said once: ``"starting unrated"``, ``"from 1850"``, ``"from 1500
    (Lichess scale; lebowitz 1571, mathtuition 1640)"``, or ``"starting unrated: Lichess 400
    is below what lebowitz can place (model output 400 is below FIDE's floor of the time
    (1000))"``."""
    s = report.settings
    if s.start_rating is None:
        return "starting unrated"
    if report.model is None or s.start_scale == "fide":
        scale = " (FIDE scale)" if report.model is not None else ""
        return f"from {s.start_rating}{scale}"
    mapped = report.start_ratings
    placed = {k: v for k, v in mapped.items() if v is not None}
    why = "; ".join(
        f"{m.key}: {range_note(m, report.perf, s.start_rating) or 'no FIDE rating'}"
        for m in report.models if mapped.get(m.key) is None)
    if not placed:
        return (f"starting unrated: Lichess {s.start_rating} is outside what the models can "
                f"place ({why})")
    each = ", ".join(f"{k} {v}" for k, v in placed.items())
    return (f"from Lichess {s.start_rating} ({each}"
            + (f"; unrated under {why}" if why else "") + ")")


def real_now(report: ReplayReport) -> int | None:
    """The real FIDE rating of the compared list now (its latest entry), ``None`` without one."""
    return report.real_now


def gap_text(report: ReplayReport) -> str | None:
    """The mean gap in words, signed, whole points: ``"98 points below your real standard
    rating, over 14 months"``; ``None`` without a real list or an overlap."""
    gap = report.mean_gap
    if gap is None:
        return None
    n = report.gap_periods
    points_ = round_half_away(gap)
    months = f"over {n} month{'s' * (n != 1)}"
    which = f"your real {report.real_list or 'given'} rating"
    if points_ == 0:
        return f"level with {which} on average, {months}"
    side = "above" if points_ > 0 else "below"
    return (f"{abs(points_)} point{'s' * (abs(points_) != 1)} {side} {which} on average, "
            f"{months}")


def answer_text(report: ReplayReport) -> str:
    """The FIDE-style rating now with its scale: ``"1499 on the FIDE scale (all models:
    lebowitz, mathtuition): the models' median, band 1453–1545"``, or ``"unrated: fell to
    1361, below 1400"`` (always the answer of :attr:`ReplayReport.current_rating`)."""
    now = report.current_rating
    if now is None:
        reason = report.unrated_reason() or "unrated"
        reason = reason.removesuffix(": unrated from next period")
        text = reason if reason.startswith("unrated") else f"unrated: {reason}"
        return f"{text} on the {report.scale_label}"
    text = f"{rating_text(now)} on the {report.scale_label}"
    band = report.current_band
    if report.banded and band is not None and band.min is not None:
        text += f": the models' median, band {band.min}–{band.max}"
    return text


def conversion_text(report: ReplayReport) -> str | None:
    """The static conversion, labelled for what it is and placed after the answer: what a
    conversion site says from today's Lichess rating alone, and why the replay differs;
    ``None`` on the Lichess scale."""
    if not report.conversions or report.current_lichess is None:
        return None
    conv = ", ".join(f"{k} {c.rating if c.rating is not None else 'no FIDE rating'}"
                     for k, c in report.conversions.items())
    return (f"For comparison, what a conversion site says from today's Lichess "
            f"{report.current_lichess} alone: {conv}. The replay differs: it rates every game "
            "month by month against the opponent's converted rating under FIDE's rules "
            "(K, the 700 rule, the floor), not today's Lichess number.")
