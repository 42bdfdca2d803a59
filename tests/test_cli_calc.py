"""``tracker calc --json`` with every worked example of spec §8."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal

import pytest


def calc(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "calc", "--json", *args],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout, parse_float=Decimal)


@pytest.mark.parametrize(
    ("args", "change", "new_rating"),
    [
        (("--rating", "1500", "--k", "20", "1700:1"), "15.20", 1515),
        (("--rating", "1500", "--k", "20", "1700:=",), "5.20", 1505),
        (("--rating", "1500", "--k", "20", "1700:0"), "-4.80", 1495),
        (("--rating", "1500", "--k", "20", "1400:1", "1600:1/2", "1550:0"), "1.40", 1501),
        (("--rating", "1500", "--k", "20", "1000:1"), "1.60", 1502),
        (("--rating", "1500", "--k", "20", "--expected", "formula", "1000:1"), "1.82", 1502),
        (("--rating", "1500", "--k", "20", "1000:0"), "-18.40", 1482),
        (("--rating", "1500", "--k", "32", "--expected", "formula", "1600:1"), "20.48", 1520),
        (("--rating", "2400", "--k", "10", "2400:1"), "5.00", 2405),
        (("--rating", "2700", "--k", "10", "2200:1"), "0.40", 2700),
        (("--rating", "2700", "--k", "10", "--rules", "fide-2024-03", "2200:1"), "0.80", 2701),
        (("--rating", "2700", "--k", "10", "1900:0"), "-10.00", 2690),
    ],
)
def test_spec_examples_through_the_cli(args: tuple[str, ...], change: str, new_rating: int
                                       ) -> None:
    data = calc(*args)
    assert data["change"] == Decimal(change)
    assert data["new_rating"] == new_rating


def test_per_game_lines_of_the_three_game_example() -> None:
    data = calc("--rating", "1500", "--k", "20", "1400:1", "1600:0.5", "1550:0")
    assert [g["change"] for g in data["games"]] == [Decimal("7.20"), Decimal("2.80"),
                                                    Decimal("-8.60")]
    assert [g["expected"] for g in data["games"]] == [Decimal("0.64"), Decimal("0.36"),
                                                      Decimal("0.43")]


def test_700_rule_gives_k35_for_20_games_and_k17_for_40() -> None:
    assert calc("--rating", "1500", "--k", "40", *["1500:1"] * 20)["k"] == 35
    assert calc("--rating", "1500", "--k", "20", *["1500:1"] * 40)["k"] == 17


def test_400_rule_off_uses_the_real_difference() -> None:
    # D = 500 uncapped → .96 → 20 × .04 = 0.80 (capped: .92 → 1.60)
    assert calc("--rating", "1500", "--k", "20", "--no-400-rule", "1000:1")["change"] == (
        Decimal("0.80")
    )


def test_bad_game_argument_is_a_clear_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "calc", "--rating", "1500",
                           "--k", "20", "1700-1"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "OPPONENT:SCORE" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--rating", "-100", "--k", "20", "1700:1"), "your rating -100 is out of range"),
        (("--rating", "1500", "--k", "20", "99999:1"), "an opponent's rating 99999 is out of"),
        (("--rating", "1500", "--k", "0", "1700:1"), "K must be a positive whole number"),
        (("--rating", "1500", "--k", "20", "1700:2"), "score must be 1, 0 or a draw"),
        (("--rating", "1500", "--k", "20", "--rules", "foo", "1700:1"), "unknown rules 'foo'"),
    ],
)
def test_bad_calc_input_is_one_line_with_exit_code_2(args: tuple[str, ...], message: str
                                                     ) -> None:
    proc = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "calc", *args],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert message in proc.stderr


def test_decimal_spellings_of_scores_are_accepted() -> None:
    data = calc("--rating", "1500", "--k", "20", "1700:0.50", "1600:1.00")
    assert [g["score"] for g in data["games"]] == [Decimal("0.5"), 1]
    assert data["change"] == Decimal("18.00")
