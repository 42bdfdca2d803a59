"""Every text view that prints exact numbers, printed with fractional values on the Python
that runs (3.11: ``Fraction`` takes no format spec there, so ``f"{x:+}"`` raises): never
``3099/2``; a rating whole as FIDE prints it (a median's 1549.5 reads 1550, issue 30); a
change is signed; nothing crashes."""

from __future__ import annotations

import csv
import io
import re
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tracker import api
from tracker.api.group_tables import GroupTable
from tracker.cli import commands as cli_module
from tracker.core.exact import figure
from tracker.report.group import GroupRow

#: A fraction shown as a fraction (``3099/2``): never in a text view.
SLASHED = re.compile(r"\b\d+/\d+\b")


def test_the_suite_runs_on_the_oldest_python_the_readme_names() -> None:
    # The crash only shows on 3.11: this file is pointless on a newer Python alone.
    assert sys.version_info[:2] == (3, 11)


@pytest.mark.parametrize(("x", "signed", "text"), [
    (Fraction(3099, 2), False, "1549.5"),
    (Fraction(3099, 2), True, "+1549.5"),
    (Fraction(-7, 2), True, "-3.5"),
    (Fraction(0), True, "0"),
    (Fraction(1640), False, "1640"),
    (Fraction(1, 3), False, "0.33"),
    (Fraction(-2, 3), True, "-0.67"),
    (Fraction(1, 8), False, "0.125"),
    (Decimal("15.20"), True, "+15.20"),
    (Decimal("-4.80"), True, "-4.80"),
    (Decimal("0.00"), True, "0.00"),
    (Decimal("1E+3"), False, "1000"),
    (1499, True, "+1499"),
    (-12, True, "-12"),
])
def test_figure_is_exact_or_decimal_never_a_fraction(x: Any, signed: bool, text: str) -> None:
    assert figure(x, signed=signed) == text


def test_rating_text_reads_whole_ratings_and_signs_changes() -> None:
    # Whole, as FIDE publishes ratings (issue 30, item 1): a half rounded up.
    assert api.rating_text(Fraction(3211, 2)) == "1606"
    assert api.rating_text(Decimal("1640.0")) == "1640"
    assert api.rating_text(Fraction(5, 2), signed=True) == "+3"
    assert api.rating_text(Fraction(-7, 2), signed=True) == "-3"  # 1550 shown − 1553 real
    assert api.rating_text(Fraction(0), signed=True) == "0"
    assert api.rating_text(None, "—", signed=True) == "—"


def _row(username: str, **figures: Any) -> GroupRow:
    base: dict[str, Any] = {
        "user_id": username.lower(), "fide_id": None, "fide": None, "fide_low": None,
        "fide_high": None, "real_fide": None, "real_month": None, "gap": None,
        "lichess": None, "recent_games": 0, "change": None, "level": None, "games": 0,
        "counted": 0, "note": None}
    return GroupRow(username=username, **{**base, **figures})


TABLE = GroupTable("club", "blitz", 1761955199000, ("lebowitz", "mathtuition"), [
    _row("alice", fide=Fraction(3099, 2), fide_low=1540, fide_high=1559, real_fide=1553,
         real_month="2025-10", gap=Fraction(-7, 2), lichess=1820, recent_games=12,
         change=Fraction(51, 2), games=300, counted=280, fide_id=35009192),
    _row("bob", fide=Fraction(1700), fide_low=1690, fide_high=1710, real_fide=1650,
         real_month="2025-10", gap=Fraction(50), lichess=1900, recent_games=3,
         change=Fraction(-5, 2), games=90, counted=80),
    _row("carol", note="no blitz games"),
])


