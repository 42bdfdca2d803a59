"""Local evals on Lichess's scale (STRENGTH.md §3a): a calibration per engine version and node
budget, read from a plain JSON file fitted by ``scripts/calibrate_engine.py``.

A local engine at a small node budget is another Stockfish than Lichess's, searching far less
deeply: its centipawns run smaller in magnitude than Lichess's evals of the same positions, so
its players' ACPL reads low and their accuracy high. A calibration maps each local eval onto
Lichess's scale before anything is computed from it (accuracy, ACPL, judgments, the level, the
turning points)::

    cp′ = sign(cp) · 100 · scale · (|cp| / 100) ^ power        (a mate is left as it is)

``scale`` is the factor at one pawn, ``power`` bends it (above 1: small differences shrink,
large ones grow). The stored evals stay as the engine gave them; the analysis records the
calibration's id (:attr:`tracker.core.records.Analysis.calibration`), so a refit (a new id) never
changes silently what an old analysis reads.

This module sits with the records (no numpy, no model): the engine source names the
calibration of its analyses, the report applies it. Pure but for reading the file once.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final, NamedTuple

from tracker.core.evals import PlyEval
from tracker.core.records import Analysis

#: Where the calibration files are: ``engine-calibration-<version>.json``, one per refit.
MODELS_DIR: Final = Path(__file__).parent / "models"
_FILE_NAME: Final = re.compile(r"engine-calibration-(\d+)\.json")


def calibration_files(folder: Path = MODELS_DIR) -> list[Path]:
    """The calibration files of ``folder``, oldest version first (``[]`` where none)."""
    found = [(int(m.group(1)), p) for p in folder.glob("engine-calibration-*.json")
             if (m := _FILE_NAME.fullmatch(p.name))]
    return [p for _, p in sorted(found)]


#: The calibration file new analyses are read through: the newest version (JSON:
#: ``calibrations`` is a list of entries, see docs/analysis.md). Older files stay beside it,
#: so that an analysis recorded with one of their ids is read as it was when stored.
CALIBRATION_FILE: Final = (calibration_files() or [MODELS_DIR / "engine-calibration-1.json"])[-1]
#: The longest calibration id (the width of ``game_analysis.calibration``).
CALIBRATION_ID_MAX: Final = 64


@dataclass(frozen=True, slots=True)
class EvalCalibration:
    """One calibration: for ``engine`` ``engine_version`` (``"Stockfish"``, ``"15.1"``) at
    ``nodes`` nodes a position, ``cp′ = sign · 100 · scale · (|cp| / 100) ^ power``; ``id``
    names it (``"stockfish-15.1-20000n-1"``)."""

    id: str
    engine: str
    engine_version: str
    nodes: int
    scale: float
    power: float = 1.0

    def cp(self, cp: int) -> int:
        """One local centipawn value on Lichess's scale (rounded to a centipawn)."""
        if cp == 0:
            return 0
        value = 100 * self.scale * (abs(cp) / 100) ** self.power
        return int(math.copysign(math.floor(value + 0.5), cp))

    def apply(self, evals: Sequence[PlyEval]) -> tuple[PlyEval, ...]:
        """``evals`` with each centipawn value mapped (mates, missing evals, best moves and
        judgments as they are)."""
        return tuple(e if e.cp is None else e._replace(cp=self.cp(e.cp)) for e in evals)


def calibration_from_json(entry: Mapping[str, Any]) -> EvalCalibration:
    """One entry of the file's ``calibrations``. Raises ValueError for a malformed one."""
    try:
        out = EvalCalibration(str(entry["id"]), str(entry["engine"]),
                              str(entry["engine_version"]), int(entry["nodes"]),
                              float(entry["scale"]), float(entry.get("power", 1.0)))
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"malformed engine calibration: {e}") from None
    if not 0 < len(out.id) <= CALIBRATION_ID_MAX:
        raise ValueError(f"malformed engine calibration: an id of 1 to {CALIBRATION_ID_MAX} "
                         f"characters, got {out.id!r}")
    if not (out.scale > 0 and out.power > 0 and out.nodes > 0):
        raise ValueError(f"malformed engine calibration {out.id}: scale, power and nodes "
                         "must be positive")
    return out


