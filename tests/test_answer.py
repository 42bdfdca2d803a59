"""The answer first (issue 20) and limits said out loud (issue 19, items 13 and 14).

Run as a newcomer would: a fresh database, the bundled export imported with ``tracker
import-file``, then the commands as printed. The FIDE-scale estimate is the default answer;
with several models it is their median (the JSON says so), with one covering model it is that
model; the real FIDE rating, when linked, is compared with the median.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from tests.lichess_server import LichessServer
from tracker import api

FIDE_ID = "35009192"  # served by the local Lichess-compatible server (tests/lichess_server.py)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands",
                           *args], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def fresh_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh database holding the bundled export, imported as the README says."""
    db = tmp_path_factory.mktemp("answer") / "fresh.db"
    done = cli("--db", str(db), "import-file", str(api.demo_file()), "--user", "indexinator")
    assert done.returncode == 0, done.stderr
    return db


@pytest.fixture
def copy_db(fresh_db: Path, tmp_path: Path) -> Path:
    path = tmp_path / "copy.db"
    with sqlite3.connect(fresh_db) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    return path


def replay_json(db: Path, *args: str) -> dict:  # type: ignore[type-arg]
    done = cli("--db", str(db), "replay", "indexinator", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout, parse_float=Decimal)  # type: ignore[no-any-return]


def test_the_default_is_the_models_median_on_the_fide_scale(fresh_db: Path) -> None:
    data = replay_json(fresh_db, "--perf", "blitz")
    assert data["scale"] == "all" and data["answer"] == "median"
    last = data["periods"][-1]
    assert last["band"]["median"] == 1499 and last["rating_after"] == 1499


def test_one_covering_model_is_that_model_with_no_band(fresh_db: Path) -> None:
    text = cli("--db", str(fresh_db), "replay", "indexinator", "--perf", "bullet")
    assert text.returncode == 0, text.stderr
    assert "band" not in text.stdout and "disagree" not in text.stdout
    data = replay_json(fresh_db, "--perf", "bullet")
    lebowitz = replay_json(fresh_db, "--perf", "bullet", "--scale", "lebowitz")
    assert [p["rating_after"] for p in data["periods"]] == [
        p["rating_after"] for p in lebowitz["periods"]] == [1671]


def test_the_lichess_scale_keeps_todays_numbers(fresh_db: Path) -> None:
    data = replay_json(fresh_db, "--perf", "blitz", "--scale", "lichess")
    assert data["periods"][0]["rating_after"] == 1639
    assert data["periods"][-1]["rating_after"] is None
    assert "fell to 1361" in cli("--db", str(fresh_db), "replay", "indexinator", "--perf",
                                 "blitz", "--scale", "lichess").stdout


def test_the_gap_with_a_linked_fide_id_is_the_medians(copy_db: Path) -> None:
    with LichessServer() as server:
        linked = cli("--db", str(copy_db), "fide", "link", "indexinator", FIDE_ID,
                     "--base-url", server.url)
    assert linked.returncode == 0, linked.stderr
    # one clear line: who, federation, the three ratings now
    assert linked.stdout.count("\n") == 1
    assert linked.stdout.startswith("linked indexinator to FIDE 35009192 Erigaisi Arjun (GM, "
                                    "IND, born 2003): standard 2782, rapid 2708, blitz 2738 now")
    data = replay_json(copy_db, "--perf", "blitz")
    last = data["periods"][-1]
    assert last["fide_real"] is not None
    assert last["gap"] == last["band"]["median"] - last["fide_real"] == 1499 - last["fide_real"]
    gaps = [p["gap"] for p in data["periods"] if p["gap"] is not None]
    assert data["mean_gap"] == (sum(Decimal(g) for g in gaps) / len(gaps)).quantize(
        Decimal("0.01"))
    # the terminal: the real rating now and the signed gap in whole points over its months
    text = cli("--db", str(copy_db), "replay", "indexinator", "--perf", "blitz").stdout
    mean = -int(-data["mean_gap"] + Decimal("0.5"))  # half away from zero (negative here)
    assert data["fide_real_now"] == 2761  # the latest standard list (2026-06)
    assert (f"Real FIDE now: {data['fide_real_now']} (standard list); the estimate "
            f"is {-mean} points below your real standard rating on average, over {len(gaps)} "
            "months.") in " ".join(text.split())
    rapid = replay_json(copy_db, "--perf", "blitz", "--fide-list", "rapid")
    assert rapid["fide_list"] == "rapid" and rapid["periods"][-1]["fide_real"] != last[
        "fide_real"]


