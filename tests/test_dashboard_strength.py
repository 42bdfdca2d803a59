"""The strength in the moves on the dashboard (AppTest: the pages' scripts without a browser):
the Games page's columns and one game's numbers, and the panel that starts ``analyse``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ANALYSED
from tests.test_analyse import bare_export, needs_engine
from tests.test_dashboard import assert_clean, metrics, open_app, texts
from tracker.importing import import_file
from tracker.store import analysis as stored
from tracker.store.db import Store

GAME = "ZWcbDCnz"


def _db(tmp_path: Path, *, evals: bool) -> Path:
    path = tmp_path / "t.db"
    source = ANALYSED if evals else bare_export(tmp_path)
    with Store(str(path)) as store:
        import_file(source, store=store, user="reda46")
    return path


def test_the_games_page_shows_a_linked_games_numbers(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(_db(tmp_path, evals=True), monkeypatch, "views/games.py",
                  {"player": "reda46", "perf": "rapid", "game": GAME})
    assert_clean(at)
    config = json.loads(at.dataframe[0].proto.columns)
    assert config["accuracy"]["label"] == "Accuracy" and config["acpl"]["label"] == "ACPL"
    assert [m.value for m in at.metric if m.label == "Accuracy"] == ["79%", "67%"]
    assert [m.value for m in at.metric if m.label == "ACPL"] == ["72", "93"]
    # each side's estimate, its 10–90 % range under it (a metric's value is cut short at
    # 800 px: "2691 (2691–…")
    assert [m.value for m in at.metric if m.label == "Level shown"] == ["1619", "1616"]
    ranges = [c.value for c in at.caption if c.value.startswith("10–90 % range ")]
    assert ranges == ["10–90 % range 1287–2338", "10–90 % range 1277–2327"]
    shown = texts(at)
    assert "Turning point for black: 43…d2??" in shown and "Better was **Rh8**" in shown
    assert len(at.get("plotly_chart")) == 1  # the eval graph


def test_the_games_table_marks_a_level_that_has_a_note_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """nessi52's 606 (409–606) of the tests' rapid sample falls below the model's fitted range
    and where it is weak: the Games table marks it, as ``tracker strength`` does; his other
    game, 1425 (793–1730), not."""
    from tracker import api

    sample = Path(__file__).parent / "fixtures" / "analysed" / \
        "lichess-rapid-analysed-first2000.ndjson.zst"
    path = tmp_path / "low.db"
    api.import_file(sample, db=path, user="nessi52")
    at = open_app(path, monkeypatch, "views/games.py", {"player": "nessi52", "perf": "rapid"})
    assert_clean(at)
    frame = at.dataframe[0].value
    levels = [v for v in frame["level"] if isinstance(v, str)]
    assert sorted(levels) == ["1425 (793–1730)", "606 (409–606) †"]
    assert "† after a level: it has a note of its own" in texts(at)


def test_the_overview_says_one_partial_game_counts_in_no_level(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One game of reda46's with 3 evals for 100+ plies: "1 game … only counts in no level"
    (it read "1 game … only count in no level")."""
    from tests.test_strength_report import _partial_export

    path, _, _ = _partial_export(tmp_path)
    db = tmp_path / "p.db"
    with Store(str(db)) as store:
        import_file(path, store=store, user="reda46")
    at = open_app(db, monkeypatch, None, {"player": "reda46", "perf": "rapid"})
    assert_clean(at)
    caption = next(c.value for c in at.caption if "analysed games show" in c.value)
    assert caption.endswith(" 1 game with evals for part of the plies only counts in no level.")


def test_a_game_without_evals_says_how_to_get_them(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app(_db(tmp_path, evals=False), monkeypatch, "views/games.py",
                  {"player": "reda46", "perf": "rapid", "game": GAME})
    assert_clean(at)
    assert "No evals for this game yet" in texts(at)
    assert "Level shown" not in metrics(at)


@needs_engine
def test_the_games_page_starts_analyse_with_progress(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    db = _db(tmp_path, evals=False)
    at = open_app(db, monkeypatch, "views/games.py", {"player": "reda46", "perf": "rapid"})
    assert_clean(at)
    by_label = {n.label: n for n in at.number_input}
    by_label["Most recent games"].set_value(2)
    by_label["Nodes per position"].set_value(2_000)
    next(b for b in at.button if b.label == "Analyse").click()
    at.run(timeout=240)
    assert_clean(at)
    done = [s.value for s in at.success]
    assert any("2 analysed by Stockfish" in str(v) and "complete" in str(v) for v in done), done
    with Store(str(db)) as store:
        assert stored.count_analysed(store, "reda46") == {"engine": 2}


def test_the_overview_draws_only_the_months_whose_range_is_narrow() -> None:
    """Issue 33 item 5: a month's level is drawn only with a range narrower than 400 points,
    and the axis holds every drawn range (never off the chart)."""
    import sys

    import plotly.graph_objects as go

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "dashboard"))
    import strength_charts  # the dashboard's own module, as Streamlit imports it

    from tracker.analysis.level import Level
    from tracker.report.strength import SetLevel

    def month(label: str, low: int, high: int) -> SetLevel:
        return SetLevel(label, 20, Level((low + high) // 2, low, high, "level-blitz-5", None,
                                         20, 800))

    narrow, wide = month("2025-01", 1300, 1650), month("2025-02", 1100, 1600)
    months = [narrow, wide, SetLevel("2025-03", 0, None)]
    assert strength_charts.drawn_months(months) == [narrow]
    fig = go.Figure().set_subplots(rows=1, cols=1)
    fig.update_yaxes(range=[1400, 1500])
    out = strength_charts.add_levels(fig, months)
    (trace,) = [t for t in out.data if t.name == strength_charts.LEVEL_NAME]
    assert list(trace.y) == [1475]
    low, high = out.layout.yaxis.range
    assert low <= 1300 and high >= 1650
