"""The README's picture of the Overview (docs/overview.png) and what it says of it are the
demo's: the database ``tracker demo`` writes, taken at 1280 px wide."""

from __future__ import annotations

import struct
from pathlib import Path

from tracker import api

ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_overview_is_the_demos_at_1280_px(tmp_path: Path) -> None:
    png = (ROOT / "docs" / "overview.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk: width, height
    assert width == 1280 and 900 <= height <= 1400
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "![The Overview" in readme and "(docs/overview.png)" in readme
    assert "taken before" not in readme  # the picture is no older than the demo
    db = tmp_path / "demo.db"
    api.demo(db=db)
    band = api.replay("indexinator", db=db, perf="blitz").periods[-1].band
    assert band is not None and band.median is not None
    median = api.shown(band.median, "0.1")  # 1549.5: shown whole, rounded half up as FIDE
    whole = api.shown(band.median, "1")
    assert (f"**FIDE-style rating now**, {whole} (the median {median}, shown whole"
            in readme), (whole, median)
    assert f"their band\n  {band.min}–{band.max} beside it;" in readme, band
