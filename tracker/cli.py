"""The ``tracker`` command: thin wrappers over the public Python API (:mod:`tracker.api`).

Every command calls one API function and prints its result; no command holds logic of its own.
Errors meant for the user (:class:`tracker.errors.TrackerError`) print as one line on stderr
with a non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from tracker import api
from tracker.errors import TrackerError

app = typer.Typer(
    name="tracker",
    help=(
        "Replay your Lichess games as FIDE rating periods: a hypothetical FIDE rating, month by "
        "month, beside your real Lichess (Glicko-2) rating."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class State:
    db: str | None = None


state = State()


@app.callback()
def _main(
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Database: a SQLAlchemy URL (sqlite:///x.db, postgresql+psycopg://…) or a file "
            "path. Default: $TRACKER_DB, else tracker.db in the user data folder.",
            metavar="URL",
        ),
    ] = None,
) -> None:
    state.db = db


def _date(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def _progress_bar(description: str, unit: str = "bytes") -> Any:
    """A rich progress bar on stderr; returns (progress, callback)."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    amount = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        amount,
        TextColumn("{task.fields[games]:>8,} games"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )
    task = progress.add_task(description, total=None, games=0, rate="")
    started = datetime.now(UTC)

    def callback(games: int, done: int, total: int | None) -> None:
        secs = (datetime.now(UTC) - started).total_seconds() or 1e-9
        progress.update(task, completed=done, total=total, games=games,
                        rate=f"{games / secs:,.0f} games/s")

    return progress, callback


@app.command("import-file")
def import_file_cmd(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Lichess NDJSON or PGN files, plain or .gz/.bz2/.zst.",
                       show_default=False),
    ],
    user: Annotated[
        list[str] | None,
        typer.Option("--user", "-u", help="Whose history this is (repeatable). Only games of "
                     "these players are kept. Default: the player in most games."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Import games from files (format recognised by content), incrementally: a game already
    stored is updated, never duplicated. Prints a one-line summary: read, new, updated,
    unchanged, skipped by reason."""
    progress, callback = _progress_bar("importing")
    with progress:
        summary = api.import_file(paths, db=state.db, user=user, progress=callback)
    for w in summary.warnings:
        err.print(f"warning: {w}", markup=False)
    if as_json:
        out.print_json(json.dumps(api.summary_dict(summary)))
    else:
        out.print(summary.line(), markup=False)
    if summary.status == "failed":
        raise typer.Exit(1)


@app.command("players")
def players_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List tracked players with their games per perf and first/last game dates (UTC)."""
    players = api.players(db=state.db)
    if as_json:
        out.print_json(json.dumps([api.player_dict(p) for p in players]))
        return
    if not players:
        out.print("No players yet: import games first (tracker import USERNAME, or "
                  "tracker import-file FILE).")
        return
    table = Table("player", "perf", "games", "first game", "last game", title="Tracked players")
    for p in players:
        for i, perf in enumerate(p.perfs):
            table.add_row(p.username if i == 0 else "", perf.perf, f"{perf.games:,}",
                          _date(perf.first_ms), _date(perf.last_ms))
        if not p.perfs:
            table.add_row(p.username, "-", "0", "-", "-")
    out.print(table)


@app.command("dashboard")
def dashboard_cmd(
    port: Annotated[int, typer.Option(help="Port to serve on.")] = 8501,
    host: Annotated[str, typer.Option(help="Address to listen on; 0.0.0.0 exposes the "
                                      "dashboard to your network.")] = "127.0.0.1",
) -> None:
    """Open the Streamlit dashboard on the database (127.0.0.1 only by default)."""
    raise typer.Exit(api.dashboard(db=state.db, port=port, host=host))


@app.command("demo")
def demo_cmd(
    dashboard: Annotated[bool, typer.Option(help="Open the dashboard at the end.")] = False,
) -> None:
    """Import the bundled real Lichess history (indexinator, 2,907 games) and show it."""
    summary = api.demo(db=state.db)
    out.print(summary.line(), markup=False)
    players_cmd(as_json=False)
    if dashboard:
        dashboard_cmd(port=8501, host="127.0.0.1")


def main() -> None:
    """Console entry point: user errors become one line on stderr and a non-zero exit."""
    try:
        app()
    except TrackerError as exc:
        err.print(f"error: {exc}", markup=False)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted: what was imported so far is kept; run again to resume")
        sys.exit(130)


if __name__ == "__main__":
    main()