def test_a_drawn_month_whose_level_has_a_note_is_an_open_square_with_its_note() -> None:
    """Issue 33 item 5: where a month's level falls where the model is weak (above the rapid
    model's fitted range, in its weak sets band), the chart says so beside it: an open square
    of its own legend entry, the note on hover (it was a plain square, the note nowhere on the
    Overview)."""
    import sys

    import plotly.graph_objects as go

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "dashboard"))
    import strength_charts

    from tracker.analysis.level import Level
    from tracker.report.strength import SetLevel

    note = ("outside the range the model was fitted on (804–2513); the model is weak here: "
            "too few held-out sets above 2399 to check the model")
    weak = SetLevel("2021-11", 20, Level(2566, 2413, 2779, "level-rapid-4", note, 20, 640))
    plain = SetLevel("2022-10", 24, Level(1892, 1712, 2100, "level-rapid-4", None, 24, 700))
    fig = go.Figure().set_subplots(rows=1, cols=1)
    fig.update_yaxes(range=[1900, 2700])
    out = strength_charts.add_levels(fig, [weak, plain], {"2021-11": note})
    by_name = {t.name: t for t in out.data}
    noted = by_name[strength_charts.LEVEL_NOTED_NAME]
    assert list(noted.y) == [2566] and noted.marker.symbol == "square-open"
    assert noted.customdata[0][4] == (
        "<br>outside the range the model was fitted on (804–2513)<br>the model is weak here: "
        "too few held-out sets above 2399 to check the model")
    square = by_name[strength_charts.LEVEL_NAME]
    assert list(square.y) == [1892] and square.marker.symbol == "square"
    assert square.customdata[0][4] == ""
    low, high = out.layout.yaxis.range
    assert low <= 1712 and high >= 2779  # both ranges on the chart
    # without notes, every drawn month is a plain square, as before
    again = strength_charts.add_levels(fig, [weak, plain])
    assert [t.name for t in again.data] == [strength_charts.LEVEL_NAME]


