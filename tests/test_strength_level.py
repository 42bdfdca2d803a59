"""The level model (tracker.analysis.level, STRENGTH.md §3, §3a): features from evals, the
likelihood on a hand-made model whose numbers can be checked by hand, the shipped models' files,
and the guard: the level reads neither a rating nor the result, the status or the clock."""

from __future__ import annotations

import copy
import inspect
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zstandard

from tracker.analysis.formulas import acpl, win_percent
from tracker.analysis.level import (
    CLOCK_SUMMARY,
    SUMMARY,
    GameFeatures,
    MoveFeature,
    ending,
    fide_levels,
    game_level,
    level_features,
    level_model_from_json,
    level_of_scores,
    load_level_model,
    score,
    scores,
    set_basis,
    set_level,
    set_score,
    summary,
)
from tracker.analysis.turning import win_curve
from tracker.core.evals import PlyEval, from_lichess_entry
from tracker.core.records import SPEEDS
from tracker.fide.scale import MODELS, fide_rating

SAMPLE = (Path(__file__).parent / "fixtures" / "analysed"
          / "lichess-rapid-analysed-first2000.ndjson.zst")


def first_game() -> dict[str, Any]:
    with SAMPLE.open("rb") as raw:
        line = next(iter(io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw))))
    game: dict[str, Any] = json.loads(line)
    return game


def test_features_of_a_real_game() -> None:
    game = first_game()  # 0068O1lq: 50 plies, all with evals
    evals = [from_lichess_entry(e) for e in game["analysis"]]
    white = level_features(evals, "white", clock=(600, 0), result=0.0, status="resign")
    black = level_features(evals, "black", clock=(600, 0), result=1.0, status="resign")
    assert (len(white.moves), len(black.moves)) == (25, 25)
    start = win_percent(PlyEval(15, None))
    curve = win_curve(evals)
    assert white.moves[0] == MoveFeature(1, start, curve[0])  # type: ignore[arg-type]
    assert black.moves[0] == MoveFeature(2, 100 - curve[0], 100 - curve[1])  # type: ignore[operator]
    assert (white.acpl, black.acpl) == acpl(evals) == (104, 64)  # Lichess's own numbers
    assert (white.clock, white.score, black.score) == ((600, 0), 0.0, 1.0)
    assert (white.ending, black.ending) == ("loss-resign", "win-resign")


def test_ending() -> None:
    assert ending(0.5, "stalemate") == "draw-stalemate"
    assert ending(1.0, "outoftime") == ending(1.0, "timeout") == "win-time"
    assert ending(0.0, "cheat") == "loss-other"
    assert ending(None, "mate") is None and ending(1.0, None) is None


def test_features_skip_moves_without_eval_and_read_clocks() -> None:
    evals = [PlyEval(20, None), PlyEval(None, None), PlyEval(30, None), PlyEval(40, None)]
    f = level_features(evals, "white", clocks=[60000, 59000, 58000, 57000])
    # White's ply 3 has no eval before it: only ply 1 is kept
    assert f.moves == (MoveFeature(1, win_percent(PlyEval(15, None)),  # type: ignore[arg-type]
                                   win_percent(PlyEval(20, None)), 600.0),)  # type: ignore[arg-type]
    assert level_features([], "black") == GameFeatures("black", (), None, None, None)


# A hand-made model: the score is 1000 + 1000 × the mean move accuracy (0–1), a player rated r
# scores r on average with a spread of 100 at every rating; a quarter of that spread is shared
# by a player's games; a flat prior on 400–3000.
GRID = {"low": 400, "high": 3000, "step": 10}
POINTS = 261
TOY: dict[str, Any] = {
    "key": "level-toy", "version": 3, "perf": "rapid", "features": list(SUMMARY),
    "regression": {"centre": [0.0] * len(SUMMARY), "scale": [1.0] * len(SUMMARY),
                   "coef": [1000.0 if n == "mean move accuracy" else 0.0 for n in SUMMARY],
                   "intercept": 1000.0},
    "grid": GRID,
    "likelihood": {"mean": [400.0 + 10 * i for i in range(POINTS)], "sd": [100.0] * POINTS},
    "within_player_correlation": 0.25, "prior": [1.0] * POINTS,
    "prior_weight": {"game_estimate": 0.0, "game_range": 0.0, "set_estimate": 0.0,
                     "set_range": 0.0},
    "fitted_range": [1000, 2000],
}
Z90 = 1.2815516


