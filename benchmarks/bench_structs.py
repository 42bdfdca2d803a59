"""Named structs against plain tuples on two hot paths: ``python -m benchmarks --only structs``.

1. An import's prepared game (:data:`tracker.store.games.PreparedGame`), pickled from the
   reader process to the writer: built, pickled and unpickled for indexinator's 2,907 real
   games as the plain tuple it is (the yardstick), and as a ``msgspec.Struct`` (array-like,
   frozen, ``gc=False``), a ``NamedTuple`` and a slotted dataclass. It stays a tuple
   (docs/architecture.md).
2. The replay's rows (:data:`tracker.store.games.REPLAY_COLUMNS`): a ``msgspec.Struct`` built
   per row, against ``tuple(row)``, for 100k rows. They stay tuples (docs/architecture.md).

Each figure is the best of :data:`REPEATS` in this process; the ratio is against the tuple.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable
from dataclasses import make_dataclass
from pathlib import Path
from typing import Any, Final, NamedTuple

import msgspec

from benchmarks import Row, row

REPEATS: Final = 7
FILE: Final = (Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "lichess"
               / "indexinator-2023-04_2025-10.ndjson")
ROWS: Final = 100_000


#: The prepared game's fields, one list for the three named kinds measured against it.
_FIELDS: Final[list[tuple[str, Any]]] = [
    ("id", str), ("digest", str), ("source", str), ("plies", Any), ("result", Any),
    ("game", Any), ("white", Any), ("black", Any), ("analysis", Any), ("raw", bytes)]
_Named = NamedTuple("_Named", _FIELDS)
_Slotted = make_dataclass("_Slotted", _FIELDS, frozen=True, slots=True)
_Slotted.__module__ = __name__  # pickled by name (3.11's make_dataclass says "types")
_Struct = msgspec.defstruct("_Struct", _FIELDS, array_like=True, frozen=True, gc=False,
                            module=__name__)


_ReplayRow = msgspec.defstruct("_ReplayRow", [f"c{i}" for i in range(22)],
                               array_like=True, gc=False)


def _best(f: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        f()
        times.append(time.perf_counter() - started)
    return min(times)


def _figures(objs: list[Any], build: Callable[[], object]) -> tuple[float, float, float]:
    data = pickle.dumps(objs, protocol=pickle.HIGHEST_PROTOCOL)
    return (_best(build), _best(lambda: pickle.dumps(objs, protocol=pickle.HIGHEST_PROTOCOL)),
            _best(lambda: pickle.loads(data)))


def run() -> list[Row]:
    import json

    from tracker.sources.ndjson import record_from_json
    from tracker.store.games import prepare

    lines = FILE.read_text(encoding="utf-8").splitlines()
    values = [prepare(record_from_json(json.loads(line))) for line in lines if line]
    n = len(values)
    kinds: list[tuple[str, Callable[..., Any]]] = [
        ("tuple (PreparedGame)", lambda *v: v), ("msgspec.Struct", _Struct),
        ("NamedTuple", _Named), ("slotted dataclass", _Slotted)]
    base: tuple[float, float, float] | None = None
    rows: list[Row] = []
    for name, make in kinds:
        objs = [make(*v) for v in values]
        figures = _figures(objs, lambda make=make: [make(*v) for v in values])
        base = base or figures
        build, dump, load = figures
        rows.append(row(
            f"prepared game as {name}: pickle / unpickle", n,
            f"{dump * 1e3:.2f} / {load * 1e3:.2f} ms", yardstick=(
                f"{base[1] * 1e3:.2f} / {base[2] * 1e3:.2f} ms"),
            ratio=f"{(dump + load) / (base[1] + base[2]):.2f}",
            note=f"built in {build / n * 1e6:.2f} µs a game"))
    replay = [tuple(range(22)) for _ in range(ROWS)]
    plain = _best(lambda: [tuple(r) for r in replay])
    struct = _best(lambda: [_ReplayRow(*r) for r in replay])
    rows.append(row("replay rows as msgspec.Struct", ROWS, f"{struct * 1e3:.1f} ms",
                    yardstick=f"{plain * 1e3:.1f} ms (tuple)", ratio=f"{struct / plain:.1f}",
                    note="kept as tuples: RowView.load names them"))
    return rows
