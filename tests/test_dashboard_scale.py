"""The dashboard on the FIDE scale: the scale picker (kept in the URL), the models' median and
band, the real FIDE line when a FIDE id is linked, each labelled with its scale; Settings saves
the default scale and chapter; the Periods table carries the band and the real rating.
AppTest for the pages; a browser test for what plotly draws (screenshot in test-artifacts/)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest

from dashboard import charts
from tests.browser import Browser
from tests.lichess_server import LichessServer
from tests.test_dashboard import assert_clean, chart_traces, open_app
from tests.test_dashboard_browser import ARTIFACTS, BAD_TEXT, CHART_READY
from tracker import api

FIDE_ID = "35009192"  # the real answers the local Lichess serves (a GM: standard 2761 in 2026)


@pytest.fixture
def linked_db(indexinator_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
              ) -> Iterator[Path]:
    """A copy of the sample with indexinator linked to a FIDE id (fetched from the local
    Lichess-compatible server)."""
    path = tmp_path / "linked.db"
    with sqlite3.connect(indexinator_db) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    with LichessServer() as server:
        api.fide_link("indexinator", FIDE_ID, db=path, base_url=server.url)
    yield path


def test_scale_all_draws_median_band_and_the_real_line(linked_db: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(linked_db, monkeypatch, query={"player": "indexinator", "perf": "blitz",
                                                 "scale": "all"})
    assert_clean(at)
    report = api.replay("indexinator", "blitz", db=linked_db, scale="all")
    traces = chart_traces(at)
    label = report.scale_label
    assert charts.LICHESS_NAME in traces
    assert charts.MEDIAN_NAME in traces  # the bold line is the answer: the median
    assert charts.BAND_NAME in traces
    assert charts.real_fide_name("standard") in traces
    # each model's own line is there, hidden until clicked in the legend
    for key in ("lebowitz", "mathtuition"):
        assert traces[charts.model_name(key)]["visible"] == "legendonly"
    assert not any(name.startswith("FIDE-style rating in force (") for name in traces)
    captions = [c.value for c in at.caption]
    assert any(label in c for c in captions)
    # the headline quotes the models' median, the band beside it (not the first model's)
    last = report.periods[-1].band
    assert last is not None and (last.min, last.median, last.max) == (1453, 1499, 1545)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["FIDE-style rating now"] == "1499"
    assert "the models' median; band 1453–1545" in captions
    # the real FIDE rating beside it, the gap signed in whole points over the overlap
    real = report.real[-1][1]
    assert metrics["Real FIDE now (standard)"] == str(real)
    gap = api.gap_text(report)
    mean = report.mean_gap
    assert mean is not None and mean < 0  # a GM's real rating: the estimate is far below
    whole = -int(-mean + Fraction(1, 2))  # half away from zero, for a negative mean
    assert gap == (f"{-whole} points below your real standard rating on average, over "
                   f"{report.gap_periods} months")
    assert f"The estimate is {gap}." in captions
    assert report.periods[-1].gap == 1499 - report.periods[-1].fide_real


def test_the_default_scale_is_all_models_with_the_plain_url(
        linked_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(linked_db, monkeypatch)
    assert_clean(at)
    assert "scale" not in at.query_params
    traces = chart_traces(at)
    label = api.replay("indexinator", "blitz", db=linked_db).scale_label
    assert label == "FIDE scale (all models: lebowitz, mathtuition)"
    assert charts.MEDIAN_NAME in traces
    assert {m.label: m.value for m in at.metric}["FIDE-style rating now"] == "1499"
    assert "unrated" not in " ".join(str(m.value) for m in at.metric)


def test_settings_save_the_default_scale_and_chapter(linked_db: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(linked_db, monkeypatch, "views/settings.py")
    assert_clean(at)
    at.selectbox(key="set_scale_indexinator").set_value("lebowitz")
    at.selectbox(key="set_chapter_indexinator").set_value("standard")
    at.button[0].click().run()
    assert_clean(at)
    saved = api.settings("indexinator", db=linked_db)
    assert (saved.scale, saved.chapter) == ("lebowitz", "standard")


def test_periods_carry_the_band_and_the_real_rating(linked_db: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(linked_db, monkeypatch, "views/periods.py",
                  query={"player": "indexinator", "perf": "blitz", "scale": "all"})
    assert_clean(at)
    table = at.dataframe[0].value
    for col in ("band_min", "band_max", "rating_after", "fide_real", "gap"):
        assert col in table.columns
    rated = table.dropna(subset=["band_min", "band_max"])
    assert len(rated) and (rated["band_min"] <= rated["rating_after"]).all()
    assert (rated["rating_after"] <= rated["band_max"]).all()
    assert 1606 in list(table["rating_after"])  # a median's 1605.5 shown whole, as FIDE prints
    assert 1605.5 not in list(table["rating_after"])
    assert any(api.HALF_NOTE in c.value for c in at.caption)  # how it rounds, said once
    # the gap is the median's: after − real
    both = table.dropna(subset=["rating_after", "fide_real"])
    assert ((both["rating_after"] - both["fide_real"]) == both["gap"]).all()


@pytest.mark.browser
def test_browser_overview_scale_all_with_a_linked_fide_id(
        linked_db: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Issue 12's check: four labelled series (Lichess, median, band, real FIDE), no error."""
    from tests.browser import running_dashboard

    with running_dashboard(linked_db) as url, Browser(1400, 1250) as browser:
        browser.goto(f"{url}/?player=indexinator&perf=blitz&scale=all")
        assert browser.wait_for(CHART_READY, timeout=90), "the Overview never rendered"
        time.sleep(0.8)
        browser.screenshot(ARTIFACTS / "overview-scale-all-fide.png")
        text = browser.evaluate("document.body.innerText")
        legend = browser.evaluate("[...document.querySelectorAll('.js-plotly-plot "
                                  ".legendtext')].map(e => e.textContent)")
    assert not [bad for bad in BAD_TEXT if bad in text], text
    for name in (charts.LICHESS_NAME, charts.MEDIAN_NAME, charts.BAND_NAME,
                 charts.real_fide_name("standard")):
        assert name in legend, (name, legend)
