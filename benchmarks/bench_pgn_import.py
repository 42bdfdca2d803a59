"""Benchmark of PGN file import and of filtering a Lichess open-database dump by player.

Run: ``python benchmarks/bench_pgn_import.py [--games N] [--dump-mb MB]``.

Inputs are synthesised from the real PGN exports in ``tests/fixtures/lichess/`` (the cmrade
download, the first 50 games of the 2013-01 open database, one arena game with clocks and
evals) and cached under ``benchmarks/.data/`` (git-ignored), generated streaming on first use:

- ``pgn-import-N.pgn``: N games that have moves, each a real game with a new ``Site`` id;
- ``dump-varied-MB-clocks.pgn.zst``: MB megabytes of decompressed PGN, zstd-compressed like
  the monthly ``lichess_db_standard_rated_YYYY-MM.pgn.zst``: varied games
  (:mod:`benchmarks.dump_synth`: random legal playouts under made-up players, ratings, dates,
  openings) that compress about 7:1 as the real dumps with clocks do, one game in 10,000 by
  the player the filter looks for, with a ``{ [%clk …] }`` comment after every move as in the
  dumps since 2017;
- ``dump-varied-MB.pgn.zst``: the same without clock comments, as in the early dumps (~4.8:1,
  the real 2013 dumps ~5:1): a megabyte then holds about three times as many games and lines;
- ``dump-repeated-MB[-clocks].pgn.zst``: the old synthetic dump, the fixtures' 500 real games
  cycled under new names (~26:1: zstd decompresses it several times faster than a real dump),
  kept as a worst case for the filter's share of decompression speed.

Each measurement runs ``tracker.importing.import_file`` in a fresh subprocess (so its peak
memory is its own: :func:`resource.getrusage` ``RUSAGE_CHILDREN``) into a new SQLite file.

Targets: PGN import ≥ 3,000 games/s (games with moves, stored); dump filtering ≥ 50 MB/s of
decompressed PGN when few games match; peak memory < 300 MB for a 1 GB input.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

import zstandard

from benchmarks import dump_synth, synth
from benchmarks.dump_synth import game_id, sample_games

ROOT: Final = Path(__file__).resolve().parent.parent
#: The benchmarks' data folder (``$TRACKER_BENCH_DATA`` or ``benchmarks/.data``).
DATA: Final = synth.DATA_DIR
NEEDLE: Final = "needle_in_dump"
#: One dump game in this many is the needle's.
NEEDLE_EVERY: Final = 10_000

TARGET_GAMES_PER_SECOND: Final = 3_000
TARGET_DUMP_MB_PER_SECOND: Final = 50.0
TARGET_PEAK_MB: Final = 300.0

_SITE = re.compile(rb'\[Site "https://lichess\.org/[A-Za-z0-9]+"\]')
_WHITE = re.compile(rb'\[White "[^"\n]*"\]')
_BLACK = re.compile(rb'\[Black "[^"\n]*"\]')


def _with_id(game: bytes, i: int) -> bytes:
    return _SITE.sub(b'[Site "https://lichess.org/' + game_id(i) + b'"]', game, count=1)


def pgn_games(n: int) -> Iterator[bytes]:
    sample = sample_games()
    for i in range(n):
        yield _with_id(sample[i % len(sample)], i)


_MOVE_NUMBER = re.compile(r"^\d+\.+$")


def with_clocks(game: bytes) -> bytes:
    """The game with a Lichess-style clock comment after every move (as in the dumps)."""
    head, _, movetext = game.decode("utf-8").partition("\n\n")
    if "{" in movetext:
        return game
    out = []
    ply = 0
    tokens = movetext.split()
    for token in tokens[:-1]:
        if _MOVE_NUMBER.match(token):
            continue
        number = ply // 2 + 1
        secs = max(180 - ply, 1)
        clock = f"{{ [%clk 0:{secs // 60:02d}:{secs % 60:02d}] }}"
        out.append(f"{number}. {token} {clock}" if ply % 2 == 0 else
                   f"{number}... {token} {clock}")
        ply += 1
    out.append(tokens[-1] if tokens else "*")
    return (head + "\n\n" + " ".join(out) + "\n\n\n").encode("utf-8")


def dump_games(limit_bytes: int, clocks: bool = False) -> Iterator[bytes]:
    sample = sample_games()
    if clocks:
        sample = [with_clocks(g) for g in sample]
    written = 0
    i = 0
    while written < limit_bytes:
        g = _with_id(sample[i % len(sample)], i)
        white = NEEDLE.encode() if i % NEEDLE_EVERY == 0 else b"p%05d" % (i * 7 % 20_000)
        g = _WHITE.sub(b'[White "' + white + b'"]', g, count=1)
        g = _BLACK.sub(b'[Black "p%05d"]' % (i * 13 % 20_000), g, count=1)
        written += len(g)
        i += 1
        yield g


def pgn_file(n: int) -> Path:
    path = DATA / f"pgn-import-{n}.pgn"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as out:
            for g in pgn_games(n):
                out.write(g)
        tmp.rename(path)
    return path


def dump_file(mb: int, clocks: bool = False, repeated: bool = False) -> tuple[Path, int]:
    """The synthetic dump of ``mb`` MB decompressed; returns (path, decompressed bytes).

    By default varied games (:mod:`benchmarks.dump_synth`), compressed at zstd level 19: about
    4:1 without clocks and 6.5:1 with them, near the real dumps' 5:1 and 7:1. ``repeated``: the
    fixtures' 500 real games cycled (:func:`dump_games`) at level 3, ~26:1, which zstd
    decompresses several times faster than any real dump (a worst case for the ratio)."""

    kind = "repeated" if repeated else "varied"
    path = DATA / f"dump-{kind}-{mb}MB{'-clocks' if clocks else ''}.pgn.zst"
    size_file = path.with_suffix(".size")
    if not path.exists() or not size_file.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        size = 0
        games = (dump_games(mb * 1_000_000, clocks) if repeated else
                 dump_synth.games(mb * 1_000_000, clocks, NEEDLE, NEEDLE_EVERY))
        level = 3 if repeated else 19
        with tmp.open("wb") as out, zstandard.ZstdCompressor(level=level).stream_writer(out) as w:
            batch: list[bytes] = []
            for g in games:
                batch.append(g)
                size += len(g)
                if len(batch) == 2000:
                    w.write(b"".join(batch))
                    batch = []
            w.write(b"".join(batch))
        tmp.rename(path)
        size_file.write_text(str(size))
    return path, int(size_file.read_text())


_CHILD = """
import json, resource, sys, time
from tracker.importing import import_file
from tracker.store.db import Store
path, db, users = sys.argv[1], sys.argv[2], sys.argv[3:]
store = Store(db)
started, cpu = time.perf_counter(), time.process_time()
s = import_file(path, store=store, user=users or None)
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
print(json.dumps({"seconds": seconds, "cpu": cpu, "new": s.new, "read": s.read,
                  "skipped": s.skipped,
                  "status": s.status,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


class _NoStore:
    """A stand-in for the naive pipeline's ``sqlite3`` connection that stores nothing: its
    read side alone (python-chess ``read_headers``, the rows built) is what is timed."""

    def __enter__(self) -> _NoStore:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def executemany(self, sql: str, rows: object) -> None:
        return None


def read_side(kind: str, path: str) -> dict[str, float]:
    """The read side of a PGN import, nothing stored, in this process: ``ours`` reads records
    as ``import_file`` does (:meth:`~tracker.sources.files.InputFile.byte_blocks`,
    ``read_pgn``), ``naive`` runs :func:`benchmarks.naive.pgn` with writes that do nothing.
    ``{"seconds", "cpu", "games"}``."""
    started, cpu = time.perf_counter(), time.process_time()
    if kind == "ours":
        from tracker.sources.files import ReadLog, open_input
        from tracker.sources.pgn import read_pgn

        with open_input(path) as f:
            games = sum(1 for _ in read_pgn(f.byte_blocks(), log=ReadLog(), blocks=True))
    else:
        from benchmarks import naive

        games = naive.pgn(path, _NoStore())  # type: ignore[arg-type]
    return {"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu,
            "games": games}


def _run_child(path: Path, users: Sequence[str] = ()) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(path), str(Path(tmp) / "bench.db"), *users],
            capture_output=True, text=True, check=True, cwd=ROOT,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result: dict[str, object] = json.loads(proc.stdout)
    if after > before:  # RUSAGE_CHILDREN: the largest child so far; agrees with the child's own
        result["peak_mb"] = max(float(result["peak_mb"]), after / 1024)  # type: ignore[arg-type]
    return result


def run(games: int = 20_000, dump_mb: int = 1_000, worst_mb: int = 300
        ) -> list[dict[str, object]]:
    """Run the measurements; one dict per figure.

    Keys: ``name``, ``value``, ``unit``, ``target`` (a number; ``>=`` or ``<`` in ``op``),
    ``passed``, ``detail``.
    """
    out: list[dict[str, object]] = []
    path = pgn_file(games)
    r = _run_child(path)
    rate = float(r["new"]) / float(r["seconds"])  # type: ignore[arg-type]
    out.append({
        "name": "PGN file import (games with moves, stored)", "value": rate, "unit": "games/s",
        "target": TARGET_GAMES_PER_SECOND, "op": ">=", "passed": rate >= TARGET_GAMES_PER_SECOND,
        "detail": f"{r['new']:,} games in {float(r['seconds']):.2f} s "  # type: ignore[arg-type]
                  f"(CPU {float(r['cpu']):.2f} s), "  # type: ignore[arg-type]
                  f"peak {float(r['peak_mb']):.0f} MB",  # type: ignore[arg-type]
    })
    for mb, clocks in ((dump_mb, True), (worst_mb, False)):
        if mb <= 0:
            continue
        dump, size = dump_file(mb, clocks)
        r = _run_child(dump, [NEEDLE])
        mb_s = size / 1e6 / float(r["seconds"])  # type: ignore[arg-type]
        kind = "with clocks, like 2017+ dumps" if clocks else "no clocks, like 2013 dumps"
        out.append({
            "name": f"dump filtering, 1 game in {NEEDLE_EVERY:,} kept ({kind})", "value": mb_s,
            "unit": "MB/s decompressed", "target": TARGET_DUMP_MB_PER_SECOND, "op": ">=",
            "passed": mb_s >= TARGET_DUMP_MB_PER_SECOND,
            "detail": f"{size / 1e6:,.0f} MB ({dump.stat().st_size / 1e6:,.0f} MB zstd), "
                      f"{r['read']:,} games, {r['new']:,} kept, "
                      f"in {float(r['seconds']):.1f} s "  # type: ignore[arg-type]
                      f"(CPU {float(r['cpu']):.1f} s)",  # type: ignore[arg-type]
        })
        peak = float(r["peak_mb"])  # type: ignore[arg-type]
        out.append({
            "name": f"peak memory, filtering that {size / 1e9:.1f} GB dump", "value": peak,
            "unit": "MB", "target": TARGET_PEAK_MB, "op": "<", "passed": peak < TARGET_PEAK_MB,
            "detail": "max RSS of the importing process",
        })
    return out


def format_table(results: Sequence[dict[str, object]]) -> str:
    lines = []
    for r in results:
        verdict = "PASS" if r["passed"] else "MISS"
        lines.append(
            f"{r['name']:<46} {float(r['value']):>10,.0f} {r['unit']:<18} "  # type: ignore[arg-type]
            f"(target {r['op']} {r['target']:,}) {verdict}  {r['detail']}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] = ()) -> int:
    if argv and argv[0] == "read-side":  # a child of bench_targets: read-side ours|naive FILE
        print(json.dumps(read_side(argv[1], argv[2])))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000, help="games in the PGN file")
    parser.add_argument("--dump-mb", type=int, default=1_000,
                        help="decompressed size of the synthetic dump with clocks, MB (0: skip)")
    parser.add_argument("--worst-mb", type=int, default=300,
                        help="decompressed size of the dump without clocks, MB (0: skip)")
    args = parser.parse_args(argv)
    print(f"PGN import benchmark: {args.games:,} games; dumps of {args.dump_mb:,} and "
          f"{args.worst_mb:,} MB (inputs in {DATA.relative_to(ROOT)})")
    results = run(args.games, args.dump_mb, args.worst_mb)
    print(format_table(results))
    return 0 if all(r["passed"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