def moves(clean: int, lossy: int) -> GameFeatures:
    """``clean`` moves losing nothing (accuracy 100) and ``lossy`` ones losing 10 Win%
    (accuracy 64.58, STRENGTH.md §2)."""
    good = [MoveFeature(i + 1, 50.0, 50.0) for i in range(clean)]
    bad = [MoveFeature(clean + i + 1, 50.0, 40.0) for i in range(lossy)]
    return GameFeatures("white", (*good, *bad), acpl=0)


def test_the_summary_of_a_game() -> None:
    s = dict(zip(SUMMARY, summary(moves(16, 4)), strict=True))
    assert s["mean move accuracy"] == pytest.approx((16 + 4 * 0.64576) / 20, abs=1e-4)
    assert (s["rate of losses >= 10"], s["rate of losses <= 0"]) == (0.2, 0.8)
    assert s["90th percentile sqrt(loss)"] == pytest.approx(10 ** 0.5)
    assert s["ln(moves)"] == pytest.approx(20 ** 0 * __import__("math").log(20))
    assert (s["opening share"], s["middle share"], s["end share"]) == (1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="no move"):
        summary(GameFeatures("white", ()))


def test_one_game_by_hand() -> None:
    model = level_model_from_json(TOY)
    assert model.name == "level-toy-3"
    # score 1000 + 1000 × 0.929152 = 1929.2; the range ± 1.2816 × 100
    level = game_level(model, moves(16, 4))
    assert level[:3] == pytest.approx((1929, 1929 - 128, 1929 + 128), abs=1)
    assert (level.games, level.moves) == (1, 20)
    assert game_level(model, moves(20, 0))[:3] == pytest.approx((2000, 1872, 2128), abs=1)


def test_a_set_narrows_but_not_as_one_over_n() -> None:
    model = level_model_from_json(TOY)
    game = moves(16, 4)
    for n in (4, 20):
        level = set_level(model, [game] * n)
        half = Z90 * 100 * (0.25 + 0.75 / n) ** 0.5  # the shared quarter does not average out
        assert level[:3] == pytest.approx((1929, 1929 - half, 1929 + half), abs=1.5)
        assert (level.games, level.moves) == (n, 20 * n)
    # a mixed set: the mean of the games' scores
    mixed = set_level(model, [moves(20, 0), moves(12, 8)])
    assert mixed.estimate == pytest.approx(1000 + 1000 * (1 + (12 + 8 * 0.64576) / 20) / 2,
                                           abs=1)
    with pytest.raises(ValueError, match="no games"):
        set_level(model, [])


# The toy's set fit: a set scores 2000 − 1000 × its rate of moves losing >= 10 Win% (the mean of
# its games' rates), a player rated r scores r with a single game's spread of 200, half of it
# shared by a player's games; from 3 games on.
TOY_SET: dict[str, Any] = {
    "min_games": 3, "features": "the mean of the games' summaries",
    "regression": {"centre": [0.0] * len(SUMMARY), "scale": [1.0] * len(SUMMARY),
                   "coef": [-1000.0 if n == "rate of losses >= 10" else 0.0 for n in SUMMARY],
                   "intercept": 2000.0},
    "likelihood": {"mean": [400.0 + 10 * i for i in range(POINTS)], "sd": [200.0] * POINTS},
    "within_player_correlation": 0.5, "prior": [1.0] * POINTS, "prior_weight": 0.0,
}


