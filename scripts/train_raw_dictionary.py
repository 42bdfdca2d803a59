"""Train the zstd dictionary the store compresses each game's raw text with (run once; the
file it writes is kept forever, as every stored game written with it needs it to be read).

    python scripts/train_raw_dictionary.py    # writes tracker/data/raw-dictionary-1.zdict

A Lichess game is ~730 bytes of NDJSON or ~500 of PGN: too little for zstd to find much to
reuse inside it, so most of each frame is the keys, tag names, openings and clock comments
every game repeats. A dictionary of them, trained on real games, halves the stored size and
the compression time (held out: the 1,500 newest games of the bundled history compressed with
a dictionary trained on the rest, 483 → 212 bytes a game, 5.2 → 2.3 µs). Trained here on the
bundled history (NDJSON, 2,907 games) and the two real PGN files of ``shared/data/lichess``
(524 games, copied in ``tests/fixtures/lichess``), deterministically (one thread), so running it
again gives the same bytes.

Never change ``raw-dictionary-1.zdict``: to train a better one, write ``raw-dictionary-2``
with a new id and teach :mod:`tracker.core.codec` to read both.
"""

from __future__ import annotations

import sys
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT / "tests" / "fixtures" / "lichess"  # copies of shared/data/lichess
OUT = ROOT / "tracker" / "data" / "raw-dictionary-1.zdict"
#: "trak": the dictionary id written in every frame compressed with it.
DICT_ID = 0x7472616B
SIZE = 64 * 1024


def _pgn_games(path: Path) -> list[bytes]:
    text = path.read_bytes().replace(b"\r\n", b"\n")
    parts = text.split(b"\n\n[Event")
    return [parts[0], *(b"[Event" + p for p in parts[1:])]


def main() -> int:
    ndjson = ROOT / "tracker" / "data" / "indexinator-2023-04_2025-10.ndjson.zst"
    with ndjson.open("rb") as f, zstandard.ZstdDecompressor().stream_reader(f) as r:
        samples = r.read().splitlines(keepends=True)
    for name in ("cmrade-2018-07_2020-11.pgn", "lichess_db_standard_rated_2013-01-first50.pgn"):
        samples += _pgn_games(SHARED / name)
    trained = zstandard.train_dictionary(SIZE, samples, dict_id=DICT_ID, threads=1)
    OUT.write_bytes(trained.as_bytes())
    print(f"{OUT.relative_to(ROOT)}: {len(samples):,} samples, {len(trained.as_bytes()):,} bytes,"
          f" id {trained.dict_id():#x}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
