"""PGN file → SQLite, side by side with the peer tools on the same file.

Run: ``python -m benchmarks --only peers``. The peers are the PyPI packages ``chess-to-sqlite``
and ``pgn-to-sqlite``, installed by this benchmark into a throwaway virtual environment under
``benchmarks/.data/`` (never project dependencies). A tool that fails to install or to run is
reported with its error line instead of a figure.

Two kinds of figure:

- "PGN file → SQLite": :func:`tracker.importing.import_file` alone, in a fresh process, like the
  NDJSON benchmark (target ≥ 3,000 games/s);
- "side by side": each tool as its users run it, one command from start to exit (interpreter
  start included, for every tool alike) on the same synthetic PGN file, with the rows it
  stored counted and checked against the games the file holds. Target: tracker ≥ 10× the
  games/s of ``chess-to-sqlite``.
"""

from __future__ import annotations

import subprocess
import sys
import time
import venv
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from benchmarks import RUNS, Row, count_rows, median, row, synth, timed_imports

TARGET_GAMES_PER_SECOND: Final = 3_000
TARGET_TIMES_CHESS_TO_SQLITE: Final = 10
PEERS: Final = ("chess-to-sqlite", "pgn-to-sqlite")
VENV: Final = synth.DATA_DIR / "peers-venv"


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip()[:160] if lines else "no output"


def install_peers() -> dict[str, str | None]:
    """Install each peer into :data:`VENV`; ``{tool: None if installed else the error line}``."""
    python = VENV / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    errors: dict[str, str | None] = {}
    for tool in PEERS:
        if (VENV / "bin" / tool).exists():
            errors[tool] = None
            continue
        proc = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", tool],
            capture_output=True, text=True, check=False,
        )
        ok = proc.returncode == 0 and (VENV / "bin" / tool).exists()
        errors[tool] = None if ok else f"install failed: {_last_line(proc.stderr)}"
    return errors


def _command(tool: str, pgn: Path, db: Path) -> list[str]:
    if tool == "tracker":
        return [sys.executable, "-m", "tracker.cli.commands",
                "--db", str(db), "import-file", str(pgn)]
    if tool == "chess-to-sqlite":
        return [str(VENV / "bin" / tool), "--silent", str(pgn), str(db)]
    # pgn-to-sqlite reads every *.pgn of a folder: give it a folder holding just this file.
    folder = db.with_suffix(".in")
    folder.mkdir(exist_ok=True)
    link = folder / pgn.name
    if not link.exists():
        link.symlink_to(pgn)
    return [str(VENV / "bin" / tool), "-o", str(db), "save", str(folder)]


def _time_tool(tool: str, pgn: Path, runs: int) -> tuple[float, int | None, str | None]:
    """(median seconds, rows stored, error line or None) of ``runs`` runs of one tool."""
    times: list[float] = []
    stored: int | None = None
    for i in range(runs):
        db = synth.scratch(f"peer-{tool}-{i}.db")
        started = time.perf_counter()
        proc = subprocess.run(_command(tool, pgn, db), capture_output=True, text=True,
                              check=False, cwd=synth.ROOT, stdin=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
        stored = count_rows(db)
        if proc.returncode != 0:
            return median(times), stored, f"exit {proc.returncode}: {_last_line(proc.stderr)}"
        db.unlink(missing_ok=True)
    return median(times), stored, None


def run(sizes: Sequence[int] = (10_000, 100_000), side_by_side: int = 10_000,
        runs: int = RUNS) -> list[Row]:
    rows: list[Row] = []
    for n in sizes:
        seconds, _ = timed_imports(synth.pgn_file(n), n, runs, "pgn")
        rate = n / seconds
        rows.append(row(
            "PGN file → SQLite", n, f"{rate:,.0f} games/s",
            f"≥ {TARGET_GAMES_PER_SECOND:,} games/s", rate >= TARGET_GAMES_PER_SECOND,
            f"{seconds:.2f} s, median of {runs}",
        ))

    n = side_by_side
    pgn = synth.pgn_file(n)
    installed = install_peers()
    results: dict[str, tuple[float, int | None, str | None]] = {}
    for tool in ("tracker", *PEERS):
        error = installed.get(tool)
        results[tool] = (0.0, None, error) if error else _time_tool(tool, pgn, runs)
    ours = results["tracker"][0]
    for tool, (seconds, stored, error) in results.items():
        what = f"side by side: {tool} (whole command)"
        if error:
            rows.append(row(what, n, "failed", note=error))
            continue
        count = "rows: none" if stored is None else f"{stored:,} rows of {n:,} games"
        if stored is not None:
            count += " (right)" if stored == n else f" — WRONG: {n - stored:,} games missing"
        rate = (n if stored is None else stored) / seconds  # a lost game is not imported
        if tool == "tracker":
            peer = results["chess-to-sqlite"]
            if peer[2] is None and peer[0]:
                times = peer[0] / ours
                rows.append(row(what, n, f"{rate:,.0f} games/s, {times:,.1f}× chess-to-sqlite",
                                f"≥ {TARGET_TIMES_CHESS_TO_SQLITE}× chess-to-sqlite",
                                times >= TARGET_TIMES_CHESS_TO_SQLITE,
                                f"{seconds:.2f} s; {count}"))
                continue
        rows.append(row(what, n, f"{rate:,.0f} games/s", note=f"{seconds:.2f} s; {count}"))
    rows.append(row("side by side: the PGN file", n, f"{pgn.stat().st_size / 1e6:,.1f} MB",
                    note="games/s counts the games a tool stored, not the games it was given"))
    return rows