def test_a_set_of_enough_games_reads_the_set_fit() -> None:
    """From the set fit's ``min_games`` on, a set is read by its own score (the mean of its
    games' summaries through the set regression) and spread; fewer games, the mean of the
    single-game scores as before."""
    model = level_model_from_json({**TOY, "set": TOY_SET})
    game = moves(16, 4)  # rate of losses >= 10: 0.2; single-game score 1929.2
    for n in (3, 4, 20):
        level = set_level(model, [game] * n)
        half = Z90 * 200 * (0.5 + 0.5 / n) ** 0.5
        assert level[:3] == pytest.approx((1800, 1800 - half, 1800 + half), abs=1.5)
        assert (level.games, level.moves, level.model) == (n, 20 * n, "level-toy-3")
    two = set_level(model, [game] * 2)  # below min_games: model 2's combination
    half = Z90 * 100 * (0.25 + 0.75 / 2) ** 0.5
    assert two[:3] == pytest.approx((1929, 1929 - half, 1929 + half), abs=1.5)
    assert game_level(model, game)[:3] == game_level(level_model_from_json(TOY), game)[:3]
    # the mean of the games' summaries: rates 0 and 0.4 read as 0.2
    mixed = set_level(model, [moves(20, 0), moves(12, 8), moves(16, 4)])
    assert mixed.estimate == pytest.approx(1800, abs=1)
    # the set prior at its weight pulls the estimate, not the range
    pulled = copy.deepcopy(TOY_SET)
    pulled["prior"] = [2.718281828 ** (-0.5 * ((400 + 10 * i - 1500) / 100) ** 2) + 1e-12
                       for i in range(POINTS)]
    pulled["prior_weight"] = 1.0
    flat, shrunk = (set_level(level_model_from_json({**TOY, "set": s}), [game] * 4)
                    for s in (TOY_SET, pulled))
    assert (shrunk.low, shrunk.high) == (flat.low, flat.high)
    assert flat.low <= shrunk.estimate < flat.estimate - 100


def test_a_set_fit_with_knots_reads_each_game_through_its_hinges() -> None:
    """Model 4: the set fit reads each game's summary and, per knot row, max(0, summary −
    knot); the set's score is the mean of its games' (not the hinge of their mean summary), so
    each game's set score can be kept and a set read from the kept scores alike."""
    hinged = copy.deepcopy(TOY_SET)
    width = len(SUMMARY)
    at = SUMMARY.index("rate of losses >= 10")
    hinged["knots"] = [[0.1 if n == "rate of losses >= 10" else 0.0 for n in SUMMARY]]
    hinged["regression"] = {"centre": [0.0] * 2 * width, "scale": [1.0] * 2 * width,
                            "coef": [-1000.0 if i == width + at else 0.0
                                     for i in range(2 * width)],
                            "intercept": 2000.0}
    model = level_model_from_json({**TOY, "set": hinged})
    games = [moves(20, 0), moves(12, 8), moves(16, 4)]  # rates 0, 0.4, 0.2 → hinges 0, 0.3, 0.1
    assert [set_score(model, g) for g in games] == pytest.approx([2000, 1700, 1900])
    assert set_basis(model, np.asarray([summary(games[1])]))[0, width + at] == pytest.approx(0.3)
    level = set_level(model, games)
    assert level.estimate == pytest.approx((2000 + 1700 + 1900) / 3, abs=1)  # not 1900
    kept = level_of_scores(model, [score(model, g) for g in games], level.moves, False,
                           [set_score(model, g) for g in games])
    assert kept == level
    # both at once (the report's way: the summary computed once) are the two one by one
    assert [scores(model, g) for g in games] == [
        (score(model, g), set_score(model, g)) for g in games]
    assert scores(level_model_from_json(TOY), games[1]) == (
        score(level_model_from_json(TOY), games[1]), None)  # no set fit: no set score
    # without knots, the same weight on the raw rate: the model 3 reading, 2000 − 1000 × 0.2
    assert set_level(level_model_from_json({**TOY, "set": TOY_SET}), games).estimate == (
        pytest.approx(1800, abs=1))
    broken = copy.deepcopy(hinged)
    broken["knots"] = [[0.1] * (width - 1)]
    with pytest.raises(ValueError, match="sizes"):
        level_model_from_json({**TOY, "set": broken})
    broken["knots"] = [[0.1] * width, [0.2] * width]  # two knot rows, weights for one
    with pytest.raises(ValueError, match="sizes"):
        level_model_from_json({**TOY, "set": broken})


