"""The replay on the FIDE scale (issue 12): real histories through the API and the CLI.

The lebowitz replay of indexinator's blitz is checked against a hand computation written from
the specs (SCALE.md, FIDE.md) in this file, sharing no code with tracker: its own reading of
the export, its own tables, its own arithmetic.
"""

from __future__ import annotations

import fcntl
import json
import os
import struct
import subprocess
import sys
import termios
from collections import Counter, defaultdict
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from tests.conftest import CMRADE, INDEXINATOR
from tracker import api
from tracker.core.errors import ArgumentError
from tracker.importing import import_file
from tracker.store.db import Store

# -- the hand computation (from the specs only) -------------------------------------------

# FIDE table 8.1.2: upper bounds of |D|; row i gives the higher side .50 + .01 i.
BOUNDS = [3, 10, 17, 25, 32, 39, 46, 53, 61, 68, 76, 83, 91, 98, 106, 113, 121, 129, 137, 145,
          153, 162, 170, 179, 188, 197, 206, 215, 225, 235, 245, 256, 267, 278, 290, 302, 315,
          328, 344, 357, 374, 391, 411, 432, 456, 484, 517, 559, 619, 735]
# FIDE table 8.1.1: dp for p = .50, .51, ..., 1.00.
DP = [0, 7, 14, 21, 29, 36, 43, 50, 57, 65, 72, 80, 87, 95, 102, 110, 117, 125, 133, 141, 149,
      158, 166, 175, 184, 193, 202, 211, 220, 230, 240, 251, 262, 273, 284, 296, 309, 322, 336,
      351, 366, 383, 401, 422, 444, 470, 501, 538, 589, 677, 800]


def half_away(x: Fraction) -> int:
    sign = -1 if x < 0 else 1
    whole, rest = divmod(abs(x), 1)
    return sign * (int(whole) + (1 if rest >= Fraction(1, 2) else 0))


def half_up(x: Fraction) -> int:
    whole, rest = divmod(x, 1)
    return int(whole) + (1 if rest >= Fraction(1, 2) else 0)


def pd(own: int, opp: int) -> Fraction:
    d = max(-400, min(400, own - opp))  # rapid & blitz chapter: the cap binds everyone
    for i, bound in enumerate(BOUNDS):
        if abs(d) <= bound:
            high = Fraction(50 + i, 100)
            break
    else:
        high = Fraction(1)
    return high if d >= 0 else 1 - high


def dp(p: Fraction) -> int:
    hundredths = half_up(p * 100)
    return DP[hundredths - 50] if hundredths >= 50 else -DP[50 - hundredths]


def lebowitz_blitz(x: int) -> int | None:
    out = half_away(Fraction("78.6") + Fraction("0.804") * x)
    if out < 1000:
        return None  # below FIDE's old floor: unrated
    if out < 2000:
        return half_away(out + Fraction(2, 5) * (2000 - out))
    return out


