"""How a replay report is shown: the periods CSV, one game's row, a game's URL, and
:func:`dumps`, the one place an exact number becomes text (the ``--json`` object it writes is
built by :mod:`tracker.report` and re-exported here).

Nothing here computes a rating: it formats what :mod:`tracker.report` built.
"""

from __future__ import annotations

import csv
import io
from fractions import Fraction
from typing import Any, Final

# The ``--json`` object itself (exact numbers, the contract scripts read) is the report's own:
# built in tracker.report and re-exported here beside the text formats made from it.
from tracker.exact import dumps as dumps
from tracker.exact import points as points
from tracker.exact import shown as shown
from tracker.report import PERIOD_KEYS as PERIOD_KEYS
from tracker.report import GameDetail, ReplayReport
from tracker.report import band_json as band_json
from tracker.report import conversion_json as conversion_json
from tracker.report import period_json as period_json
from tracker.report import report_json as report_json
from tracker.selection import other


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
