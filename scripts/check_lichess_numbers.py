"""Lichess's per-player numbers, reproduced from the evals: python scripts/check_lichess_numbers.py
DATA [--limit N] [--json]

DATA: analysed Lichess games, one per line in the API export format (``.ndjson`` or
``.ndjson.zst``), each with ``analysis[]`` and ``players.X.analysis`` {``acpl``,
``inaccuracy``, ``mistake``, ``blunder``}. For every player-game, tracker's ACPL
(:func:`tracker.analysis.formulas.acpl`) and judgment counts (the exported judgments counted per
colour, :func:`~tracker.analysis.formulas.game_summary`) are compared with Lichess's; the counts
recomputed from the evals alone (:func:`~tracker.analysis.formulas.recomputed_judgments`) are
compared too, to show why the exported judgments are the ones to count. Prints the match rates
and every kind of difference with its count and up to three example games.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

from tracker.analysis.formulas import (
    JudgmentCounts,
    acpl,
    exported_judgments,
    judge,
    recomputed_judgments,
)
from tracker.core.evals import PlyEval, from_lichess_entry

COLORS = ("white", "black")
KINDS = ("inaccuracy", "mistake", "blunder")


@dataclass
class Report:
    """Match counts over player-games and the kinds of difference (kind → count, examples)."""

    games: int = 0
    player_games: int = 0
    acpl_equal: int = 0
    judgments_equal: int = 0
    recomputed_equal: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def differ(self, kind: str, example: str) -> None:
        self.kinds[kind] += 1
        if len(self.examples[kind]) < 3:
            self.examples[kind].append(example)

    def as_dict(self) -> dict[str, Any]:
        return {"games": self.games, "player_games": self.player_games,
                "acpl_equal": self.acpl_equal, "judgments_equal": self.judgments_equal,
                "recomputed_equal": self.recomputed_equal, "kinds": dict(self.kinds),
                "examples": dict(self.examples)}


def read_lines(path: Path) -> Iterator[bytes]:
    """The lines of an NDJSON file, zstd-compressed or not."""
    with path.open("rb") as raw:
        if path.suffix == ".zst":
            stream = zstandard.ZstdDecompressor().stream_reader(raw)
            yield from io.BufferedReader(stream)
        else:
            yield from raw


def _acpl_kind(ours: int | None, theirs: object) -> str:
    if ours is None or not isinstance(theirs, int):
        return "ACPL: one side has no value"
    if abs(ours - theirs) == 1:
        return "ACPL: off by one (rounding)"
    return "ACPL: other"


def _recomputed_kinds(evals: list[PlyEval], white: bool) -> Iterator[str]:
    """Why the counts recomputed from the evals differ from the exported ones, per move."""
    previous = PlyEval(15, None)
    for i, ev in enumerate(evals):
        mover_white = i % 2 == 0
        if mover_white == white:
            mine = judge(previous, ev, white_moved=white)
            if mine != ev.judgment:
                if ev.judgment is None and ev.best is None:
                    yield "recomputed: flags a move the engine itself played (no `best`)"
                elif ev.judgment is None:
                    yield "recomputed: flags a move Lichess left unjudged despite a `best`"
                elif mine is None:
                    yield "recomputed: misses an exported judgment"
                else:
                    yield "recomputed: another grade than exported"
        previous = ev


def check_game(game: dict[str, Any], report: Report) -> None:
    """Compare one game's two player-games and record them in ``report``."""
    evals = [from_lichess_entry(e) for e in game.get("analysis", [])]
    if "initialFen" in game:
        raise ValueError(f"{game['id']}: games from a position are not in this check")
    ours_acpl = acpl(evals)
    ours_counts = exported_judgments(evals)
    recomputed = recomputed_judgments(evals)
    report.games += 1
    for k, color in enumerate(COLORS):
        theirs = game["players"][color].get("analysis")
        if theirs is None:
            report.differ("no Lichess numbers for a player", game["id"])
            continue
        report.player_games += 1
        label = f"{game['id']} {color}"
        if ours_acpl[k] == theirs.get("acpl"):
            report.acpl_equal += 1
        else:
            report.differ(_acpl_kind(ours_acpl[k], theirs.get("acpl")),
                          f"{label}: ours {ours_acpl[k]}, Lichess {theirs.get('acpl')}")
        lichess = JudgmentCounts(*(theirs.get(kind, 0) for kind in KINDS))
        if ours_counts[k] == lichess:
            report.judgments_equal += 1
        else:
            for kind, a, b in zip(KINDS, ours_counts[k], lichess, strict=True):
                if a != b:
                    report.differ(f"judgments: {kind} count", f"{label}: ours {a}, Lichess {b}")
        if recomputed[k] == lichess:
            report.recomputed_equal += 1
        else:
            for why in set(_recomputed_kinds(evals, color == "white")):
                report.differ(why, label)


def check(lines: Iterable[bytes], limit: int | None = None) -> Report:
    """The :class:`Report` over the first ``limit`` games of ``lines`` (all: ``None``)."""
    report = Report()
    for n, line in enumerate(lines):
        if limit is not None and n >= limit:
            break
        if line.strip():
            check_game(json.loads(line), report)
    return report


def _pct(part: int, whole: int) -> str:
    return f"{part:,} of {whole:,} ({100 * part / whole:.2f} %)" if whole else "none"


def render(report: Report) -> str:
    """The report in plain lines."""
    lines = [
        f"games: {report.games:,}; player-games with Lichess's numbers: {report.player_games:,}",
        f"ACPL equal to Lichess's: {_pct(report.acpl_equal, report.player_games)}",
        "inaccuracy/mistake/blunder counts (exported judgments per colour) equal to Lichess's: "
        + _pct(report.judgments_equal, report.player_games),
        "the same counts recomputed from the evals alone (no engine-best condition): "
        + _pct(report.recomputed_equal, report.player_games),
        "kinds of difference (count; examples):",
    ]
    for kind, count in sorted(report.kinds.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {kind}: {count:,}; {'; '.join(report.examples[kind])}")
    if not report.kinds:
        lines.append("  none")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="the first N games only")
    parser.add_argument("--json", action="store_true", help="the report as one JSON object")
    args = parser.parse_args(argv)
    report = check(read_lines(args.data), args.limit)
    print(json.dumps(report.as_dict(), indent=1) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