def month(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m")


def hand_games(path: Path, user: str, perf: str, to_fide):  # type: ignore[no-untyped-def]
    """Period → [(opponent on the FIDE scale, score)], and period → games the model left out."""
    games: dict[str, list[tuple[int, Fraction]]] = defaultdict(list)
    below: Counter[str] = Counter()
    periods: set[str] = set()
    for line in path.read_text().splitlines():
        g = json.loads(line)
        sides = g["players"]
        color = next((c for c in ("white", "black")
                      if sides[c].get("user", {}).get("id") == user), None)
        if g["perf"] != perf or color is None:
            continue
        period = month(g.get("lastMoveAt", g["createdAt"]))
        periods.add(period)
        me, opp = sides[color], sides["black" if color == "white" else "white"]
        if (g["variant"] != "standard" or not g["rated"] or "user" not in opp
                or "rating" not in opp or opp.get("provisional")
                or ("ratingDiff" not in me and "ratingDiff" not in opp)
                or g["status"] in ("aborted", "noStart") or len(g["moves"].split()) < 2):
            continue
        score = Fraction(1, 2) if "winner" not in g else Fraction(int(g["winner"] == color))
        fide = to_fide(opp["rating"])
        if fide is None:
            below[period] += 1
        else:
            games[period].append((fide, score))
    return {p: games.get(p, []) for p in sorted(periods)}, below


def hand_replay(by_period: dict[str, list[tuple[int, Fraction]]]) -> list[dict]:
    rows = []
    rating: int | None = None
    rated_games, pool, pool_started, ever_2400 = 0, [], False, False
    for period, games in by_period.items():
        n = len(games)
        score = sum((s for _, s in games), Fraction(0))
        perf_rating = None
        if n:
            ra = Fraction(sum(o for o, _ in games), n)
            perf_rating = half_up(ra + dp(score / n))
        row = {"period": period, "games": n, "score": score, "performance": perf_rating,
               "rating_before": rating}
        if rating is not None:
            k = 10 if ever_2400 else 40 if rated_games < 30 else 20
            if n:
                k = min(k, 700 // n)
            change = k * sum((s - pd(rating, o) for o, s in games), Fraction(0))
            new = rating + half_away(change)
            rated_games += n
            row.update(k=k, change=change)
            if new < 1400:
                rating, pool, pool_started = None, [], False
            else:
                rating = new
                ever_2400 = ever_2400 or new >= 2400
        elif n:
            if not pool_started and score == 0:
                pool_started = True
            else:
                pool_started = True
                pool.append((period, games))
                ym = int(period[:4]) * 12 + int(period[5:])
                pool = [(p, gs) for p, gs in pool if ym - (int(p[:4]) * 12 + int(p[5:])) < 26]
                every = [g for _, gs in pool for g in gs]
                if len(every) >= 5:
                    m = len(every) + 2
                    ra = Fraction(sum(o for o, _ in every) + 3600, m)
                    p = (sum((s for _, s in every), Fraction(0)) + 1) / m
                    ru = min(half_up(ra + dp(p)), 2200)
                    if ru >= 1400:
                        rating, rated_games, pool = ru, len(every), []
                        ever_2400 = ru >= 2400
        row["rating_after"] = rating
        rows.append(row)
    return rows


# -- the tests ------------------------------------------------------------------------------

def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands", *args],
                          capture_output=True, text=True)


def test_indexinator_blitz_on_lebowitz_equals_the_hand_computation(indexinator_db: Path
                                                                    ) -> None:
    by_period, below = hand_games(INDEXINATOR, "indexinator", "blitz", lebowitz_blitz)
    want = hand_replay(by_period)
    report = api.replay("indexinator", "blitz", db=indexinator_db, scale="lebowitz")
    assert report.scale_label == "FIDE scale (lebowitz)"
    assert report.settings.chapter == "rapid-blitz"
    assert len(report.periods) == len(want) == 31
    first = next(r for r in want if r["rating_after"] is not None)
    assert (first["period"], first["rating_after"]) == ("2023-04", 1595)
    assert report.periods[0].result.rating_after == 1595
    for row, hand in zip(report.periods, want, strict=True):
        r = row.result
        got = {"period": r.period, "games": r.games, "score": r.score,
               "performance": r.performance, "rating_before": r.rating_before,
               "rating_after": r.rating_after}
        if r.k is not None:
            got.update(k=r.k, change=r.change)
        assert got == hand, r.period
        assert row.excluded.get("opponent below the model's range", 0) == below[r.period]
    assert report.current_rating == 1453


#: indexinator's blitz on the Lichess scale, each period's rating_after: the numbers the
#: replay gave before the default scale became all models (and must keep giving).
LICHESS_SCALE_AFTER = [1639, 1515, 1564, 1485, 1550, 1588, 1547, 1559, 1556, 1606, 1558, 1535,
                       1608, 1559, 1522, 1513, 1436, 1499, 1528, 1494, 1555, 1559, 1613, 1479,
                       1428, 1570, 1428, 1519, 1499, 1420, None]


def test_lichess_scale_is_todays_replay_exactly(indexinator_db: Path) -> None:
    explicit = run_cli("--db", str(indexinator_db), "replay", "indexinator", "--perf",
                       "blitz", "--scale", "lichess", "--json")
    assert explicit.returncode == 0, explicit.stderr
    data = json.loads(explicit.stdout)
    # the original contract: no scale keys on the Lichess scale
    assert set(data) == {"player", "perf", "rules", "expected", "periods"}
    assert [p["rating_after"] for p in data["periods"]] == LICHESS_SCALE_AFTER
    report = api.replay("indexinator", "blitz", db=indexinator_db, scale="lichess")
    assert report.scale_label == "Lichess scale"
    assert "fell to 1361" in report.unrated_reason()
    text = run_cli("--db", str(indexinator_db), "replay", "indexinator", "--perf", "blitz",
                   "--scale", "lichess")
    assert "Lichess scale" in text.stdout
    assert "initial rating 1639 published" in text.stdout


def test_the_default_scale_is_all_models_and_the_answer_is_their_median(indexinator_db: Path
                                                                         ) -> None:
    proc = run_cli("--db", str(indexinator_db), "replay", "indexinator", "--perf", "blitz",
                   "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout, parse_float=Decimal)
    assert data["scale"] == "all"
    assert data["answer"] == "median" and ".5" in data["answer_note"]
    last = data["periods"][-1]
    assert last["band"]["median"] == 1499 and last["rating_after"] == 1499
    assert last["band"]["models"] == {"lebowitz": 1453, "mathtuition": 1545}
    # 2023-05: lebowitz 1559, mathtuition 1652: the median ends in .5 and the JSON keeps it
    may = data["periods"][1]
    assert (may["period"], may["rating_after"]) == ("2023-05", Decimal("1605.5"))
    assert may["rating_before"] == data["periods"][0]["rating_after"] == 1640
    assert may["change"] == Decimal("-34.50")  # 1605.5 − 1640
    # every period: after, before and change are the median's; K the models' where they agree
    for p in data["periods"]:
        assert p["rating_after"] == p["band"]["median"]
        b = p["band"]
        assert p["k"] == (b["k_min"] if b["k_min"] == b["k_max"] else None)
    text = run_cli("--db", str(indexinator_db), "replay", "indexinator", "--perf", "blitz")
    assert "unrated" not in text.stdout.split("Now:")[1].split("\n")[0]
    assert "Now: FIDE-style 1499 on the FIDE scale (all models: lebowitz, mathtuition): the " \
           "models' median, band 1453–1545" in text.stdout
    # the static conversion comes after the answer, labelled, with why the replay differs
    now, conversion = text.stdout.index("Now:"), text.stdout.index("conversion site")
    assert now < conversion and "The replay differs" in text.stdout


def test_one_covering_model_is_the_answer_itself_without_a_band(indexinator_db: Path) -> None:
    proc = run_cli("--db", str(indexinator_db), "replay", "indexinator", "--perf", "bullet")
    assert proc.returncode == 0, proc.stderr
    assert "band" not in proc.stdout and "disagree" not in proc.stdout
    assert "FIDE scale (lebowitz, the one model covering bullet)" in proc.stdout
    data = json.loads(run_cli("--db", str(indexinator_db), "replay", "indexinator", "--perf",
                              "bullet", "--json").stdout)
    lebowitz = api.replay("indexinator", "bullet", db=indexinator_db, scale="lebowitz")
    assert data["scale"] == "all" and "answer" not in data
    assert [p["rating_after"] for p in data["periods"]] == [
        r.result.rating_after for r in lebowitz.periods]
    assert data["periods"][-1]["rating_after"] == 1671
    assert all("band" not in p for p in data["periods"])


def test_scale_all_gives_a_band_over_exactly_the_models_covering_blitz(indexinator_db: Path
                                                                        ) -> None:
    proc = run_cli("--db", str(indexinator_db), "replay", "indexinator", "--perf", "blitz",
                   "--scale", "all", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout, parse_float=Decimal)
    assert data["scale"] == "all"
    assert data["models"] == ["lebowitz", "mathtuition"]
    assert data["model"] == "lebowitz"
    assert set(data["conversions"]) == {"lebowitz", "mathtuition"}
    # Lichess 1408 now: lebowitz 78.6 + 0.804 × 1408 = 1210.63 → 1211 → 1527; mathtuition
    # 179.9 + 0.8399 × 1408 = 1362.48 → 1362 → 1617.
    assert data["conversions"]["lebowitz"] == {"lichess": 1408, "model_output": 1211,
                                               "fide": 1527}
    assert data["conversions"]["mathtuition"]["fide"] == 1617
    lebowitz = api.replay("indexinator", "blitz", db=indexinator_db, scale="lebowitz")
    mathtuition = api.replay("indexinator", "blitz", db=indexinator_db, scale="mathtuition")
    for p, a, b in zip(data["periods"], lebowitz.periods, mathtuition.periods, strict=True):
        band = p["band"]
        assert set(band["models"]) == {"lebowitz", "mathtuition"}
        assert band["models"] == {"lebowitz": a.result.rating_after,
                                  "mathtuition": b.result.rating_after}
        rated = [v for v in band["models"].values() if v is not None]
        if rated:
            assert band["min"] <= band["median"] <= band["max"]
            assert (band["min"], band["max"]) == (min(rated), max(rated))
        # the periods' own figures are the models' median
        assert p["rating_after"] == band["median"]


def test_a_model_that_does_not_cover_the_perf_is_a_one_line_error(indexinator_db: Path
                                                                   ) -> None:
    proc = run_cli("--db", str(indexinator_db), "replay", "indexinator", "--perf", "blitz",
                   "--scale", "chessdojo-2024")
    assert proc.returncode == 2
    assert proc.stderr == ("error: chessdojo-2024 does not cover blitz; models that do: "
                           "lebowitz, mathtuition\n")
    with pytest.raises(api.ScaleError) as refused:
        api.replay("indexinator", "bullet", db=indexinator_db, scale="mathtuition")
    assert str(refused.value) == "mathtuition does not cover bullet; models that do: lebowitz"
    proc = run_cli("--db", str(indexinator_db), "replay", "indexinator", "--perf", "blitz",
                   "--scale", "elo")
    assert proc.returncode != 0 and proc.stderr.startswith("error: unknown scale 'elo'")
    assert proc.stderr.count("\n") == 1


def test_cmrade_classical_on_chessdojo_counts_out_opponents_below_1665(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "c.db"))
    import_file(CMRADE, store=store, user="cmrade")
    lichess = api.replay("cmrade", "classical", db=store)
    dojo = api.replay("cmrade", "classical", db=store, scale="chessdojo-2024")
    assert dojo.settings.chapter == "standard"
    reason = "opponent below the model's range"
    below = [g for g in lichess.games if g.counts and g.opponent_rating < 1665]
    assert below, "the history has opponents below 1665"
    assert sum(r.excluded.get(reason, 0) for r in dojo.periods) == len(below)
    assert dojo.counted == lichess.counted - len(below)
    assert sorted(g.game.id for g in dojo.games if g.reason == reason) == sorted(
        g.game.id for g in below)
    data = dojo.to_json()
    assert data["scale"] == "chessdojo-2024"
    assert sum(p["excluded"].get(reason, 0) for p in data["periods"]) == len(below)


def test_start_rating_on_the_lichess_scale_is_mapped_through_the_model(indexinator_db: Path
                                                                        ) -> None:
    fide = api.replay("indexinator", "blitz", db=indexinator_db, scale="lebowitz",
                      start_rating=1500)
    lichess = api.replay("indexinator", "blitz", db=indexinator_db, scale="lebowitz",
                         start_rating=1500, start_scale="lichess")
    assert fide.periods[0].result.rating_before == 1500
    assert lichess.periods[0].result.rating_before == 1571  # lebowitz blitz 1500 → 1571
    assert lichess.start_ratings == {"lebowitz": 1571}


def test_honest_measure_against_a_real_fide_list(indexinator_db: Path) -> None:
    real = [("2023-01", 1600), ("2024-01", 1650), ("2025-06", 1500)]
    report = api.replay("indexinator", "blitz", db=indexinator_db, scale="lebowitz", real=real)
    rows = {r.period: r for r in report.periods}
    # 2023-04 publishes 1595 for May; the list in force in May 2023 is 1600's.
    assert (rows["2023-04"].fide_real, rows["2023-04"].gap) == (1600, 1595 - 1600)
    assert rows["2023-12"].fide_real == 1650  # the list of 2024-01 follows December
    assert rows["2025-05"].fide_real == 1500 and rows["2025-10"].fide_real == 1500
    gaps = [abs(r.result.rating_after - r.fide_real) for r in report.periods]
    assert report.mean_abs_gap == Fraction(sum(gaps), len(gaps))
    data = report.to_json()
    assert data["periods"][0]["fide_real"] == 1600 and data["periods"][0]["gap"] == -5
    assert data["mean_abs_gap"] == Decimal(sum(gaps) / Decimal(len(gaps))).quantize(
        Decimal("0.01"))


def test_a_linked_player_is_compared_with_their_stored_fide_list(tmp_path: Path) -> None:
    from tracker.sources.fide import FidePlayerData, FideProfile, ListEntry
    from tracker.store.fide import save_fide_player

    store = Store(str(tmp_path / "linked.db"))
    import_file(INDEXINATOR, store=store, user="indexinator")
    lists = {"standard": [ListEntry("2023-01", 1600), ListEntry("2025-06", 1500)],
             "rapid": [], "blitz": [ListEntry("2023-01", 1450)]}
    save_fide_player(store, FidePlayerData(FideProfile(1, "Index", standard=1500), lists, []),
                     player_id="indexinator")
    report = api.replay("indexinator", "blitz", db=store, scale="lebowitz")
    assert report.real_list == "standard"
    assert report.periods[0].fide_real == 1600 and report.periods[-1].fide_real == 1500
    data = report.to_json()
    assert data["fide_list"] == "standard" and data["periods"][0]["gap"] == 1595 - 1600
    blitz = api.replay("indexinator", "blitz", db=store, scale="lebowitz", fide_list="blitz")
    assert {r.fide_real for r in blitz.periods} == {1450}
    assert api.replay("indexinator", "blitz", db=store, fide_list="none").real == ()
    with pytest.raises(ArgumentError, match="unknown FIDE list 'elo'"):
        api.replay("indexinator", "blitz", db=store, fide_list="elo")


def test_scale_start_scale_and_chapter_are_per_player_settings(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    import_file(INDEXINATOR, store=Store(db), user="indexinator")
    saved = api.settings("indexinator", db=db, scale="lebowitz", start_scale="lichess",
                         chapter="standard")
    assert (saved.scale, saved.start_scale, saved.chapter) == ("lebowitz", "lichess", "standard")
    report = api.replay("indexinator", "blitz", db=db, start_rating=1500)
    assert report.scale == "lebowitz" and report.settings.chapter == "standard"
    assert report.periods[0].result.rating_before == 1571  # the Lichess 1500, mapped
    assert api.replay("indexinator", "blitz", db=db, scale="lichess").scale == "lichess"
    proc = run_cli("--db", db, "settings", "indexinator", "--chapter", "by-perf", "--json")
    data = json.loads(proc.stdout)
    assert (data["scale"], data["start_scale"], data["chapter"]) == (
        "lebowitz", "lichess", "by-perf")
    assert api.replay("indexinator", "blitz", db=db).settings.chapter == "rapid-blitz"
    with pytest.raises(api.SettingsError, match="unknown scale 'fide'"):
        api.settings("indexinator", db=db, scale="fide")


def test_periods_csv_carries_the_scale_the_band_and_the_real_rating(indexinator_db: Path
                                                                    ) -> None:
    import csv
    import io

    report = api.replay("indexinator", "blitz", db=indexinator_db, scale="all",
                        real=[("2023-01", 1600)])
    rows = list(csv.DictReader(io.StringIO(api.periods_csv(report))))
    assert list(rows[0]) == [*api.PERIOD_KEYS, *api.SCALE_CSV_KEYS]
    first = report.periods[0]
    assert rows[0]["scale"] == "FIDE scale (all models: lebowitz, mathtuition)"
    assert (rows[0]["band_min"], rows[0]["band_max"]) == (str(first.band.min),
                                                          str(first.band.max))
    assert (rows[0]["fide_real"], rows[0]["gap"]) == ("1600", str(first.gap))
    classic = api.replay("indexinator", "blitz", db=indexinator_db, scale="lichess")
    assert api.periods_csv(classic).splitlines()[0] == ",".join(api.PERIOD_KEYS)


def test_the_terminal_quotes_the_models_median_with_its_band(indexinator_db: Path) -> None:
    both = run_cli("--db", str(indexinator_db), "replay", "indexinator", "--perf", "blitz",
                   "--scale", "all")
    one = run_cli("--db", str(indexinator_db), "replay", "indexinator", "--perf", "blitz",
                  "--scale", "mathtuition")
    assert both.returncode == one.returncode == 0, (both.stderr, one.stderr)
    said = " ".join(both.stdout.split())
    assert ("Now: FIDE-style 1499 on the FIDE scale (all models: lebowitz, mathtuition): the "
            "models' median, band 1453–1545; Lichess 1408; 2861 games counted of 2891.") in said
    assert "the models' median (K: their range where they differ)" in " ".join(
        both.stdout.split())
    assert ("Now: FIDE-style 1545 on the FIDE scale (mathtuition); Lichess 1408;"
            in " ".join(one.stdout.split()))


def run_in_terminal(*args: str, columns: int) -> str:
    """``tracker ARGS`` with its output on a pseudo-terminal ``columns`` wide (what a person
    sees: piped output is laid out 200 wide on purpose)."""
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "tracker.cli.commands", *args], stdout=follower,
                            stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1",
                                                         "TERM": "dumb"})
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def test_an_80_column_terminal_gets_the_median_and_every_row_fits(indexinator_db: Path) -> None:
    text = run_in_terminal("--db", str(indexinator_db), "replay", "indexinator", "--perf",
                           "blitz", "--scale", "all", columns=80)
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("period")).split()
    assert header[-3:] == ["after", "perf.", "Lichess"] and "lowest" not in header
    rows = [line for line in lines if line[:4].isdigit() and line[4:5] == "-"]
    assert len(rows) == 31 and all(len(line) <= 80 and "…" not in line for line in rows)
    assert rows[-1].split()[-3] == "1499"  # 2025-10: after is the models' median
    assert "(notes and the models' lowest and highest per period" in " ".join(text.split())