def test_version_and_calc_without_k(tmp_path: Path) -> None:
    version = cli("--version")
    assert version.returncode == 0 and version.stdout == f"tracker {api.version()}\n"
    calc = cli("calc", "--rating", "1500", "1600:1")
    assert calc.returncode == 0, calc.stderr
    # 20 × (1 − 0.36) = 12.80: K 20, said to be FIDE's K for an established adult
    assert "K 20; change +12.80 → new rating 1513 (K 20: FIDE's K for an established adult " \
           "rated 1500" in " ".join(calc.stdout.split())
    high = json.loads(cli("calc", "--rating", "2500", "2600:1", "--json").stdout)
    assert high["k"] == 10 and high["new_rating"] == 2506  # K 10 from 2400


def test_scale_and_perf_are_case_insensitive_alike(fresh_db: Path) -> None:
    upper = replay_json(fresh_db, "--perf", "BLITZ", "--scale", "Lebowitz")
    lower = replay_json(fresh_db, "--perf", "blitz", "--scale", "lebowitz")
    assert upper == lower and upper["scale"] == "lebowitz"
    assert cli("convert", "1500", "--perf", "Blitz", "--scale", "LEBOWITZ").returncode == 0


def test_unknown_local_player_exits_1_like_an_unknown_lichess_account(fresh_db: Path) -> None:
    done = cli("--db", str(fresh_db), "replay", "nobody_here", "--perf", "blitz")
    assert done.returncode == 1 and done.stderr.startswith("error: ")
    with LichessServer() as server:
        remote = cli("--db", str(fresh_db), "import", "no_such_player", "--base-url",
                     server.url)
    assert remote.returncode == 1 and remote.stderr.count("\n") == 1


def test_convert_says_where_a_rating_is_outside_a_models_range() -> None:
    high = cli("convert", "4000", "--perf", "blitz")
    assert high.returncode == 0
    assert ("lebowitz: Lichess blitz 4000 → FIDE 3295: beyond the model's fitted range "
            "(FIDE 1000–2900)") in high.stdout
    low = cli("convert", "1600", "--perf", "classical", "--scale", "chessdojo-2024")
    assert low.stdout == ("chessdojo-2024: Lichess classical 1600 → no FIDE rating: below the "
                          "model's range (1665)\n")
    assert "unrated" not in low.stdout
    data = json.loads(cli("convert", "4000", "--perf", "blitz", "--json").stdout)
    assert data["lebowitz"]["note"] == "beyond the model's fitted range (FIDE 1000–2900)"


def test_a_lichess_start_rating_the_model_cannot_place_says_it_starts_unrated(
        fresh_db: Path) -> None:
    done = cli("--db", str(fresh_db), "replay", "indexinator", "--perf", "blitz",
               "--start-rating", "400", "--start-scale", "lichess", "--scale", "lebowitz")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert "from 400" not in first
    # lebowitz blitz: 78.6 + 0.804 × 400 = 400.2 → 400, below FIDE's old floor of 1000
    assert ("starting unrated: Lichess 400 is outside what the models can place (lebowitz: "
            "the model's 400 is below FIDE's floor of the time (1000))") in first
    data = replay_json(fresh_db, "--perf", "blitz", "--start-rating", "400", "--start-scale",
                       "lichess", "--scale", "lebowitz")
    assert data["start_ratings"] == {"lebowitz": None}
    assert data["periods"][0]["rating_before"] is None


