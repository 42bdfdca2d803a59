"""Lichess's per-player ACPL and judgment counts reproduced on real analysed games
(scripts/check_lichess_numbers.py on the first 2,000 of the shared 41,043; the full-set figures
are in docs/strength.md)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_lichess_numbers.py"
SAMPLE = ROOT / "tests" / "fixtures" / "analysed" / "lichess-rapid-analysed-first2000.ndjson.zst"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_lichess_numbers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # the script's dataclasses look their module up
    spec.loader.exec_module(module)
    return module


check_lichess_numbers = _load()


def test_sample_matches_lichess_exactly() -> None:
    report = check_lichess_numbers.check(check_lichess_numbers.read_lines(SAMPLE))
    assert (report.games, report.player_games) == (2000, 4000)
    assert report.acpl_equal == 4000
    assert report.judgments_equal == 4000
    # recomputed from the evals alone the counts differ, always because the thresholds flag a
    # move the engine itself played (Lichess judges a move only where it preferred another)
    assert report.recomputed_equal == 3267
    assert dict(report.kinds) == {
        "recomputed: flags a move the engine itself played (no `best`)": 733}


def test_a_difference_is_reported_with_its_game() -> None:
    line = SAMPLE_LINE.replace(b'"acpl":104', b'"acpl":105')
    report = check_lichess_numbers.check([line])
    assert report.acpl_equal == 1
    assert report.kinds["ACPL: off by one (rounding)"] == 1
    assert report.examples["ACPL: off by one (rounding)"] == [
        "0068O1lq white: ours 104, Lichess 105"]


def test_command_line_prints_the_rates() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), str(SAMPLE), "--limit", "50"],
                          capture_output=True, text=True, check=True)
    assert "ACPL equal to Lichess's: 100 of 100 (100.00 %)" in done.stdout


SAMPLE_LINE = next(iter(check_lichess_numbers.read_lines(SAMPLE)))
