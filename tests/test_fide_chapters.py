"""FIDE's rapid & blitz chapter (FIDE.md §10; scalachess EloTest): calc --json, the API and
the replay engine."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction

import pytest

from tracker import api
from tracker.fide import CountedGame, ReplaySettings, chapter_for_perf, replay


def calc(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "calc", "--json", *args],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout, parse_float=Decimal)


# (rating, K, opponent:score, change, new rating, rated)
SECTION_10 = [
    (1800, 40, "2601:0", "0.00", 1800, False),  # rapid: not rated (scalachess)
    (2601, 10, "1800:1", "0.00", 2601, False),  # rapid: not rated
    (2600, 10, "1900:1", "0.80", 2601, True),  # D 700 capped to 400 → .92 → +0.80 → +1
    (2700, 10, "2200:1", "0.80", 2701, True),  # blitz: no 2650 exemption
    (1500, 40, "1900:1/2", "16.80", 1517, True),  # blitz: draw, K 40 → +17
]


@pytest.mark.parametrize(("rating", "k", "game", "change", "new", "rated"), SECTION_10)
def test_section_10_through_calc_json(rating: int, k: int, game: str, change: str, new: int,
                                      rated: bool) -> None:
    data = calc("--rating", str(rating), "--k", str(k), "--chapter", "rapid-blitz", game)
    assert data["change"] == Decimal(change)
    assert data["new_rating"] == new
    assert data["chapter"] == "rapid-blitz"
    assert data["games"][0]["rated"] is rated
    if not rated:
        assert data["games"][0]["expected"] is None


@pytest.mark.parametrize(("rating", "k", "game", "change", "new", "rated"), SECTION_10)
def test_section_10_through_the_api(rating: int, k: int, game: str, change: str, new: int,
                                    rated: bool) -> None:
    opponent, score = game.split(":")
    result = api.calc(rating, k, [(int(opponent), score)], chapter="rapid-blitz")
    assert (result.new_rating, result.games[0].rated) == (new, rated)
    assert api.calc_json(result)["change"] == Decimal(change)


def test_standard_chapter_keeps_the_2650_exemption_and_rates_every_game() -> None:
    assert calc("--rating", "2700", "--k", "10", "2200:1")["change"] == Decimal("0.40")
    standard = calc("--rating", "1800", "--k", "40", "2601:0")
    assert standard["change"] == Decimal("-3.20") and "chapter" not in standard
    assert "rated" not in standard["games"][0]


def test_unknown_chapter_is_a_one_line_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "calc", "--rating", "1500",
                           "--k", "20", "--chapter", "bullet", "1500:1"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == "error: unknown chapter 'bullet': use one of standard, rapid-blitz\n"


def test_a_not_rated_game_does_not_count_for_the_700_rule() -> None:
    # 18 rated games at K 40 → K 38; two more against a 2601 would make it 35 if they counted
    games = [(1500, "1")] * 18 + [(2601, "0")] * 2
    result = api.calc(1800, 40, games, chapter="rapid-blitz")
    assert result.k == 38
    assert [g.rated for g in result.games].count(False) == 2


def test_perfs_map_to_chapters_by_default() -> None:
    assert {p: chapter_for_perf(p) for p in ("ultraBullet", "bullet", "blitz", "rapid",
                                               "classical", "correspondence")} == {
        "ultraBullet": "rapid-blitz", "bullet": "rapid-blitz", "blitz": "rapid-blitz",
        "rapid": "rapid-blitz", "classical": "standard", "correspondence": "standard"}


def test_replay_leaves_out_600_point_games_from_december_2024_by_game_date() -> None:
    settings = ReplaySettings(start_rating=2700, chapter="rapid-blitz")
    games = [CountedGame("2024-11", 2000, 2), CountedGame("2024-12", 2000, 2),
             CountedGame("2024-12", 2300, 2)]
    nov, dec = replay(games, settings)
    # November: rated (the rule is not in force yet): D 700 capped to 400 → .92 → +0.80
    assert (nov.games, nov.not_rated, nov.change, nov.rating_after) == (
        1, 0, Fraction(4, 5), 2701)
    # December: the 2000 game is not rated; the 2300 one is (difference 401): +0.80
    assert (dec.games, dec.not_rated, dec.change, dec.rating_after) == (
        1, 1, Fraction(4, 5), 2702)
    assert "1 game not rated (600-point rule)" in dec.note
    standard = replay(games, ReplaySettings(start_rating=2700))
    assert [r.games for r in standard] == [1, 2]
    assert standard[0].change == Fraction(1, 10)  # D 700, exempt at 2700: .99 → K 10 × .01
