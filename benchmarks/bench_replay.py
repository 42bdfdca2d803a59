"""Benchmark of :func:`tracker.fide.replay.replay` on a real player's games, scaled up.

Run: ``python benchmarks/bench_replay.py [SIZE ...]``. The games are synthesised from the
blitz games of the Lichess account *indexinator* (a real export, see ``SAMPLE``): opponent
ratings and results, cycled to the wanted size, with 100-300 games a month like a busy online
player. Only ``replay`` is timed (median of 3 runs, :func:`time.perf_counter`).

Targets: 5 µs per game on one core, i.e. 100,000 games in 0.5 s, 1,000,000 in 5 s.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from tracker.fide import CountedGame, ReplaySettings, replay

#: The sample; ``TRACKER_BENCH_SAMPLE`` overrides it.
SAMPLE: Final = Path(
    os.environ.get(
        "TRACKER_BENCH_SAMPLE",
        Path(__file__).resolve().parent.parent
        / "tests/fixtures/lichess/indexinator-2023-04_2025-10.ndjson",
    )
)
PLAYER: Final = "indexinator"
#: Seconds allowed per game (5 s per million).
TARGET_SECONDS_PER_GAME: Final = 5e-6
RUNS: Final = 3
#: A month holds this many games (uniform, seeded): a busy online blitz player.
GAMES_PER_MONTH: Final = (100, 300)
_UNFINISHED: Final = frozenset({"created", "started", "aborted", "noStart", "unknownFinish"})


def load_sample(path: Path = SAMPLE) -> list[tuple[int, int]]:
    """(opponent rating, score in half points) of the player's rated blitz games in ``path``."""
    out: list[tuple[int, int]] = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            game = json.loads(line)
            if game.get("perf") != "blitz" or not game.get("rated"):
                continue
            if game.get("variant") != "standard" or game.get("status") in _UNFINISHED:
                continue
            players = game["players"]
            color = "white" if players["white"].get("user", {}).get("id") == PLAYER else "black"
            opponent = players["black" if color == "white" else "white"]
            if "rating" not in opponent or opponent.get("provisional"):
                continue
            winner = game.get("winner")
            score = 1 if winner is None else (2 if winner == color else 0)
            out.append((opponent["rating"], score))
    return out


def synthesise(sample: Sequence[tuple[int, int]], n: int, seed: int = 2025) -> list[CountedGame]:
    """``n`` CountedGames cycling through ``sample``, 100-300 per month from 2000-01 on."""
    rng = random.Random(seed)
    games: list[CountedGame] = []
    month = 0
    while len(games) < n:
        period = f"{2000 + month // 12:04d}-{month % 12 + 1:02d}"
        for _ in range(min(rng.randint(*GAMES_PER_MONTH), n - len(games))):
            opponent, score = sample[len(games) % len(sample)]
            games.append(CountedGame(period, opponent, score))
        month += 1
    return games


def run(
    sizes: Sequence[int] = (100_000, 1_000_000),
    settings: ReplaySettings | None = None,
    sample_path: Path = SAMPLE,
) -> list[dict[str, object]]:
    """Time ``replay`` for each size; one dict per size.

    Keys: ``games``, ``periods`` (rows returned), ``rated_periods``, ``seconds`` (median of 3),
    ``games_per_second``, ``target_seconds``, ``passed``.
    """
    settings = settings or ReplaySettings()
    sample = load_sample(sample_path)
    results: list[dict[str, object]] = []
    for n in sizes:
        games = synthesise(sample, n)
        timings = []
        rows = []
        for _ in range(RUNS):
            started = time.perf_counter()
            rows = replay(games, settings)
            timings.append(time.perf_counter() - started)
        seconds = statistics.median(timings)
        target = n * TARGET_SECONDS_PER_GAME
        results.append(
            {
                "games": n,
                "periods": len(rows),
                "rated_periods": sum(r.rating_before is not None for r in rows),
                "seconds": seconds,
                "games_per_second": n / seconds if seconds else float("inf"),
                "target_seconds": target,
                "passed": seconds <= target,
            }
        )
    return results


def format_table(results: Sequence[dict[str, object]]) -> str:
    """The results as a small fixed-width text table."""
    lines = [
        f"{'games':>10} {'periods':>8} {'rated':>6} {'seconds':>8} {'games/s':>12}"
        f" {'target':>7} {'':>4}"
    ]
    for r in results:
        lines.append(
            f"{r['games']:>10,} {r['periods']:>8,} {r['rated_periods']:>6,}"
            f" {r['seconds']:>8.3f} {r['games_per_second']:>12,.0f}"
            f" {r['target_seconds']:>6.1f}s {'PASS' if r['passed'] else 'MISS':>4}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] = ()) -> int:
    sizes = tuple(int(a.replace("_", "")) for a in argv) or (100_000, 1_000_000)
    print(f"replay benchmark: {SAMPLE.name}, table method, start unrated, median of {RUNS}")
    results = run(sizes)
    print(format_table(results))
    return 0 if all(r["passed"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