def test_the_overview_says_when_the_recent_level_reads_uncalibrated_evals(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The group table said ", uncalibrated evals" of a level whose games include one analysed
    at 2,000 nodes (no calibration covers it: it reads high); the Overview, where the same
    level stands, said only "read through their engine's calibration where one exists"."""
    from tests.test_strength_saved import _engine_evals, _games_without_evals
    from tracker import api
    from tracker.core.records import Analysis
    from tracker.store.analysis import write_engine_analysis

    path = tmp_path / "local.db"
    api.import_file(api.demo_file(api.DEMO_ANALYSED_FILE), db=path, user="indexinator")
    with Store(str(path)) as store:
        ((pk, _, raw_moves),) = _games_without_evals(store)
        assert write_engine_analysis(store, pk, Analysis(
            _engine_evals(len(raw_moves.split()), 30), "engine", "Stockfish", "15.1", 2_000))
    said = ("1 of these 10 games analysed at a budget no engine calibration covers: they read "
            "higher than Lichess's evals would")
    assert api.strength("indexinator", db=path, perf="blitz").recent_uncalibrated() == said
    at = open_app(path, monkeypatch, None, {"player": "indexinator", "perf": "blitz"})
    assert_clean(at)
    caption = next(c.value for c in at.caption if "analysed games show" in c.value)
    assert "The last 10 analysed games show " in caption and f" {said[0].upper()}{said[1:]}." \
        in caption


def test_the_levels_legend_entries_add_legend_rows_not_squeeze_the_plot() -> None:
    """The Overview's height counts its legend's rows (2 entries a row); the levels' entries
    were added after it: a row more overflowed the room under the chart."""
    import sys

    import plotly.graph_objects as go

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "dashboard"))
    import charts
    import strength_charts

    from tracker.analysis.level import Level
    from tracker.report.strength import SetLevel

    fig = go.Figure().set_subplots(rows=1, cols=1)
    for name in ("Lichess rating after each game", "FIDE-style rating in force"):
        fig.add_trace(go.Scatter(x=[1], y=[1500], name=name), row=1, col=1)
    fig.update_layout(height=600, margin={"b": 44})
    plain = SetLevel("2022-10", 24, Level(1892, 1712, 2100, "level-rapid-4", None, 24, 700))
    weak = SetLevel("2022-11", 20, Level(2566, 2413, 2779, "level-rapid-4", "weak", 20, 640))
    out = strength_charts.add_levels(fig, [plain, weak], {"2022-11": "weak"})
    assert len(out.data) == 4  # 2 rows of the legend, not 1
    assert (out.layout.height, out.layout.margin.b) == (600 + charts.LEGEND_ROW_HEIGHT,
                                                        44 + charts.LEGEND_ROW_HEIGHT)
    one = strength_charts.add_levels(fig, [plain])  # 3 entries: still 2 rows
    assert (one.layout.height, one.layout.margin.b) == (624, 68)


def test_a_month_whose_range_the_grid_cuts_is_not_drawn(tmp_path: Path) -> None:
    """EricRosen's 3 rapid games of 2021-11 read 2866 (2673–2979): 306 points wide only because
    the model's ratings stop at 3000. It was the one month of his drawn, his 24 games of
    2022-10 (1892 (1712–2117), 405 wide) not. A month cut by the grid is not drawn."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "dashboard"))
    import strength_charts

    from tracker import api
    from tracker.analysis.level import Level
    from tracker.report.strength import SetLevel

    cut = SetLevel("2021-11", 3, Level(2866, 2673, 2979, "level-rapid-4", None, 3, 96), (),
                   3000)
    whole = SetLevel("2022-10", 24, Level(1892, 1712, 2100, "level-rapid-4", None, 24, 700))
    assert strength_charts.drawn_months([cut, whole]) == [whole]
    # the report marks the months so cut: 3 of the sample's games of one strong player
    sample = Path(__file__).parent / "fixtures" / "analysed" / \
        "lichess-rapid-analysed-first2000.ndjson.zst"
    db = tmp_path / "s.db"
    for user in ("han80", "nessi52"):
        api.import_file(sample, db=db, user=user)
    (month,) = api.strength("han80", db=db, perf="rapid").months
    assert month.level is not None and (month.level.low, month.level.high) == (2225, 2760)
    assert month.cut is None  # 240 points below the grid's end: a range of its own
    # nessi52's 2 games of 2022-05 read 722 (460–863): not cut; one of them alone,
    # 606 (409–606), is cut at 400, and says so
    nessi = api.strength("nessi52", db=db, perf="rapid")
    low = next(m for m in nessi.months if m.label == "2022-05")
    assert low.level is not None and low.level[:3] == (722, 460, 863) and low.cut is None
    assert strength_charts.drawn_months([low]) == []  # 403 points wide: over the 400 drawn
    game = next(g.side(c).level for g, c in nessi.games if g.id == "0WVC5wdm")
    assert game is not None and game[:3] == (606, 409, 606)
    assert "the range is cut at 400, where the model's ratings end" in (game.note or "")


def test_the_analyse_progress_says_the_rate_and_the_time_left(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_dashboard import APP

    monkeypatch.syspath_prepend(str(APP.parent))
    import strength_ui

    assert strength_ui.eta_text(0, 20, 3.0) == (
        "Analysed 0 of 20 games · estimating the time left…")
    assert strength_ui.eta_text(4, 20, 10.0) == (
        "Analysed 4 of 20 games · 0.40 games/s · about 40 s left")
    assert strength_ui.eta_text(5, 2000, 50.0) == (
        "Analysed 5 of 2000 games · 0.10 games/s · about 5 h 32 min left")
    assert strength_ui.eta_text(30, 100, 90.0) == (
        "Analysed 30 of 100 games · 0.33 games/s · about 3 min 30 s left")
    assert strength_ui.eta_text(20, 20, 10.0) == "Analysed 20 of 20 games"


def test_the_analyse_panel_is_absent_in_read_only_mode(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    db = _db(tmp_path, evals=False)
    at = open_app(db, monkeypatch, "views/games.py", {"player": "reda46", "perf": "rapid"})
    assert any(e.label.startswith("Analyse") for e in at.expander)  # writable: there
    monkeypatch.setenv("TRACKER_READ_ONLY", "1")
    at = open_app(db, monkeypatch, "views/games.py", {"player": "reda46", "perf": "rapid"})
    assert_clean(at)
    assert not [e.label for e in at.expander if e.label.startswith("Analyse")]
    assert not [b for b in at.button if b.label in ("Analyse", "Stop")]


def test_the_analyse_panel_defaults_to_the_jobs_the_cli_takes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29: the panel's jobs default to ``tracker analyse``'s (one per core this process
    may use, :func:`tracker.api.default_jobs`), not to 1."""
    import os

    from tracker import api

    db = _db(tmp_path, evals=False)
    cores = min(64, len(os.sched_getaffinity(0)))
    assert api.default_jobs() == cores
    at = open_app(db, monkeypatch, "views/games.py", {"player": "reda46", "perf": "rapid"})
    assert_clean(at)
    assert {n.label: n.value for n in at.number_input}["Jobs (engine processes)"] == cores
    monkeypatch.setattr(api, "default_jobs", lambda: 3)  # one default, read from the API
    at = open_app(db, monkeypatch, "views/games.py", {"player": "reda46", "perf": "rapid"})
    assert_clean(at)
    assert {n.label: n.value for n in at.number_input}["Jobs (engine processes)"] == 3
