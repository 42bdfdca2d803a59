"""Experiment (issue 33 point 4): what shipping the opening-popularity table would cost.

python scripts/experiments/opening_table_size.py

The table of scripts/experiments/opening_exp.py (training players' own moves, first 30 plies),
pruned as it would ship: per position with ≥ 5 training moves, its total and the moves played
≥ 5 times, as JSON {zobrist hex: [total, {uci: count}]}; its size raw and gzipped; the time to
load it, and to compute the opening features of 2,000 games from their SAN moves (replay of the
first 30 plies, a zobrist hash per position, the look-ups), one process, warm.
"""

from __future__ import annotations

import gzip
import io
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import opening_exp as X
import zstandard


def main() -> None:
    pgs, meta, *_rest, openings = X.load_all()
    table = X.build_table(pgs, meta, openings, X.MAX_PLIES)
    shipped = {}
    for key, counts in table.items():
        total = sum(counts.values())
        if total >= X.PRUNE:
            shipped[f"{key:016x}"] = [total, {m: n for m, n in counts.items() if n >= X.PRUNE}]
    raw = json.dumps(shipped, separators=(",", ":")).encode()
    print(f"positions with >= {X.PRUNE} training moves: {len(shipped)}; move entries >= "
          f"{X.PRUNE}: {sum(len(v[1]) for v in shipped.values())}; JSON {len(raw) / 1e6:.3f} MB,"
          f" gzipped {len(gzip.compress(raw)) / 1e6:.3f} MB")
    t0 = time.perf_counter()
    loaded = json.loads(raw)
    lookup = {int(k, 16): (v[0], v[1]) for k, v in loaded.items()}
    print(f"load + index: {time.perf_counter() - t0:.3f} s")

    games = []
    with X.DATA.open("rb") as f:
        stream = io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(f))
        for line in stream:
            games.append(json.loads(line)["moves"].split())
            if len(games) == 2000:
                break

    def feats(sans: list[str], color: str) -> list[float]:
        own = X.own_moves(X.opening_of(sans), color, X.MAX_PLIES)
        table_like = {k: _Counts(*lookup[k]) for k, _ in own if k in lookup}
        return X.features_of(table_like, own, False)

    for rep in range(2):
        t0 = time.perf_counter()
        for sans in games:
            feats(sans, "white")
        print(f"run {rep}: features of 2,000 games (one side each): "
              f"{time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    for sans in games:
        X.opening_of(sans)
    print(f"of which the replay + hashing alone: {time.perf_counter() - t0:.2f} s")


class _Counts(dict):  # type: ignore[type-arg]
    """A pruned position: its moves' counts (missing moves 0) and its true total."""

    def __init__(self, total: int, moves: dict[str, int]) -> None:
        super().__init__(moves)
        self.total = total

    def __missing__(self, key: str) -> int:
        return 0

    def values(self):  # type: ignore[override]
        # features_of sums the values for the position's total: give the true total
        rest = self.total - sum(dict.values(self))
        return [*dict.values(self), rest]


if __name__ == "__main__":
    main()
