"""scripts/fit_level_model.py is reproducible: the same data gives the same model file, byte for
byte, and the file it writes is one tracker.analysis.level reads (run on the first 2,000 shared
games, with sets of >= 3 games since so small a sample has no player with 10)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tracker.analysis.level import (
    game_level,
    level_model_from_json,
    level_of_scores,
    score,
    set_level,
    set_score,
)

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "fixtures" / "analysed" / "lichess-rapid-analysed-first2000.ndjson.zst"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fit_level_model",
                                                  ROOT / "scripts" / "fit_level_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # the script's dataclasses look their module up
    spec.loader.exec_module(module)
    return module


fit = _load()


def test_split_is_fixed_by_player() -> None:
    # a fixed hash of the user id: the same player is always on the same side
    assert [fit.split_of(p) for p in ("sonny2011", "lautarosamaan", "indexinator")] == [
        "train", "validation", "held-out"]
    shares = [fit.split_of(f"player{i}") for i in range(3000)]
    assert shares.count("train") / 3000 == pytest.approx(0.6, abs=0.03)
    assert shares.count("held-out") / 3000 == pytest.approx(0.2, abs=0.03)


def test_fit_is_reproducible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fit, "SET_MIN", 3)
    pgs, sha256, games = fit.load(SAMPLE)
    assert (games, len(pgs)) == (2000, 4000)
    assert sha256 == "24204ec31dee53bc6c76f2d36e7faf88fcec607256f182778484141ee39fd3e4"
    first = json.dumps(fit.fit(pgs, sha256, games, SAMPLE.name))
    second = json.dumps(fit.fit(list(reversed(pgs)), sha256, games, SAMPLE.name))
    assert first == second
    model_data = json.loads(first)
    held = model_data["held_out"]
    assert held["model"]["games"]["n"] == model_data["training"]["player_games"]["held-out"]
    # the baselines measured in the same run, with player-level bootstrap intervals
    for name in ("model", "training_median", "acpl_line"):
        f = held[name]["games"]
        assert f["mae_ci"][0] <= f["mae"] <= f["mae_ci"][1]
        assert f["coverage_ci"][0] <= f["coverage_10_90"] <= f["coverage_ci"][1]
    assert 0 <= model_data["within_player_correlation"] < 1
    assert 0.5 < model_data["likelihood"]["sd_scale"] < 2
    # the set fit: its own regression and spread, calibrated on validation players, measured
    # beside model 2's combination (the mean of the games' scores) in the same run
    set_fit = model_data["set"]
    assert set_fit["min_games"] == fit.SET_FIT_MIN and set_fit["training"]["sets"] >= 20
    # 127 training sets: too few for the hinged basis's 320 weights, the summary alone (the 31
    # numbers of model 4, then model 5's board (7), clock setting (2), opening identities (40))
    width = len(model_data["features"])
    assert width == len(fit.SUMMARY) + 7 + 2 + fit.OPENING_IDENTITIES
    assert set_fit["knots"] == [] and len(set_fit["regression"]["coef"]) == width
    # the set estimate's prior: the power and the tilt chosen on validation sets, both recorded
    assert set_fit["prior_tilt"]["knots"] == list(fit.TILT_KNOTS)
    assert "power_prior" in set_fit["training"]
    # on 2,000 games the validation sets' ranges hold 80 % even at the solver's floor (0.5):
    # a set fit of 80 features on 127 sets is too spread out (the full data's scale: ~1.03)
    assert set_fit["likelihood"]["sd_scale"] == 0.5 and 0 <= set_fit["prior_weight"] <= 1
    assert [f["prior_weight"] for f in set_fit["training"]["prior_weight_frontier"]][:3] == [
        0.0, 0.05, 0.1]
    assert held["model"]["sets"]["n"] == held["mean_of_game_scores"]["sets"]["n"] > 0
    assert set(held["model"]["blocks_by_size"]) == {"2", "5"}
    model = level_model_from_json(model_data)
    level = game_level(model, pgs[0].features)
    assert level.model == "level-rapid-5" and level.low <= level.estimate <= level.high


def test_the_set_fit_bends_at_knots_given_enough_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Model 4: with enough training sets, the set fit reads each game's summary and its hinges
    at the training games' 10th, 50th and 90th percentiles of each feature; the file's set
    section reads a set as the mean of its games' set scores (kept per game by the report)."""
    monkeypatch.setattr(fit, "SET_MIN", 3)
    monkeypatch.setattr(fit, "SET_SETS_PER_WEIGHT", 0.1)  # 80 features × 4: 320 weights
    pgs, sha256, games = fit.load(SAMPLE)
    data = fit.fit(pgs, sha256, games, SAMPLE.name)
    set_fit = data["set"]
    assert set_fit["knot_percentiles"] == [10, 50, 90]
    width = len(data["features"])
    assert [len(row) for row in set_fit["knots"]] == [width] * 3
    assert len(set_fit["regression"]["coef"]) == 4 * width
    acpl_at = fit.SUMMARY.index("ln(1 + ACPL)")
    low, mid, high = (row[acpl_at] for row in set_fit["knots"])
    assert low < mid < high
    model = level_model_from_json(json.loads(json.dumps(data)))
    mine = [pg.features for pg in pgs if pg.features.moves][:8]
    level = set_level(model, mine)
    kept = level_of_scores(model, [score(model, g) for g in mine], level.moves, False,
                           [set_score(model, g) for g in mine])
    assert kept == level and level.games == 8 and level.low <= level.estimate <= level.high


def test_a_speed_gets_its_own_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    """A speed's model: the rapid score on the speed's scale, fitted on the speed's games.
    Here the "blitz" games are the sample's rapid ones with every rating 300 points lower:
    the fitted scale reads them 300 lower, within a few points."""
    monkeypatch.setattr(fit, "SET_MIN", 3)
    pgs, sha256, games = fit.load(SAMPLE)
    base = fit.fit(pgs, sha256, games, SAMPLE.name)
    lower = [fit.PlayerGame(pg.game_id, pg.player, pg.rating - 300, pg.played_at,
                            pg.features, "blitz") for pg in pgs]
    blitz = fit.speed_model(base, "blitz", lower, "x", "sample")
    assert blitz["speed_scale"]["c"] == pytest.approx(1800, abs=40)
    assert blitz["speed_scale"]["d"] == pytest.approx(1.0, abs=0.1)
    rapid, shifted = (level_model_from_json(m) for m in (base, blitz))
    moved = sorted((b.low + b.high - a.low - a.high) / 2 for a, b in (
        (game_level(rapid, pg.features), game_level(shifted, pg.features))
        for pg in pgs[:40] if pg.features.moves))
    assert moved[len(moved) // 2] == pytest.approx(-300, abs=60)  # the ranges' middles
    assert "blitz scale fitted on" in blitz["borrows"]