def test_group_show_prints_halves_and_signed_changes(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setattr(api, "group_table", lambda *a, **k: TABLE)
    result = CliRunner().invoke(cli_module.app, ["--db", str(tmp_path / "t.db"), "group",
                                                 "show", "club"], terminal_width=200)
    assert result.exit_code == 0, result.output
    rows = {line.split()[1]: line for line in result.output.splitlines()
            if line.split()[1:2] and line.split()[1] in ("alice", "bob", "carol")}
    alice = [c.strip() for c in rows["alice"].split("│")[1:-1]]
    # Whole, as FIDE prints ratings (issue 30): 1549.5 reads 1550, its gap to 1553 is -3.
    assert alice[:9] == ["alice", "1550", "1540–1559", "1553", "-3", "1820", "12",
                         "+26", "not analysed"]
    bob = [c.strip() for c in rows["bob"].split("│")[1:-1]]
    assert bob[1] == "1700" and bob[4] == "+50" and bob[7] == "-2"
    carol = [c.strip() for c in rows["carol"].split("│")[1:-1]]
    assert carol[1] == "—" and carol[4] == "—" and carol[7] == "—"
    assert not SLASHED.search(result.output)
    # --csv writes the same values as exact numbers (bob first: the highest FIDE-style)
    as_csv = CliRunner().invoke(cli_module.app, ["--db", str(tmp_path / "t.db"), "group",
                                                  "show", "club", "--csv"])
    assert as_csv.exit_code == 0
    assert as_csv.output.splitlines()[2].startswith("alice,1549.5,1540,1559,,1553,-3.5,1820,"
                                                     "12,25.5,")


def test_the_replay_table_prints_the_models_medians_whole(indexinator_db: Path) -> None:
    # indexinator's blitz on two models: the median after 2023-05 is (1571 + 1640) / 2.
    result = CliRunner().invoke(cli_module.app, ["--db", str(indexinator_db), "replay",
                                                 "indexinator", "--perf", "blitz"],
                                terminal_width=200)
    assert result.exit_code == 0, result.output
    # ... shown whole, as FIDE prints ratings (issue 30, item 1): 1605.5 reads 1606.
    may = next(line for line in result.output.splitlines() if "2023-05" in line)
    assert "1606" in may.split() and "1605.5" not in may
    june = next(line for line in result.output.splitlines() if "2023-06" in line)
    assert "1606" in june.split()
    assert not SLASHED.search(result.output)


def test_calc_prints_hundredths_and_signs(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli_module.app, ["calc", "--rating", "1500", "1600:0.5", "1450:0",
                                                 "--k", "20"], terminal_width=200)
    assert result.exit_code == 0, result.output
    # 0.5 − 0.36 = +0.14 → +2.80; 0 − 0.57 = −0.57 → −11.40; total −8.60
    assert "+2.80" in result.output and "-11.40" in result.output
    assert result.output.splitlines()[-1].startswith("K 20; change -8.60 → new rating 1491")
    assert not SLASHED.search(result.output)


def test_the_dashboard_signs_a_fraction_on_python_3_11() -> None:
    sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
    try:
        import ui
    finally:
        sys.path.pop(0)
    assert ui.signed(Fraction(51, 2)) == "+25.5"
    assert ui.signed(Fraction(-7, 2)) == "-3.5"
    assert ui.signed(Decimal("15.20")) == "+15.20"
    assert ui.signed(Decimal("0.00")) == "0.00"
    assert ui.signed(None) == "—"


# --- CSV exports: no cell a spreadsheet would compute ----------------------------------------

def test_every_csv_cell_a_spreadsheet_would_compute_is_escaped() -> None:
    table = GroupTable("club", "blitz", 1761955199000, ("lebowitz",), [
        _row("-2-3", fide=Fraction(3099, 2), gap=Fraction(-7, 2), change=Fraction(-5, 2),
             note="=HYPERLINK(\"http://x\")"),
        _row("@sum", level="+1", note="\tTAB"),
        _row("plain", note="-"),
    ])
    text = api.group_table_csv(table, sort="name", descending=False)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    by_name = {r[0]: dict(zip(api.GROUP_KEYS, r, strict=True)) for r in rows[1:]}
    assert set(by_name) == {"'-2-3", "'@sum", "plain"}
    first = by_name["'-2-3"]
    assert first["note"] == "'=HYPERLINK(\"http://x\")"
    # numbers stay numbers: a negative gap or change is not a formula
    assert (first["fide"], first["gap"], first["change_3m"]) == ("1549.5", "-3.5", "-2.5")
    assert (by_name["'@sum"]["level"], by_name["'@sum"]["note"]) == ("'+1", "'\tTAB")
    assert by_name["plain"]["note"] == "'-"


@pytest.mark.parametrize(("value", "cell"), [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-2-3", "'-2-3"), ("@A1", "'@A1"), ("\tx", "'\tx"),
    ("\rx", "'\rx"), ("alice", "alice"), ("a=b", "a=b"), (None, ""), (-3, -3),
    (Decimal("-4.80"), Decimal("-4.80")),
])
def test_csv_cell(value: Any, cell: Any) -> None:
    assert api.csv_cell(value) == cell


def test_the_periods_csv_keeps_negative_numbers_as_numbers(indexinator_db: Path) -> None:
    report = api.replay("indexinator", "blitz", db=indexinator_db)
    rows = list(csv.DictReader(io.StringIO(api.periods_csv(report))))
    changes = [r["change"] for r in rows if r["change"]]
    assert any(c.startswith("-") for c in changes)
    assert not any(v.startswith("'") for r in rows for v in r.values())
