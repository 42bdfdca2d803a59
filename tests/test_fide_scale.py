"""Scale models (SCALE.md): every worked value of the spec, through the engine module."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import pytest

from tracker import api
from tracker.fide.scale import MODELS, adjust_2024, convert, models_for

# (model, perf, Lichess x, rounded model output, adjusted FIDE rating; None = unrated)
WORKED = [
    ("lebowitz", "blitz", 1500, 1285, 1571),
    ("lebowitz", "rapid", 1800, 1440, 1664),
    ("lebowitz", "bullet", 2100, 1808, 1885),
    ("mathtuition", "blitz", 1800, 1692, 1815),
    ("chessdojo-2024", "classical", 1800, 1555, 1555),
    ("chessdojo-2024", "classical", 1600, None, None),
]

# The second table: x → (model output → adjusted) per column; "—" = unrated.
COLUMNS = [("lebowitz", "bullet"), ("lebowitz", "blitz"), ("lebowitz", "rapid"),
           ("lebowitz", "classical"), ("mathtuition", "blitz"), ("chessdojo-2024", "classical")]
TABLE = {
    1200: ["1250 → 1550", "1043 → 1426", "900 → —", "905 → —", "1188 → 1513", "—"],
    1400: ["1374 → 1624", "1204 → 1522", "1080 → 1448", "1102 → 1461", "1356 → 1614", "—"],
    1800: ["1622 → 1773", "1526 → 1716", "1440 → 1664", "1496 → 1698", "1692 → 1815", "1555"],
    2100: ["1808 → 1885", "1767 → 1860", "1709 → 1825", "1791 → 1875", "1944 → 1966", "1808"],
    2400: ["1994 → 1996", "2008 → 2008", "1979 → 1987", "2087 → 2087", "2196 → 2196", "2175"],
}


@pytest.mark.parametrize(("key", "perf", "x", "output", "adjusted"), WORKED)
def test_worked_values(key: str, perf: str, x: int, output: int | None,
                       adjusted: int | None) -> None:
    c = convert(MODELS[key], perf, x)
    assert (c.output, c.rating) == (output, adjusted)


@pytest.mark.parametrize("x", sorted(TABLE))
def test_table_of_more_values(x: int) -> None:
    for (key, perf), cell in zip(COLUMNS, TABLE[x], strict=True):
        c = convert(MODELS[key], perf, x)
        if cell == "—":
            assert c.rating is None, (key, perf, x)
            continue
        if "→" in cell:
            out, adj = (s.strip() for s in cell.split("→"))
            assert c.output == int(out), (key, perf, x)
            assert c.rating == (None if adj == "—" else int(adj)), (key, perf, x)
        else:  # post-2024: no adjustment
            assert c.output == c.rating == int(cell), (key, perf, x)


def test_half_away_from_zero_and_the_adjustment() -> None:
    # lebowitz rapid 1800: -178.7 + 0.899 × 1800 = 1439.5 exactly → 1440 (not 1440 by luck)
    assert MODELS["lebowitz"].fits["rapid"](1800) == Fraction(2879, 2)
    assert [adjust_2024(r) for r in (999, 1000, 1500, 1900, 1999, 2000)] == [
        999, 1400, 1700, 1940, 1999, 2000]
    unadjusted = convert(MODELS["lebowitz"], "bullet", 2100, adjusted=False)
    assert (unadjusted.output, unadjusted.rating) == (1808, 1808)


def test_chessdojo_extrapolates_above_the_top_anchor_with_the_last_slope() -> None:
    m = MODELS["chessdojo-2024"]
    assert convert(m, "classical", 2470).rating == 2400
    assert convert(m, "classical", 2500).rating == 2500  # slope 100/30
    assert convert(m, "classical", 1665).rating == 1450
    assert convert(m, "classical", 1664).rating is None


def test_models_and_the_perfs_they_cover() -> None:
    assert list(MODELS) == ["lebowitz", "mathtuition", "chessdojo-2024"]
    assert [m.key for m in models_for("blitz")] == ["lebowitz", "mathtuition"]
    assert [m.key for m in models_for("classical")] == ["lebowitz", "chessdojo-2024"]
    assert [m.key for m in models_for("bullet")] == ["lebowitz"]
    assert models_for("correspondence") == () and models_for("ultraBullet") == ()
    assert {m.key: m.era for m in MODELS.values()} == {
        "lebowitz": "pre-2024", "mathtuition": "pre-2024", "chessdojo-2024": "post-2024"}
    for m in MODELS.values():
        assert m.source and m.data and m.fitted_range and m.name
    with pytest.raises(ValueError, match="mathtuition does not cover classical: it covers blitz"):
        convert(MODELS["mathtuition"], "classical", 1800)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands",
                           *args], capture_output=True,
                          text=True)


@pytest.mark.parametrize(("key", "perf", "x", "output", "adjusted"), WORKED)
def test_worked_values_through_the_api(key: str, perf: str, x: int, output: int | None,
                                       adjusted: int | None) -> None:
    c = api.convert(x, perf, key)[key]
    assert (c.output, c.rating) == (output, adjusted)


def test_worked_values_through_the_cli() -> None:
    # one run per perf (each CLI run costs a process start); every value is checked above
    for perf, x in (("bullet", 2100), ("blitz", 1500), ("rapid", 1800), ("classical", 1800)):
        proc = _cli("convert", str(x), "--perf", perf, "--json")
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        want = {key: (out, adj) for key, p, v, out, adj in WORKED if p == perf and v == x}
        assert want
        for key, (out, adj) in want.items():
            assert (data[key]["model_output"], data[key]["fide"]) == (out, adj), (key, perf)
        assert set(data) == {m.key for m in models_for(perf)}
    proc = _cli("convert", "1800", "--perf", "blitz", "--scale", "chessdojo-2024")
    assert proc.returncode == 2
    assert proc.stderr == ("error: chessdojo-2024 does not cover blitz; models that do: "
                           "lebowitz, mathtuition\n")