@cache
def calibrations(path: Path = CALIBRATION_FILE) -> Mapping[str, EvalCalibration]:
    """``{id: calibration}`` of the file (empty where there is no file)."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    entries = [calibration_from_json(e) for e in data.get("calibrations", [])]
    return {e.id: e for e in entries}


def calibrated_budgets(path: Path = CALIBRATION_FILE) -> str:
    """The engines and node budgets the current calibration file covers, in words:
    ``"Stockfish 15.1 at 10,000 or 20,000 nodes"`` (``"none"`` without a file)."""
    by_engine: dict[str, list[int]] = {}
    for c in calibrations(path).values():
        by_engine.setdefault(f"{c.engine} {c.engine_version}", []).append(c.nodes)
    return "; ".join(f"{name} at {' or '.join(f'{n:,}' for n in sorted(nodes))} nodes"
                     for name, nodes in sorted(by_engine.items())) or "none"


class LichessEra(NamedTuple):
    """Lichess's server evals of games played from ``from_ms`` on (ms since the epoch, UTC) are
    read by the level × ``factor``: from Stockfish 15.1 on, Lichess's analysis reports
    normalised centipawns, smaller than those of the analyses the level models were fitted on
    (2014–2022). ``factor`` is measured, not assumed: the one that puts Lichess's level of the
    games that carry both evals on the calibrated local level of the same games (the local
    engine as the bridge between the eras; the file's ``lichess_era`` section has the figures).
    """

    from_ms: int
    factor: float

    def apply(self, evals: Sequence[PlyEval], played_at_ms: int | None) -> list[PlyEval]:
        """``evals`` of a game played at ``played_at_ms`` (``None``: unknown, read as before
        ``from_ms``): each centipawn value × ``factor`` (rounded half away from 0) where the game
        is of the era, mates unchanged; else ``evals`` as they are."""
        if played_at_ms is None or played_at_ms < self.from_ms:
            return list(evals)
        return [e if e.cp is None else e._replace(cp=int(math.copysign(
                    math.floor(abs(e.cp) * self.factor + 0.5), e.cp))) for e in evals]


@cache
def lichess_era(path: Path = CALIBRATION_FILE) -> LichessEra:
    """The ``lichess_era`` section of the calibration file. Raises ValueError where the file or
    the section is missing or malformed (the file ships with the package)."""
    try:
        era = json.loads(path.read_text(encoding="utf-8"))["lichess_era"]
        out = LichessEra(int(era["from_ms"]), float(era["factor"]))
    except (OSError, KeyError, TypeError, ValueError) as e:
        raise ValueError(f"no Lichess era in {path.name}: {e}") from None
    if not out.factor > 0:
        raise ValueError(f"malformed Lichess era in {path.name}: factor {out.factor}")
    return out


@cache
def recorded_calibrations(folder: Path = MODELS_DIR) -> Mapping[str, EvalCalibration]:
    """``{id: calibration}`` of every calibration file of ``folder``, the current and the ones
    a refit replaced (a newer file wins an id both hold): what an analysis that recorded its
    calibration's id is read through, whichever refit it was stored under."""
    out: dict[str, EvalCalibration] = {}
    for path in calibration_files(folder):
        out.update(calibrations(path))
    return out


def calibration_for(engine: str | None, engine_version: str | None,
                    nodes: int | None) -> EvalCalibration | None:
    """The calibration fitted for this engine, version and node budget exactly (engine names
    compared without case), or ``None``: another version or budget is left uncalibrated
    rather than read through a mapping fitted for something else."""
    if not engine or not engine_version or not nodes:
        return None
    for c in calibrations().values():
        if (c.engine.lower(), c.engine_version, c.nodes) == (engine.lower(), engine_version,
                                                             nodes):
            return c
    return None


def calibrated_evals(analysis: Analysis) -> tuple[PlyEval, ...]:
    """The evals to compute from: a local analysis's through the calibration it records (one
    of an older calibration file too: a refit never changes what a stored analysis reads; an
    analysis stored before calibrations, without one, gets the current one fitted for its
    engine and budget, if any); Lichess's evals, or a calibration no file has, as they are."""
    if analysis.source != "engine":
        return analysis.evals
    found = (recorded_calibrations().get(analysis.calibration) if analysis.calibration
             else calibration_for(analysis.engine, analysis.engine_version, analysis.nodes))
    return analysis.evals if found is None else found.apply(analysis.evals)


def calibration_id(analysis: Analysis) -> str | None:
    """The id of the calibration :func:`calibrated_evals` reads ``analysis`` through, or
    ``None`` (its evals are read as they are)."""
    if analysis.source != "engine":
        return None
    if analysis.calibration:
        return analysis.calibration if analysis.calibration in recorded_calibrations() else None
    found = calibration_for(analysis.engine, analysis.engine_version, analysis.nodes)
    return None if found is None else found.id