def test_a_prior_pulls_the_estimate_not_the_range() -> None:
    weighted = copy.deepcopy(TOY)
    # a prior centred on 1500 (sd 100), at full weight for the estimate
    weighted["prior"] = [2.718281828 ** (-0.5 * ((400 + 10 * i - 1500) / 100) ** 2) + 1e-12
                         for i in range(POINTS)]
    weighted["prior_weight"]["game_estimate"] = 1.0
    flat, pulled = (game_level(level_model_from_json(m), moves(16, 4)) for m in (TOY, weighted))
    assert (pulled.low, pulled.high) == (flat.low, flat.high)
    # the normal-normal posterior: halfway between 1929 and 1500, kept inside the range
    assert pulled.estimate == flat.low == pytest.approx(1801, abs=1)


def test_notes() -> None:
    narrow = copy.deepcopy(TOY)
    narrow["fitted_range"] = [1200, 1800]
    narrow["borrows"] = "blitz scale fitted on 600 player-games"
    narrow["weak"] = [{"kind": "games", "low": 1900, "high": 2099, "why": "the range held 60 %"}]
    model = level_model_from_json(narrow, "blitz")
    assert game_level(model, moves(16, 4)).note == (
        "rapid model applied to blitz; blitz scale fitted on 600 player-games; outside the range "
        "the model was fitted on (1200–1800); the model is weak here: the range held 60 %")
    assert set_level(model, [moves(16, 4)] * 2).note == (
        "rapid model applied to blitz; blitz scale fitted on 600 player-games; outside the range "
        "the model was fitted on (1200–1800)")
    assert game_level(level_model_from_json(TOY), moves(3, 0)).note == "only 3 moves with evals"
    assert game_level(level_model_from_json(TOY), moves(16, 4)).note is None


def test_malformed_model() -> None:
    broken = copy.deepcopy(TOY)
    broken["prior"] = [1.0] * 100
    with pytest.raises(ValueError, match="sizes"):
        level_model_from_json(broken)
    broken = copy.deepcopy(TOY)
    del broken["within_player_correlation"]
    with pytest.raises(ValueError, match="missing or wrong field"):
        level_model_from_json(broken)
    broken = copy.deepcopy(TOY)
    broken["features"] = list(SUMMARY)[:-1]
    with pytest.raises(ValueError, match="sizes"):
        level_model_from_json(broken)
    broken = copy.deepcopy({**TOY, "set": TOY_SET})
    broken["set"]["likelihood"]["sd"] = [200.0] * 10
    with pytest.raises(ValueError, match="sizes"):
        level_model_from_json(broken)
    broken["set"] = {**TOY_SET, "min_games": 1}
    with pytest.raises(ValueError, match="sizes"):
        level_model_from_json(broken)
    broken["set"] = {k: v for k, v in TOY_SET.items() if k != "within_player_correlation"}
    with pytest.raises(ValueError, match="missing or wrong field"):
        level_model_from_json(broken)
    broken = copy.deepcopy(TOY)
    broken["features"] = ["clock used", *SUMMARY[1:]]  # a model of another version
    with pytest.raises(ValueError, match="other features than this version computes"):
        level_model_from_json(broken)


def test_fide_levels() -> None:
    model = level_model_from_json(TOY)
    level = game_level(model, moves(16, 4))
    (lebowitz,) = fide_levels(level, "rapid")
    assert lebowitz == ("lebowitz", fide_rating(MODELS["lebowitz"], "rapid", level.estimate),
                        fide_rating(MODELS["lebowitz"], "rapid", level.low),
                        fide_rating(MODELS["lebowitz"], "rapid", level.high))
    assert [f.scale for f in fide_levels(level, "blitz")] == ["lebowitz", "mathtuition"]


def test_every_speed_has_its_own_model() -> None:
    for speed in ("bullet", "blitz", "rapid", "classical"):
        model = load_level_model(speed)
        assert (model.name, model.perf, model.fitted_perf) == (f"level-{speed}-5", speed, speed)
    ultra = load_level_model("ultraBullet")
    assert (ultra.name, ultra.fitted_perf) == ("level-bullet-5", "bullet")
    with pytest.raises(ValueError, match="no level model for 'chess960'"):
        load_level_model("chess960")
    game = first_game()  # 0068O1lq: White (1549) ACPL 104, Black (1550) ACPL 64
    evals = [from_lichess_entry(e) for e in game["analysis"]]
    rapid = load_level_model("rapid")
    white, black = (game_level(rapid, level_features(evals, c)) for c in ("white", "black"))
    assert white.low <= white.estimate <= white.high and black.low <= black.estimate <= black.high
    assert white.estimate < black.estimate  # more Win% lost, a lower level
    assert white.low <= 1549 <= white.high and black.low <= 1550 <= black.high
    # blitz reads the same moves on the blitz scale, and says what it borrows from rapid
    blitz = game_level(load_level_model("blitz"), level_features(evals, "white"))
    assert blitz.estimate != white.estimate
    assert blitz.note is not None and "blitz scale fitted on" in blitz.note