def test_a_saved_scale_that_does_not_cover_the_perf_is_one_rule_for_cli_and_dashboard(
        copy_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saved = cli("--db", str(copy_db), "settings", "indexinator", "--scale", "chessdojo-2024")
    assert saved.returncode == 0, saved.stderr
    note = ("your saved scale chessdojo-2024 (tracker settings) does not cover blitz: all "
            "models shown instead")
    done = cli("--db", str(copy_db), "replay", "indexinator", "--perf", "blitz")
    assert done.returncode == 0, done.stderr
    assert f"note: {note}" in done.stdout
    data = replay_json(copy_db, "--perf", "blitz")
    assert data["scale"] == "all" and data["scale_note"] == note
    assert data["periods"][-1]["rating_after"] == 1499
    # given on the command line, the same scale is a usage error
    given = cli("--db", str(copy_db), "replay", "indexinator", "--perf", "blitz", "--scale",
                "chessdojo-2024")
    assert given.returncode == 2 and "does not cover blitz" in given.stderr
    # the dashboard: the same fallback, the same words
    from tests.test_dashboard import assert_clean, metrics, open_app, texts

    at = open_app(copy_db, monkeypatch)
    assert_clean(at)
    assert metrics(at)["FIDE-style rating now"] == "1499"
    sidebar = " ".join(str(c.value) for c in at.sidebar.caption)
    assert note in sidebar or note in texts(at)


def test_games_on_a_fide_scale_compute_pd_from_the_rating_shown(
        copy_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_dashboard import assert_clean, open_app, texts
    from tracker.fide import game_expected
    from tracker.fide.scale import MODELS, convert

    at = open_app(copy_db, monkeypatch, "views/games.py")
    assert_clean(at)
    assert "Figures on the **FIDE scale (all models: lebowitz, mathtuition)**" in texts(at)
    for key in ("lebowitz", "mathtuition"):
        at.segmented_control(key="games_model").set_value(key).run()
        assert_clean(at)
        table = at.dataframe[0].value  # 2025-10, the newest month
        counted = table[table["counted"]]
        assert len(counted) == 14
        report = api.replay("indexinator", "blitz", db=copy_db)
        before = report.periods[-1].band.results[key].rating_before  # type: ignore[union-attr]
        settings = report.settings.engine()
        for lichess, fide, pd in zip(counted["opponent_rating"], counted["opponent_on_scale"],
                                     counted["expected"], strict=True):
            assert fide == convert(MODELS[key], "blitz", int(lichess)).rating
            scored = game_expected(before, int(fide), 2, settings, period="2025-10")
            assert scored is not None and float(scored[0]) == pd


def test_the_dashboard_compares_with_the_standard_list_or_the_one_picked(
        copy_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_dashboard import assert_clean, metrics, open_app

    with LichessServer() as server:
        api.fide_link("indexinator", FIDE_ID, db=copy_db, base_url=server.url)
    at = open_app(copy_db, monkeypatch)
    assert_clean(at)
    shown = metrics(at)
    standard = api.replay("indexinator", "blitz", db=copy_db)
    assert shown["FIDE-style rating now"] == "1499"
    assert shown["Real FIDE now (standard)"] == str(standard.real_now) == "2761"
    at.segmented_control(key="fide_list").set_value("blitz").run()
    assert_clean(at)
    blitz = api.replay("indexinator", "blitz", db=copy_db, fide_list="blitz")
    assert metrics(at)["Real FIDE now (blitz)"] == str(blitz.real_now)
    gap = api.gap_text(blitz)
    assert gap is not None and "your real blitz rating" in gap
    assert f"The estimate is {gap}." in [c.value for c in at.caption]
