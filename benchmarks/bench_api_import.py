"""Benchmark of ``tracker import USERNAME`` (:func:`tracker.api.import_user`) end to end.

Run: ``python benchmarks/bench_api_import.py [GAMES ...]`` (default 20,000). The games are the
real NDJSON export of *indexinator* (2,907 games, ``tests/fixtures/lichess/``), cycled to the
wanted size with new 8-character ids and, on each pass, dates moved one day further back; the
rest of each line is the real text, byte for byte. The local Lichess-compatible server
(``tests/lichess_server.py``) serves them with its throttle off, in a process of its own (so it
does not share the importer's interpreter lock, as the real Lichess would not), and the import
goes into a fresh SQLite file through the whole stack: the profile request, berserk's NDJSON
stream over real HTTP, record conversion, batched upserts, the import run and the cursor.
The median of 3 runs is reported.

Target: 10,000 games/s. Lichess itself streams 20-60 games/s, so the importer's own overhead
must stay a rounding error next to the download.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # ``python benchmarks/bench_api_import.py`` from anywhere

from tracker import api  # noqa: E402

SAMPLE: Final = ROOT / "tests" / "fixtures" / "lichess" / "indexinator-2023-04_2025-10.ndjson"
PLAYER: Final = "indexinator"
TARGET_GAMES_PER_S: Final = 10_000
RUNS: Final = 3
DAY_MS: Final = 86_400_000

_ALPHABET: Final = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ID: Final = re.compile(r'^\{"id":"[^"]{8}"')
_TIMES: Final = re.compile(r'"(createdAt|lastMoveAt)":(\d+)')


def _game_id(i: int) -> str:
    """8 base-62 characters, distinct for every ``i`` (an odd multiplier mod 62**8)."""
    n = (i * 0x9E3779B97F4A7C15 | 1) % 62**8
    out = []
    for _ in range(8):
        n, r = divmod(n, 62)
        out.append(_ALPHABET[r])
    return "".join(out)


def synthetic_lines(n: int, sample: Path = SAMPLE) -> Iterator[str]:
    """``n`` NDJSON lines: sample game ``i % len``, new id, dates ``i // len`` days earlier."""
    base = [line.rstrip("\n") for line in sample.open(encoding="utf-8") if line.strip()]
    for i in range(n):
        days, line = divmod(i, len(base))[0], base[i % len(base)]
        shift = days * DAY_MS
        line = _ID.sub(f'{{"id":"{_game_id(i)}"', line, count=1)
        yield _TIMES.sub(lambda m, s=shift: f'"{m.group(1)}":{int(m.group(2)) - s}', line)


class Server:
    """``python -m tests.lichess_server PLAYER=FILE`` in a child process (throttle off)."""

    def __init__(self, export: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.lichess_server", f"{PLAYER}={export}"],
            cwd=ROOT, stdout=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://127.0.0.1:"):
            self.proc.kill()
            raise RuntimeError(f"the local Lichess server did not start: {self.url!r}")

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def run(sizes: Sequence[int] = (20_000,)) -> list[dict[str, object]]:
    """Import each size ``RUNS`` times into a fresh SQLite file; one dict per size.

    Keys: ``benchmark``, ``games``, ``seconds`` (median), ``games_per_second``,
    ``target_games_per_second``, ``passed``.
    """
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="tracker-bench-api-") as tmp:
        for n in sizes:
            export = Path(tmp) / f"{PLAYER}-x{n}.ndjson"
            with export.open("w", encoding="utf-8") as f:
                for line in synthetic_lines(n):
                    f.write(line + "\n")
            timings = []
            with Server(export) as server:
                for r in range(RUNS):
                    db = Path(tmp) / f"run-{n}-{r}.db"
                    started = time.perf_counter()
                    summary = api.import_user(PLAYER, db=str(db), base_url=server.url)
                    timings.append(time.perf_counter() - started)
                    if (summary.status, summary.new) != ("complete", n):
                        raise RuntimeError(f"import went wrong: {summary.line()}")
            seconds = statistics.median(timings)
            rate = n / seconds if seconds else float("inf")
            results.append({
                "benchmark": "api import (local Lichess, SQLite)",
                "games": n,
                "seconds": seconds,
                "games_per_second": rate,
                "target_games_per_second": TARGET_GAMES_PER_S,
                "passed": rate >= TARGET_GAMES_PER_S,
            })
    return results


def format_table(results: Sequence[dict[str, object]]) -> str:
    lines = [f"{'games':>10} {'seconds':>8} {'games/s':>10} {'target':>8}"]
    for r in results:
        lines.append(
            f"{r['games']:>10,} {r['seconds']:>8.2f} {r['games_per_second']:>10,.0f}"
            f" {r['target_games_per_second']:>8,} {'PASS' if r['passed'] else 'MISS'}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] = ()) -> int:
    sizes = tuple(int(a.replace("_", "")) for a in argv) or (20_000,)
    print(f"API import benchmark: {SAMPLE.name} cycled, local Lichess without throttle, "
          f"SQLite, median of {RUNS} ({os.cpu_count()} CPUs)")
    results = run(sizes)
    print(format_table(results))
    return 0 if all(r["passed"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