def test_the_shipped_model_files_record_their_held_out_figures() -> None:
    """The figures fit_level_model.py measured on held-out players, written with each model:
    the targets of STRENGTH.md §3a (coverage 70–90 % in every judged band, per game and per
    set; set bias within ±75 in every band) and beside both baselines; issue 33's set MAE of
    at most 110. The one band whose coverage leaves 70–90 % (sets of 2000–2199: 31 of 34
    ranges hold, too wide rather than too narrow) is in the file's ``weak`` list, which the
    level's note reads to the player."""
    data = load_level_model("rapid").data
    held = data["held_out"]
    assert held["model"]["games"]["n"] > 15000 and held["model"]["sets"]["n"] > 500
    for unit in ("games", "sets"):
        mine = held["model"][unit]
        assert mine["mae"] < held["training_median"][unit]["mae"]
        assert mine["mae"] < held["acpl_line"][unit]["mae"]
        assert 0.75 <= mine["coverage_10_90"] <= 0.85
        assert mine["mae_ci"][0] < mine["mae"] < mine["mae_ci"][1]
        for band, f in held["model"][f"{unit}_by_rating"].items():
            if (unit, band) == ("sets", "2000-2199"):
                assert (f["n"], f["coverage_10_90"]) == (34, 0.912)
                low, high = (int(x) for x in band.split("-"))
                why = "the range held 91% of held-out sets rated 2000-2199"
                assert {"kind": "sets", "low": low, "high": high, "why": why} in data["weak"]
                continue
            assert 0.7 <= f["coverage_10_90"] <= 0.9, (unit, band, f)
    for band, f in held["model"]["sets_by_rating"].items():
        assert abs(f["bias"]) <= 75, (band, f)
    assert held["model"]["games"]["mae"] <= 0.9 * held["acpl_line"]["games"]["mae"]
    # the set fit (model 3) beats model 2's combination of the same games, measured in the run
    assert held["model"]["sets"]["mae"] < held["mean_of_game_scores"]["sets"]["mae"] - 5
    assert data["set"]["min_games"] == 5 and data["set"]["training"]["prior_weight_frontier"]
    # model 4: each game through hinges at the training games' 10th, 50th, 90th percentiles;
    # on the same held-out sets model 3 (the summary alone) read MAE 125.2, model 4 121.5
    assert data["set"]["knot_percentiles"] == [10, 50, 90]
    width = len(data["features"])
    assert [len(row) for row in data["set"]["knots"]] == [width] * 3
    # model 5: + the board (7), his first two moves (40 identities), the clock setting (2), and
    # the set estimate's prior shape chosen on validation players
    assert width == len(SUMMARY) + 7 + 40 + 2
    assert held["model"]["sets"]["mae"] == 106.1 <= 110
    assert held["model"]["sets"]["mae_ci"] == [98.3, 115.0]
    assert held["model"]["games"]["mae"] == 214.1
    tilt = data["set"]["prior_tilt"]
    assert len(tilt["a"]) == len(tilt["knots"]) == 6 and tilt["validation"]["worst_band_bias"] <= 60
    assert data["training"]["sha256"] == (
        "9fda82d9e6752c9bc24b2208a0d0e69eb7d28abb202d732cf8f33dbaec501d72")
    for speed in ("blitz", "bullet", "classical"):
        other = load_level_model(speed).data["held_out"]
        assert other["model"]["games"]["n"] >= 50
        assert other["model"]["games"]["mae"] < other["training_median"]["games"]["mae"]


