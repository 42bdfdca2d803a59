"""Benchmark of hostile inputs: peak memory on the bombs of issue 11, time on huge games.

Run: ``python benchmarks/bench_bombs.py [--scale 1.0] [--only NAME,...]`` (not part of
``python -m benchmarks``: the full-size inputs take minutes and 1 GB of disk each).

Each input is generated streaming on first use under ``benchmarks/.data/`` (git-ignored) and
imported by ``tracker.importing.import_file`` in a fresh process into a new SQLite file; the
figure is that process's peak resident set (``VmHWM``) and its wall time. The inputs, at
``--scale 1`` (the sizes of the issue):

- ``zeros``: a valid NDJSON game, then 1 GB of zero bytes without a newline;
- ``gzip``: the same game, 2 GB of zeros, a second game, gzip level 9 (~2 MB on disk);
- ``zstd``: the same, 4 GB of zeros, zstd level 19 (~130 KB on disk);
- ``pgn-comment``: a PGN game, then an unclosed ``{`` comment of 1 GB, no newline;
- ``pgn-comment-lines``: the same comment cut into 100-byte lines;
- ``pgn-comment-user``, ``pgn-comment-lines-user``: the same two imported with ``--user a``
  (the path that filters the Lichess open database by player, in 4 MB chunks);
- ``api-10mb``: a 10 MB line in the middle of the 2,907 games of the local Lichess server
  (``tracker import``; the time is the whole import, the line skipped as too large);
- ``pgn-nested``: a PGN game whose movetext holds 100,000 nested variations (200 KB).

Target: peak memory < 300 MB on each bomb; the games before and after a bomb kept, the bomb
skipped as "game too large".
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Final

import zstandard

ROOT: Final = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import peak_mb  # noqa: E402
from benchmarks.synth import DATA_DIR, scratch  # noqa: E402

INDEXINATOR: Final = ROOT / "tests" / "fixtures" / "lichess" / "indexinator-2023-04_2025-10.ndjson"
MB: Final = 1 << 20
GB: Final = 1 << 30


def _games() -> list[bytes]:
    return [line.encode() for line in INDEXINATOR.read_text().splitlines()[:2]]


def _zeros(f: BinaryIO | Any, n: int, line: int | None = None) -> None:
    block = b"0" * (line - 1) + b"\n" if line else b"\0" * MB
    for _ in range(max(1, n // len(block))):
        f.write(block)


def _pgn_game() -> bytes:
    return (b'[Event "Rated Blitz game"]\n[Site "https://lichess.org/aaaaaaa1"]\n[White "a"]\n'
            b'[Black "b"]\n[Result "1-0"]\n[UTCDate "2024.01.01"]\n[UTCTime "10:00:00"]\n'
            b'[WhiteElo "1500"]\n[BlackElo "1500"]\n[TimeControl "180+0"]\n\n'
            b"1. e4 e5 2. Nf3 Nc6 1-0\n\n")


#: Inputs imported with ``--user a`` (the path that filters the Lichess open database by
#: player, reading 4 MB chunks): the file of the input named without ``-user``.
FILTERED: Final = ("pgn-comment-user", "pgn-comment-lines-user")


def make(name: str, scale: float) -> Path:
    """The input ``name`` at ``scale`` (generated once, then reused)."""
    name = name.removesuffix("-user")
    first, last = _games()
    sizes = {"zeros": GB, "gzip": 2 * GB, "zstd": 4 * GB, "pgn-comment": GB,
             "pgn-comment-lines": GB, "pgn-nested": 0, "api-10mb": 0}
    size = int(sizes[name] * scale)
    ext = {"zeros": "ndjson", "gzip": "ndjson.gz", "zstd": "ndjson.zst"}.get(name, "pgn")
    path = DATA_DIR / f"bomb-{name}-{size}.{ext}"
    if path.exists():
        return path
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    with tmp.open("wb") as raw:
        if name == "zeros":
            raw.write(first + b"\n")
            _zeros(raw, size)
        elif name in ("gzip", "zstd"):
            opener: Callable[[], Any] = (
                (lambda: gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9))
                if name == "gzip" else
                (lambda: zstandard.ZstdCompressor(level=19).stream_writer(raw)))
            with opener() as out:
                out.write(first + b"\n")
                _zeros(out, size)
                out.write(b"\n" + last + b"\n")
        elif name.startswith("pgn-comment"):
            raw.write(_pgn_game() + b"{ ")
            _zeros(raw, size, line=100 if name.endswith("lines") else None)
        elif name == "pgn-nested":
            game = _pgn_game()
            nested = b"(" * 100_000 + b")" * 100_000 + b" "  # 200 KB, as in the issue
            raw.write(game.replace(b"1. e4 ", b"1. e4 " + nested))
    tmp.rename(path)
    return path


def child(path: str, user: str | None = None) -> dict[str, Any]:
    """The child side: import ``path`` into a new database; figures as JSON."""
    from tracker.importing import import_file
    from tracker.store.db import Store

    db = scratch(f"bomb-{Path(path).name}.db")
    started = time.perf_counter()
    with Store(str(db)) as store:
        summary = import_file(path, store=store, user=user)
    return {"seconds": time.perf_counter() - started, "peak_mb": peak_mb(),
            "line": summary.line()}


def child_api() -> dict[str, Any]:
    """The child side of ``api-10mb``: the local Lichess server, one 10 MB line."""
    sys.path.insert(0, str(ROOT))
    from tests.lichess_server import LichessServer, ndjson_lines
    from tracker.importing.lichess import LichessOptions, import_user
    from tracker.store.db import Store

    lines = ndjson_lines(INDEXINATOR)
    with LichessServer() as server:
        server.add_user("indexinator", lines)
        server.replace_line("indexinator", json.loads(lines[1400])["id"], b"0" * (10 * MB))
        db = scratch("bomb-api.db")
        started = time.perf_counter()
        with Store(str(db)) as store:
            summary = import_user("indexinator", store=store,
                                      options=LichessOptions(base_url=server.url))
        return {"seconds": time.perf_counter() - started, "peak_mb": peak_mb(),
                "line": summary.line()}


def stream_line_seconds(size: int = 10 * MB) -> float:
    """Seconds for the API stream reader to get past one ``size``-byte line sent in 32 KB
    chunks (as the local server and Lichess send them), between two real games."""
    from tracker.sources.lichess.client import read_game_stream

    first, last = _games()
    body = first + b"\n" + b'{"id":"huge0001","moves":"' + b"e4 " * (size // 3) + b'"}\n' + last
    pieces = [body[i : i + 32 * 1024] for i in range(0, len(body), 32 * 1024)]

    started = time.perf_counter()
    got = list(read_game_stream(pieces))
    assert len(got) == 3
    return time.perf_counter() - started


def nested_plies_seconds() -> float:
    """Seconds to count the plies of a movetext with 100,000 nested variations (200 KB)."""
    from tracker.sources.pgn import count_plies

    movetext = "1. e4 " + "(" * 100_000 + ")" * 100_000 + " e5 2. Nf3 Nc6 1-0"
    started = time.perf_counter()
    assert count_plies(movetext) == 4
    return time.perf_counter() - started


def run(name: str, scale: float) -> dict[str, Any]:
    args = ["--child-api"] if name == "api-10mb" else ["--child", str(make(name, scale))]
    if name in FILTERED:
        args += ["--user", "a"]
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
    result: dict[str, Any] = json.loads(done.stdout)
    return result


NAMES: Final = ("zeros", "gzip", "zstd", "pgn-comment", "pgn-comment-lines", *FILTERED,
                 "api-10mb",
                "pgn-nested")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="input sizes × this")
    parser.add_argument("--only", default="", help="comma-separated names: " + ", ".join(NAMES))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-api", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--user", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.user)))
        return 0
    if args.child_api:
        print(json.dumps(child_api()))
        return 0
    names = [n for n in args.only.split(",") if n] or list(NAMES)
    print("| input | on disk | peak memory | time | summary |\n|---|---|---|---|---|")
    for name in names:
        size = ("-" if name == "api-10mb"
                else f"{make(name, args.scale).stat().st_size / MB:,.1f} MB")
        r = run(name, args.scale)
        if "error" in r:
            print(f"| {name} | {size} | error | | {r['error']} |")
            continue
        print(f"| {name} | {size} | {r['peak_mb']:.0f} MB | {r['seconds']:.2f} s | {r['line']} |",
              flush=True)
    print(f"\nAPI stream reader past a 10 MB game line: {stream_line_seconds():.3f} s")
    print(f"plies of a game with 100,000 nested variations: {nested_plies_seconds():.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
