"""tracker's benchmarks: ``python -m benchmarks`` (or ``make bench``) prints one table.

Each ``bench_*.py`` module has ``run(...) -> list[dict]``. The modules of this package that
follow the table's shape return :class:`Row` dicts (``what``, ``size``, ``figure``, ``target``,
``result``, ``note``); :mod:`benchmarks.__main__` turns the others' dicts into rows too.

Not part of the test run: the inputs are synthesised on demand (:mod:`benchmarks.synth`) and
the 1M-game runs take minutes.
"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, TypedDict

#: Runs per measurement; the figure is their median.
RUNS = 3


class Row(TypedDict):
    """One line of the benchmark table."""

    what: str
    size: str
    figure: str
    yardstick: str  # what the figure is measured against, in the same run ("" if absolute)
    ratio: str  # figure against yardstick, as the target states it
    target: str
    result: str  # PASS, MISS, "" (reported only) or ERROR
    note: str


def row(what: str, size: int | str, figure: str, target: str = "report it",
        passed: bool | None = None, note: str = "", *, yardstick: str = "",
        ratio: str = "") -> Row:
    result = "" if passed is None else ("PASS" if passed else "MISS")
    return Row(what=what, size=size_label(size) if isinstance(size, int) else size,
               figure=figure, yardstick=yardstick, ratio=ratio, target=target, result=result,
               note=note)


def size_label(n: int) -> str:
    """``10000`` → ``10k``, ``1000000`` → ``1M`` (games)."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return f"{n:,}"


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def import_in_child(path: Path, db: Path | str, *, repeat: int = 1, user: str | None = None
                    ) -> dict[str, Any]:
    """Import ``path`` into the SQLite file ``db`` (or a database URL) in a fresh process.

    ``repeat`` imports the same file that many times in a row (a re-import). Returns the
    child's JSON: ``seconds`` and ``cpu`` (one per import, :func:`tracker.importing.import_file`
    only, not the interpreter's start; ``cpu`` is this process's CPU time),
    ``read``/``new``/``unchanged`` of each, ``peak_mb`` (its maximum resident set,
    :func:`peak_mb`) and ``base_mb`` (the same before importing).
    """
    cmd = [sys.executable, "-m", "benchmarks", "--child-import", str(path), str(db),
           "--repeat", str(repeat)]
    if user:
        cmd += ["--user", user]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                          cwd=Path(__file__).resolve().parent.parent)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"import of {path.name} failed: {last}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def timed_imports(path: Path, games: int, runs: int, label: str) -> tuple[float, int]:
    """Import ``path`` (``games`` games) ``runs`` times, each into a new SQLite file in a fresh
    process; returns (median seconds, bytes of the last database). Raises RuntimeError when an
    import stores a different number of games."""
    from benchmarks import synth  # a submodule: imported when used, not with the package

    times: list[float] = []
    size = 0
    for i in range(runs):
        db = synth.scratch(f"{label}-{games}-{i}.db")
        r = import_in_child(path, db)
        if r["new"][0] != games:
            raise RuntimeError(f"stored {r['new'][0]:,} of {games:,} {label} games")
        times.append(r["seconds"][0])
        size = db_bytes(db)
        db.unlink()
    return median(times), size


def child_import(path: str, db: str, repeat: int, user: str | None) -> dict[str, Any]:
    """The child side of :func:`import_in_child` (run by ``python -m benchmarks``)."""
    import time

    from tracker.api import allow_collector_pauses
    from tracker.importing import import_file
    from tracker.store.db import Store

    allow_collector_pauses()  # as the ``tracker`` command does
    base = peak_mb()
    store = Store(db)
    out: dict[str, Any] = {"seconds": [], "cpu": [], "read": [], "new": [], "unchanged": [],
                           "status": []}
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        summary = import_file(path, store=store, user=user)
        out["seconds"].append(time.perf_counter() - started)
        out["cpu"].append(time.process_time() - cpu)
        for key in ("read", "new", "unchanged", "status"):
            out[key].append(getattr(summary, key))
    store.close()
    out["peak_mb"] = peak_mb()
    out["base_mb"] = base
    return out


def peak_mb() -> float:
    """This process's peak resident set, MB: ``VmHWM`` of ``/proc/self/status``.

    Not ``ru_maxrss``, which on Linux keeps the parent's peak across ``fork``/``exec``: a child
    started by a big benchmark runner would report the runner's size.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def db_bytes(db: Path) -> int:
    """Bytes of a SQLite database once its WAL is checkpointed into the main file."""
    con = sqlite3.connect(db)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    return db.stat().st_size


def count_rows(db: Path, table: str = "games") -> int | None:
    """Rows in ``table`` of a SQLite file, ``None`` when the file or table is missing."""
    if not db.exists():
        return None
    con = sqlite3.connect(db)
    try:
        return int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    except sqlite3.Error:
        return None
    finally:
        con.close()


def machine() -> str:
    """CPU model, cores, RAM, OS, Python and SQLite versions, one line."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f", {int(line.split()[1]) / 1024 / 1024:.0f} GB RAM"
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores{ram}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}; SQLite {sqlite3.sqlite_version}"
    )


#: A :class:`Row`'s keys, in the table's order.
COLUMNS: Final = ("what", "size", "figure", "yardstick", "ratio", "target", "result", "note")


def format_text(rows: Sequence[Row]) -> str:
    """``rows`` as a plain-text table: columns padded to their widest cell, the note last."""
    # the ignores: ``c`` runs over COLUMNS, Row's own keys, which mypy cannot see in a loop
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in COLUMNS[:-1]}  # type: ignore[literal-required]
    lines = ["  ".join(c.ljust(widths[c]) for c in COLUMNS[:-1]) + "  note"]
    for r in rows:
        lines.append("  ".join(r[c].ljust(widths[c]) for c in COLUMNS[:-1])  # type: ignore[literal-required]
                     + "  " + r["note"])
    return "\n".join(lines)


def format_markdown(rows: Sequence[Row]) -> str:
    """``rows`` as a Markdown table (``|`` in a cell escaped)."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        cells = (r[c].replace("|", "\\|") for c in COLUMNS)  # type: ignore[literal-required]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