def test_local_engine_evals_are_noted() -> None:
    local = GameFeatures("white", moves(16, 4).moves, acpl=0, local=True)
    assert game_level(level_model_from_json(TOY), local).note == (
        "local-engine evals, read through their engine's calibration where one exists (the "
        "model was fitted on Lichess's server analysis)")
    measured = copy.deepcopy(TOY)
    measured["local_engine"] = {"engine": "Stockfish 15.1", "nodes": 100000,
                                "player_games": 40, "shift_median": 146.0}
    model = level_model_from_json(measured)
    assert set_level(model, [moves(16, 4), local]).note == (
        "local-engine evals, read through their engine's calibration where one exists (the "
        "model was fitted on Lichess's server analysis; on 40 held-out player-games, Stockfish "
        "15.1 at 100,000 nodes read +146 points against Lichess's evals of the same games "
        "(median))")
    assert set_level(model, [moves(16, 4)]).note is None
    assert level_features([PlyEval(20, None)], "white", local=True).local


# --- the guard (issue 33 item 8) ---------------------------------------------------------------

def test_the_level_ignores_rating_result_status_and_clocks() -> None:
    """Perturb everything that is not the play or the declared clock setting: the level of
    every shipped model is unchanged. A rating is not even an input (no parameter takes one).
    The clock setting is declared (STRENGTH.md §3 lists it; model 5 reads it): it is among
    every model's features, and another setting moves the level."""
    names = set(inspect.signature(level_features).parameters)
    assert not {n for n in names if "rating" in n or "elo" in n}
    game = first_game()
    evals = [from_lichess_entry(e) for e in game["analysis"]]
    sans = game["moves"].split()
    setting = (game["clock"]["initial"], game["clock"]["increment"])
    plies = len(evals)
    variants = [
        {},
        {"result": 1.0, "status": "mate"}, {"result": 0.0, "status": "resign"},
        {"result": 0.5, "status": "draw"}, {"result": 0.0, "status": "outoftime"},
        {"clocks": [60000 - 100 * i for i in range(plies)]},
        {"clocks": [300 + i for i in range(plies)], "result": 1.0, "status": "timeout"},
    ]
    for speed in SPEEDS:
        model = load_level_model(speed)
        assert set(CLOCK_SUMMARY) <= set(model.data["features"]), speed
        for color in ("white", "black"):
            levels = {game_level(model, level_features(evals, color, clock=setting, sans=sans,
                                                       **v))  # type: ignore[arg-type]
                      for v in variants}
            sets = {set_level(model, [level_features(evals, color, clock=setting, sans=sans,
                                                     **v)] * n)  # type: ignore[arg-type]
                    for v in variants for n in (3, 6)}  # model 2's combination, the set fit
            assert len(levels) == 1 and len(sets) == 2, (speed, color)
            other = game_level(model, level_features(evals, color, clock=(60, 0), sans=sans))
            assert other != next(iter(levels)), (speed, color)


def test_a_range_cut_by_the_end_of_the_grid_says_so() -> None:
    """The model's ratings run 400–3000: a strong set's range ends at the grid's end and is
    narrower than the moves say (3 games scoring 2600 each read 2970 (2895–2999), 104 points
    wide). Such a level says so, and the Overview draws no month whose range is cut."""
    from tracker.analysis.level import GRID_EDGE, grid_end, level_of_scores

    model = load_level_model("rapid")
    strong = level_of_scores(model, [2600.0] * 3, 120, False)
    assert (strong.estimate, strong.low, strong.high) == (2970, 2895, 2999)
    assert grid_end(model, strong.low, strong.high) == 3000
    assert strong.note is not None and strong.note.endswith(
        "the range is cut at 3000, where the model's ratings end: the moves alone say less "
        "than its width")
    weak = level_of_scores(model, [600.0] * 3, 120, False)
    assert (weak.low, weak.high) == (401, 503) and grid_end(model, weak.low, weak.high) == 400
    assert weak.note is not None and "the range is cut at 400" in weak.note
    typical = level_of_scores(model, [1500.0] * 3, 120, False)
    assert (typical.low, typical.high) == (1135, 1782)
    assert grid_end(model, typical.low, typical.high) is None
    assert "cut at" not in (typical.note or "")
    assert grid_end(model, 1000, 3000 - GRID_EDGE - 1) is None
    assert grid_end(model, 1000, 3000 - GRID_EDGE) == 3000
