"""The ``tracker`` command: thin wrappers over the public Python API (:mod:`tracker.api`).

Every command calls one API function and prints its result; no command holds logic of its own.
Errors meant for the user (:class:`tracker.core.errors.TrackerError`) print as one line on stderr
with a non-zero exit, never a traceback.

Exit codes, one rule for every command: 0 done; 1 nothing done or only part of it (no games
found, an import stopped early, an unknown player); 2 a usage error (a malformed or unknown
option or value); 130 interrupted (Ctrl+C).

Start-up is kept short: this module imports only :mod:`tracker.api`, typer and rich; the API
loads the database and import layers when a command first needs them.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import signal
import sys
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

import typer
from rich.markup import escape

from tracker import api
from tracker.api import (
    ArgumentError,
    InterruptedRun,
    ReadOnlyError,
    Terminated,
    TrackerError,
)
from tracker.cli import fide, groups, strength, sync
from tracker.cli.text import BaseUrl, Username, cell, err, examples, out, say, visible

if TYPE_CHECKING:
    from rich.text import Text

    from tracker.api import ImportSummary

app = typer.Typer(
    name="tracker",
    help=(
        "Replay your Lichess games as FIDE rating periods: a hypothetical FIDE rating, month by "
        "month, beside your real Lichess (Glicko-2) rating.\n\n"
        "Exit codes: 0 done; 1 nothing done or only part of it; 2 usage error."
    ),
    epilog=(
        "\b\nExamples:\n"
        "  tracker import-file lichess_me_2024-01-01.pgn --user me\n"
        "  tracker import me\n"
        "  tracker replay me --perf blitz\n"
        "  tracker --db my.db dashboard\n"
        "\n--db works before or after the command."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

#: Exit codes after a signal: 128 + the signal's number, as shells report them.
EXIT_INTERRUPTED = 130  # SIGINT (Ctrl+C)
EXIT_TERMINATED = 143  # SIGTERM


class State:
    db: str | None = None


def _print_version(value: bool) -> None:
    if value:
        print(f"tracker {api.version()}")
        raise typer.Exit()


state = State()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option(
        "--version", help="Print tracker's version and exit.", is_eager=True,
        callback=_print_version)] = False,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Database: a SQLAlchemy URL (sqlite:///x.db, postgresql+psycopg://…) or a file "
            "path. Default: $TRACKER_DB, else tracker.db in the user data folder. Accepted "
            "before or after the command.",
            metavar="URL",
        ),
    ] = None,
) -> None:
    state.db = db


def _date(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def _no_progress(_games: int, _done: int, _total: int | None) -> None:
    """The progress callback when no bar is drawn."""


class _Bar:
    """An import's progress callback (``bar(games, done, total)``) and :meth:`wait`, what it
    says while Lichess asks to wait (HTTP 429): on the bar, else one line on stderr."""

    def __init__(self, update: Callable[[int, int, int | None], None] = _no_progress,
                 note: Callable[[str], None] | None = None) -> None:
        self.update = update
        self.note = note

    def __call__(self, games: int, done: int, total: int | None) -> None:
        self.update(games, done, total)

    def wait(self, line: str) -> None:
        """Say ``line`` (``"Lichess asked to wait (HTTP 429 …) … in 60 s"``) until the games
        flow again: in the bar's rate column, or as a line on stderr without a bar."""
        if self.note is not None:
            self.note(line)
        else:
            say(err, line)


def _progress_bar(description: str, unit: str = "bytes") -> Any:
    """A rich progress bar on stderr; returns (progress, :class:`_Bar`). When stderr is not a
    terminal there is no bar to draw: a no-op pair (a wait is said as a line), and
    rich.progress is not loaded (~8 ms of an import's start-up)."""
    if not err.is_terminal:
        return nullcontext(), _Bar()
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    # Bytes for a file (the games read are counted beside them); for the Lichess API the
    # games are the amount, so they are shown once.
    amount = [DownloadColumn()] if unit == "bytes" else []
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        *amount,
        TextColumn("{task.fields[games]:>8,} games"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    )
    task = progress.add_task(escape(visible(description)), total=None, games=0, rate="")
    started = datetime.now(UTC)

    def callback(games: int, done: int, total: int | None) -> None:
        secs = (datetime.now(UTC) - started).total_seconds() or 1e-9
        progress.update(task, completed=done, total=total, games=games,
                        rate=f"{games / secs:,.0f} games/s")

    def note(line: str) -> None:  # until the next games: the bar says why it stands still
        until = datetime.now(UTC).strftime("%H:%M:%S")
        progress.update(task, rate=escape(visible(f"{line} (asked at {until} UTC)")))

    return progress, _Bar(callback, note)


def _run_import(description: str, unit: str, as_json: bool,
                run: Callable[[_Bar], ImportSummary],
                nothing_is_1: bool = False) -> None:
    """Run an import with a progress bar, print its summary, exit as the summary says.

    Exit code 0 for a complete import, 1 for a partial or failed one (run it again to resume)
    or, with ``nothing_is_1``, one that stored no game; 130 when interrupted (Ctrl+C), 143
    when stopped by SIGTERM, after saying what was kept. The text summary says once where the
    database is.
    """
    progress, callback = _progress_bar(description, unit=unit)
    try:
        with progress:
            summary = run(callback)
    except KeyboardInterrupt as exc:
        kept = exc.summary if isinstance(exc, InterruptedRun) else None
        stopped = isinstance(exc, Terminated)
        say(err, kept.line() if kept is not None else "interrupted")
        say(err, f"{'terminated' if stopped else 'interrupted'}: every finished batch is kept; "
                 "run the same command again to finish")
        raise typer.Exit(EXIT_TERMINATED if stopped else EXIT_INTERRUPTED) from None
    for w in summary.warnings:
        say(err, f"warning: {w}")
    if as_json:
        out.print_json(json.dumps(api.summary_dict(summary)))
    else:
        # Where the games went, once, on stderr: stdout stays the one summary line scripts read.
        # Said before the summary and flushed, so that piped (2>&1 | tee) it never lands after.
        sys.stdout.flush()
        say(err, f"into {api.database_place(state.db)}")
        err.file.flush()
        say(out, summary.line())
        out.file.flush()
    if summary.status != "complete" or (nothing_is_1 and summary.stored == 0):
        raise typer.Exit(1)


@app.command("import-file", short_help="Import games from Lichess PGN or NDJSON files.",
             epilog=examples(
                 "tracker import-file lichess_me_2024-01-01.pgn --user me",
                 "tracker import-file games.ndjson.zst"))
def import_file_cmd(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Lichess NDJSON or PGN files, plain or .gz/.bz2/.xz/.zst.",
                       show_default=False, metavar="FILE..."),
    ],
    user: Annotated[
        list[str] | None,
        typer.Option("--user", "-u", help="Whose history this is (repeatable). Only games of "
                     "these players are kept. Default: the player in most games.",
                     metavar="NAME"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Import games from Lichess PGN or NDJSON files.

    The format is recognised by content; importing again updates a stored game, never
    duplicates it. Prints a one-line summary (read, new, updated, unchanged, skipped by
    reason) and the database it went into. Exit code 1 when the file was cut or no game was
    stored."""
    _run_import("importing", "bytes", as_json,
                lambda cb: api.import_file(paths, db=state.db, user=user, progress=cb),
                nothing_is_1=True)


@app.command("import", short_help="Import a player's games from the Lichess API.",
             epilog=examples(
                 "tracker import me",
                 "tracker import me --perf blitz,rapid --since 2024-01-01"))
def import_cmd(
    username: Username,
    perf: Annotated[
        str | None,
        typer.Option("--perf", help="Only these perfs, comma-separated (blitz,rapid). Lichess "
                     "then windows by game end (lastMoveAt).", metavar="PERFS"),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only games since this UTC day.", metavar="YYYY-MM-DD"),
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Read every game again, not just the new ones.")
    ] = False,
    base_url: BaseUrl = None,
    token_file: Annotated[
        Path | None,
        typer.Option("--token-file", help="File holding a Lichess API token (default: "
                     "$LICHESS_TOKEN). Needed for the rating history; never printed or stored.",
                     metavar="PATH"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Import a player's games from the Lichess API.

    The first run reads them all; later runs fetch only new games (and correspondence games
    that have ended since), resume what an interrupted run left, and survive rate limits and
    broken downloads. Prints a one-line summary and the database it went into; exit code 1
    when the import stopped early (run it again to resume) or for an unknown or closed
    account."""
    _run_import(f"importing {username}", "games", as_json,
                lambda cb: api.import_user(username, db=state.db, perf=perf, since=since,
                                           full=full, base_url=base_url, token_file=token_file,
                                           progress=cb, on_wait=cb.wait))


@app.command("runs", short_help="List the last import runs (killed ones as interrupted).",
             epilog=examples("tracker runs --json"))
def runs_cmd(
    limit: Annotated[int, typer.Option(help="How many runs, newest first (1 to 2147483647).")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the last import runs: status (running, complete, partial, failed, interrupted),
    counts and message. A run whose process was killed is shown as interrupted."""
    found = api.runs(db=state.db, limit=limit)
    if as_json:
        out.print_json(json.dumps([api.run_dict(r) for r in found]))
        return
    if not found:
        out.print("No import runs yet.")
        return
    from rich import box
    from rich.table import Table

    # A narrow terminal (80 columns) gets fewer columns, unpadded, the target and message
    # wrapped: every header and number whole, not cut to "sta…".
    wide = out.width >= 120
    names = ["run", "started (UTC)", "source", "target", "status", "read", "new", "updated",
             "unchanged", "skipped", "message"]
    shown = names if wide else ["run", "started (UTC)", "status", "read", "new", "target",
                                "message"]
    table = Table(title="Import runs", box=box.HEAVY_HEAD if wide else box.SIMPLE_HEAD,
                  collapse_padding=not wide, pad_edge=wide)
    for name in shown:
        wraps = name in ("target", "message")
        table.add_column(name, no_wrap=not wraps, overflow="fold" if wraps else "ellipsis",
                         min_width=None if wraps or wide else len(name))
    for r in found:
        started = datetime.fromtimestamp(r.started_at_ms / 1000, tz=UTC)
        cells: dict[str, str | Text] = dict(zip(names, [
            str(r.id), started.strftime("%Y-%m-%d %H:%M"), cell(r.source), cell(r.target),
            cell(r.status), str(r.read), str(r.new), str(r.updated), str(r.unchanged),
            str(sum(r.skipped.values())), cell(r.message or "")], strict=True))
        table.add_row(*(cells[name] for name in shown))
    out.print(table)
    if not wide:
        out.print("(source, updated, unchanged, skipped: widen the terminal, or use --json)",
                  markup=False)


@app.command("passes", short_help="List the saved replay passes; --drop after a hand edit.",
             epilog=examples("tracker passes", "tracker passes --drop"))
def passes_cmd(
    username: Annotated[str | None, typer.Argument(
        help="Only this player's passes (default: every player's).", show_default=False,
        metavar="USERNAME")] = None,
    drop: Annotated[bool, typer.Option(
        "--drop", help="Drop them and move the write counter on: after editing the database "
                       "by hand.")] = False,
) -> None:
    """List the saved replay passes, or drop them after a hand edit of the database.

    A replay saves its pass over the games and reuses it until tracker writes a game. An
    edit of the database by hand (SQL, a restored copy) writes no counter: run `tracker
    passes --drop` after it, and every replay and dashboard page computes again."""
    if drop:
        n = api.drop_passes(username, db=state.db)
        out.print(f"dropped {n} saved pass{'es' * (n != 1)}; the next replay of each player "
                  "reads the games again", markup=False)
        return
    found = api.saved_passes(username, db=state.db)
    if not found:
        out.print("No saved passes.")
        return
    from rich.table import Table

    table = Table("player", "perf", "options", "state", "bytes", title="Saved replay passes")
    for p in found:
        table.add_row(cell(p.user_id), p.perf, cell(p.options),
                      "current" if p.current else "stale", f"{p.size:,}")
    out.print(table)


@app.command("players", short_help="List the tracked players and their games per perf.",
             epilog=examples("tracker players --json"))
def players_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the tracked players and their games per perf.

    One row per perf with the number of games and the first and last game dates (UTC)."""
    players = api.players(db=state.db)
    if as_json:
        out.print_json(json.dumps([api.player_dict(p) for p in players]))
        return
    if not players:
        out.print("No players yet: import games first (tracker import USERNAME, or "
                  "tracker import-file FILE).")
        return
    from rich.table import Table

    table = Table("player", "perf", "games", "first game", "last game", title="Tracked players")
    for p in players:
        for i, perf in enumerate(p.perfs):
            table.add_row(cell(p.username if i == 0 else ""), cell(perf.perf),
                          f"{perf.games:,}", _date(perf.first_ms), _date(perf.last_ms))
        if not p.perfs:
            table.add_row(cell(p.username), "-", "0", "-", "-")
    out.print(table)


Rules = typer.Option(help="FIDE rules version: fide-2025-10 (the default; 2650 exemption from the "
                     "400-point rule) or fide-2024-03.", metavar="VERSION")
Expected = typer.Option(help="Expected score: table (FIDE table 8.1.2, the default) or "
                        "formula (logistic).", metavar="METHOD")
Scale = typer.Option(help="Scale of the opponents' ratings: lichess (the raw numbers), a model "
                     "(lebowitz, mathtuition, chessdojo-2024: mapped to FIDE's scale first), "
                     "all (every model covering the perf: their median, and the band) or "
                     "club:GROUP (the group's model, tracker group calibrate). "
                     "Default: all, or lichess where no model covers the perf.",
                     metavar="SCALE")
StartScale = typer.Option(help="The scale --start-rating is on: fide (default) or lichess "
                          "(mapped through the model like the opponents).", metavar="SCALE")
Chapter = typer.Option(help="FIDE chapter: standard or rapid-blitz (no 2650 exemption; the "
                       "600-point rule from 2024-12). Default: by perf (classical and "
                       "correspondence standard, the others rapid-blitz).", metavar="CHAPTER")


def _fmt(x: object, width: int = 0) -> str:
    return ("-" if x is None else str(x)).rjust(width)


#: A ``--period``: a year and a month 01 to 12.
_MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")


def _check_export(as_json: bool, as_csv: bool, period: str | None) -> None:
    """Raise ArgumentError (exit 2) for ``--json`` with ``--csv``, or a ``--period`` that is
    no YYYY-MM month."""
    if as_json and as_csv:
        raise ArgumentError("--json and --csv: give one")
    if period is not None and not _MONTH.fullmatch(period):
        raise ArgumentError(f"not a month: {period!r} (YYYY-MM)")


def _print_export(report: api.ReplayReport, period: str | None, as_csv: bool,
                  as_json: bool = True) -> None:
    """``replay --json`` / ``--csv``, or with ``period`` that month's games as JSON, CSV or
    (neither asked) a table (ArgumentError for a month without games)."""
    if period is not None:
        months = [p.period for p in report.periods]
        if period not in months:
            raise ArgumentError(f"no {report.perf} games of {report.player} in {period!r}: "
                                f"months with games {months[0]} to {months[-1]}")
        details = report.period_games(period)
        if not (as_csv or as_json):
            _print_month(report, period, details)
            return
        print(api.games_csv(details) if as_csv else api.dumps(api.games_json(details)),
              end="" if as_csv else "\n")
    elif as_csv:
        print(api.periods_csv(report), end="")
    else:
        print(api.dumps(report.to_json()))


def _print_month(report: api.ReplayReport, period: str, details: list[Any]) -> None:
    """``replay --period M`` in a terminal: the month's games, one row each (the figures of
    ``--csv``: PD and ΔR of the counted ones, on the scale the line above the table names)."""
    from rich import box
    from rich.table import Table

    rows = api.games_json(details)
    scale = rows[0]["scale"] if rows else "lichess"
    say(out, f"{report.player} — {report.perf}, {period}: {api.plural(len(rows), 'game')}; "
             f"expected (PD) and ΔR on the {scale} scale" + (
                 " (the first model's; the month's rating change, without --period, is the "
                 "models' median)" if report.banded else ""))
    table = Table("date", "colour", box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False)
    table.add_column("opponent", overflow="fold", min_width=10)
    for name in ("rating", "on scale", "result", "PD", "ΔR"):
        table.add_column(name, no_wrap=True)
    table.add_column("counted", overflow="fold")
    for r in rows:
        table.add_row(r["date"][5:10], r["colour"], cell(r["opponent"]),
                      _fmt(r["opponent_rating"]), _fmt(r["opponent_on_scale"]),
                      _fmt(r["result"]), _fmt(r["expected"]), _fmt(r["delta"]),
                      "yes" if r["counted"] else cell(str(r["reason"] or "no")))
    out.print(table)


def _print_now(report: api.ReplayReport) -> None:
    """The replay's last lines: the answer (the FIDE-style rating now, on its scale; with
    several models their median and band), the real FIDE rating and the gap when linked, the
    games counted; then the static conversion, labelled, and why the replay differs."""
    say(out, f"Now: FIDE-style {api.answer_text(report)}; Lichess "
             f"{_fmt(report.current_lichess)}; {api.plural(report.counted, 'game')} counted "
             f"of {len(report.games)}."
             + (" The scales differ: a Lichess 1500 is not a FIDE 1500."
                if report.model is None else ""))
    if report.real:
        real_now = api.real_now(report)
        gap = api.gap_text(report)
        say(out, f"Real FIDE now: {_fmt(real_now)} ({report.real_list or 'given'} list); "
                 + (f"the estimate is {gap}." if gap else "no month to compare yet."))
    conversion = api.conversion_text(report)
    if conversion is not None:
        say(out, conversion + (" The models disagree: read them as a band, not one true "
                               "number." if len(report.conversions) > 1 else ""))


@app.command("replay", short_help="Replay a player's games as monthly FIDE rating periods.",
             epilog=examples(
                 "tracker replay me --perf blitz",
                 "tracker replay me --perf rapid --start-rating 1850 --json",
                 "tracker replay me --perf blitz --csv > periods.csv",
                 "tracker replay me --perf blitz --period 2025-10 --csv > 2025-10.csv"))
def replay_cmd(
    username: Username,
    perf: Annotated[str | None, typer.Option(
        "--perf", help="Perf to replay: bullet, blitz, rapid, classical, correspondence… "
        "Default: the one with the most of the player's games.", show_default=False,
        metavar="PERF")] = None,
    start_rating: Annotated[int | None, typer.Option(
        help="Start from this FIDE rating (your real one). Default: start unrated.",
        metavar="RATING")] = None,
    birth_year: Annotated[int | None, typer.Option(
        help="Birth year, for the junior K 40.", metavar="YYYY")] = None,
    rules: Annotated[str | None, Rules] = None,
    expected: Annotated[str | None, Expected] = None,
    count_provisional: Annotated[bool | None, typer.Option(
        "--count-provisional/--no-count-provisional",
        help="Count games against provisional opponents (rating deviation ≥ 110).",
        show_default=False)] = None,
    scale: Annotated[str | None, Scale] = None,
    start_scale: Annotated[str | None, StartScale] = None,
    chapter: Annotated[str | None, Chapter] = None,
    fide_list: Annotated[str, typer.Option(
        help="With a FIDE id linked: the real list to compare with, standard (what the scale "
        "models estimate), rapid, blitz, or none.", metavar="LIST")] = "standard",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    as_csv: Annotated[bool, typer.Option(
        "--csv", help="Print CSV for a spreadsheet: one row per period (the keys of --json), "
        "or with --period one row per game.")] = False,
    period: Annotated[str | None, typer.Option(
        "--period", help="One month's games (YYYY-MM) instead of the periods, as a table or "
        "with --csv or --json: date, colour, opponent, result, counted or why not, expected, "
        "ΔR.",
        metavar="YYYY-MM")] = None,
) -> api.ReplayReport:
    """Replay a player's games of one perf as monthly FIDE rating periods.

    Settings not given come from the player's saved settings (tracker settings), then the
    defaults: start unrated, rules fide-2025-10, expected table, provisional opponents left out,
    all models on the FIDE scale (lichess where no model covers the perf), FIDE's chapter by
    perf.
    """
    _check_export(as_json, as_csv, period)
    report = api.replay(
        username, perf, db=state.db, start_rating=start_rating, birth_year=birth_year,
        rules=rules, expected=expected, count_provisional=count_provisional, scale=scale,
        start_scale=start_scale, chapter=chapter, fide_list=fide_list,
    )
    if period is not None or as_json or as_csv:
        _print_export(report, period, as_csv, as_json)
        return report
    s = report.settings
    chapter_name = "rapid & blitz" if s.chapter == "rapid-blitz" else "standard"
    say(out, f"{report.player} — {report.perf}: FIDE-style replay {api.start_text(report)}, "
             f"{report.scale_label}, {chapter_name} chapter, rules {s.rules}, "
             f"expected {s.expected}")
    if report.scale_note:
        say(out, f"note: {report.scale_note}")
    if report.banded:
        say(out, "Each month's before, change, after and performance are the models' median "
                 "(K: their range where they differ); lowest and highest: the band.")
    if api.has_half(report):
        say(out, api.HALF_NOTE)
    from rich import box
    from rich.table import Table

    band = report.banded
    real = bool(report.real)
    # A narrow terminal gets the numbers without the notes, in a table with no inner rules.
    wide = out.width >= 140
    table = Table(box=box.HEAVY_HEAD if wide else box.SIMPLE_HEAD, show_edge=wide,
                  padding=(0, 1) if wide else (0, 0))
    names = ["period", "games", "left out" if wide else "out", "score", "expected", "K",
             "before", "change", "after", "perf.", "Lichess"]
    # Narrow, the band's lowest and highest are left out (--json, the dashboard, a wider
    # terminal), so that the rows still fit 80 columns.
    names += ["lowest", "highest"] if band and wide else []
    names += ["FIDE real" if wide else "real", "gap"] if real else []
    for name in names:
        table.add_column(name, no_wrap=True, justify="left" if name == "period" else "right")
    if wide:
        table.add_column("note", overflow="fold")
    for row in report.periods:
        r = row.result
        j = api.period_json(row)
        cells = [r.period, str(r.games), str(sum(row.excluded.values()) or ""),
                 _fmt(j["score"]), _fmt(j["expected_score"]), api.k_text(row),
                 api.rating_text(row.rating_before), _fmt(j["change"]),
                 api.rating_text(row.rating_after), api.rating_text(row.performance),
                 _fmt(row.lichess_rating)]
        if band and wide:
            cells += [_fmt(row.band.min if row.band else None),
                      _fmt(row.band.max if row.band else None)]
        if real:
            cells += [_fmt(row.fide_real), api.rating_text(row.gap)]
        table.add_row(*map(cell, cells), *([cell(row.note)] if wide else []))
    out.print(table)
    if not wide:
        hidden = "notes and the models' lowest and highest" if band else "notes"
        out.print(f"({hidden} per period: widen the terminal, or use --json / the dashboard)",
                  markup=False)
    _print_now(report)
    return report


@app.command("calc", short_help="FIDE Elo calculator: the rating change for a set of games.",
             epilog=examples("tracker calc 1700:1 1600:0.5 1550:0 --rating 1500 --k 20"))
def calc_cmd(
    games: Annotated[list[str], typer.Argument(
        help="Games as OPPONENT:SCORE, e.g. 1700:1 1600:0.5 1550:0 (score 1, 0.5, 1/2, = or 0).",
        metavar="OPP:SCORE...", show_default=False)],
    rating: Annotated[int, typer.Option("--rating", help="Your rating.", show_default=False,
                                        metavar="RATING")],
    k: Annotated[int | None, typer.Option(
        "--k", help="Development coefficient K (40, 20, 10 or any). Default: FIDE's K for an "
        "established adult of that rating (20; 10 from 2400).", show_default=False,
        metavar="K")] = None,
    no_400_rule: Annotated[bool, typer.Option(
        "--no-400-rule", help="Use the real rating difference beyond 400 points.")] = False,
    rules: Annotated[str | None, Rules] = None,
    expected: Annotated[str | None, Expected] = None,
    chapter: Annotated[str | None, typer.Option(
        help="FIDE chapter: standard (the default), or rapid-blitz (no 2650 exemption from the "
        "400-point rule; a game with a difference of 600 or more, one player above 2600, is "
        "not rated).", metavar="CHAPTER")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """FIDE Elo calculator: the rating change for a set of games.

    No database needed. K is reduced by the 700 rule when K × games > 700; the change is shown
    unrounded and the new rating rounded once, half away from zero. Precision: with --expected
    table the expected score is FIDE's table value, exact in hundredths; with --expected
    formula it is the logistic value, shown to 4 decimals (2 would pass 0.3599 off as the
    table's 0.36). Rating changes are in hundredths of a point with either method.
    """
    pairs: list[tuple[int, str]] = []
    for item in games:
        opp, sep, score = item.partition(":")
        if not sep or not opp.strip().isdigit():
            raise ArgumentError(f"{item!r}: write each game as OPPONENT:SCORE, e.g. 1700:1")
        pairs.append((int(opp), score.strip()))
    result = api.calc(rating, k, pairs, cap_400=not no_400_rule, rules=rules, expected=expected,
                      chapter=chapter)
    data = api.calc_json(result)
    if as_json:
        print(api.dumps(data))
        return
    from rich.table import Table

    table = Table("opponent", "score", "expected", "change")
    for g in data["games"]:
        table.add_row(str(g["opponent"]), str(g["score"]),
                      "not rated" if g.get("rated") is False else str(g["expected"]),
                      f"{g['change']:+}")
    out.print(table)
    notes = []
    if result.rule_700_applied:
        notes.append(f"700 rule: K {result.k_requested} × {len(result.games)} games > 700, "
                     f"so K {result.k}")
    if not result.rule_400_applied:
        notes.append("400-point rule not applied")
    if k is None:
        notes.insert(0, api.default_k(rating)[1])
    floor = api.floor_note(result.new_rating)
    if floor is not None:
        notes.append(floor)
    out.print(f"K {result.k}; change {data['change']:+} → new rating {result.new_rating}"
              + (f" ({'; '.join(notes)})" if notes else ""), markup=False)


@app.command("convert", short_help="Convert a Lichess rating to FIDE with the scale models.",
             epilog=examples("tracker convert 1800 --perf blitz",
                             "tracker convert 1800 --perf rapid --scale lebowitz --json"))
def convert_cmd(
    rating: Annotated[int, typer.Argument(help="A Lichess rating.", show_default=False,
                                          metavar="RATING")],
    perf: Annotated[str, typer.Option("--perf", help="Its perf: bullet, blitz, rapid or "
                                      "classical.", show_default=False, metavar="PERF")],
    scale: Annotated[str, typer.Option(help="A model (lebowitz, mathtuition, chessdojo-2024) "
                                       "or all.", metavar="MODEL")] = "all",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Convert a Lichess rating to FIDE with the scale models.

    The published models estimate a FIDE rating (pre-2024 models brought to today's FIDE
    scale). The models disagree: read them as a band."""
    conversions = api.convert(rating, perf, scale)
    notes = {key: api.conversion_note(key, perf, rating) for key in conversions}
    if as_json:
        data = api.conversion_json(conversions)
        for key, note in notes.items():
            data[key]["note"] = note
        print(api.dumps(data))
        return
    for key, c in conversions.items():
        note = notes[key]
        fide = "no FIDE rating" if c.rating is None else f"FIDE {c.rating}"
        raw = ("" if c.output is None or c.output == c.rating or c.rating is None
               else f" (model output {c.output})")
        say(out, f"{key}: Lichess {perf.lower()} {rating} → {fide}{raw}"
                 + (f": {note}" if note else ""))


@app.command("settings", short_help="Show or save a player's replay settings.",
             epilog=examples(
                 "tracker settings me",
                 "tracker settings me --start-rating 1850 --birth-year 2008"))
def settings_cmd(
    username: Username,
    start_rating: Annotated[int | None, typer.Option(
        help="Start the replay from this FIDE rating.", metavar="RATING")] = None,
    unrated: Annotated[bool, typer.Option(
        "--unrated", help="Start the replay unrated (clears --start-rating).")] = False,
    birth_year: Annotated[int | None, typer.Option(help="Birth year (junior K 40).",
                                                   metavar="YYYY")] = None,
    rules: Annotated[str | None, Rules] = None,
    expected: Annotated[str | None, Expected] = None,
    count_provisional: Annotated[bool | None, typer.Option(
        "--count-provisional/--no-count-provisional",
        help="Count games against provisional opponents.", show_default=False)] = None,
    scale: Annotated[str | None, Scale] = None,
    start_scale: Annotated[str | None, StartScale] = None,
    chapter: Annotated[str | None, typer.Option(
        help="Force FIDE's chapter: standard or rapid-blitz; by-perf for the default.",
        metavar="CHAPTER")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show or save a player's replay settings.

    Shared by the CLI and the dashboard. With no option it shows them (defaults where none is
    saved); each option given is saved, and the command says so.
    """
    changes: dict[str, object] = {
        k: v for k, v in {"start_rating": start_rating, "birth_year": birth_year,
                          "rules": rules, "expected": expected,
                          "count_provisional": count_provisional, "scale": scale,
                          "start_scale": start_scale, "chapter": chapter}.items()
        if v is not None
    }
    if chapter == "by-perf":
        changes["chapter"] = None
    if unrated:
        if start_rating is not None:
            raise ArgumentError("give either --start-rating or --unrated, not both")
        changes["start_rating"] = None
    saved = api.settings(username, db=state.db, **changes)
    r = saved.resolved()
    if as_json:  # the values a replay uses: the saved ones, defaults where none is saved
        print(api.dumps({**asdict(r), "chapter": saved.chapter or "by-perf"}))
        return
    said = "saved" if changes else "settings"
    say(out, f"{said} for {username.lower()}: start "
             f"{'unrated' if r.start_rating is None else r.start_rating}"
             f", birth year {r.birth_year or '-'}, rules {r.rules}, expected {r.expected}, "
             f"count provisional {'yes' if r.count_provisional else 'no'}, scale {r.scale}, "
             f"start rating on the {'FIDE' if r.start_scale == 'fide' else 'Lichess'} scale, "
             f"chapter {saved.chapter or 'by perf'}")


@app.command("dashboard", short_help="Serve the dashboard in your browser (127.0.0.1:8501).",
             epilog=examples("tracker --db demo.db dashboard --port 8600",
                             "tracker dashboard --host 0.0.0.0 --read-only"))
def dashboard_cmd(
    port: Annotated[int, typer.Option(help="Port to serve on (1-65535); must be free.",
                                      metavar="PORT")] = 8501,
    host: Annotated[str, typer.Option(help="Address to listen on; 0.0.0.0 exposes the "
                                      "dashboard to your network (with --read-only or "
                                      "--allow-writes).",
                                      metavar="ADDRESS")] = "127.0.0.1",
    read_only: Annotated[bool, typer.Option(
        "--read-only", help="Serve it read-only: no page imports, changes settings or links "
        "a FIDE id, and every page says so (for a club).")] = False,
    allow_writes: Annotated[bool, typer.Option(
        "--allow-writes", help="Serve a writable dashboard beyond this machine (--host); "
        "anyone who reaches it can import and change settings.")] = False,
) -> None:
    """Serve the dashboard in your browser (127.0.0.1:8501).

    Runs the Streamlit app on the database until Ctrl+C; open the URL it prints. It listens
    on 127.0.0.1 only unless --host says otherwise; an address beyond this machine needs
    --read-only (the club looks, nobody writes) or --allow-writes (with a warning)."""
    # The process becomes the server: a SIGTERM or Ctrl+C sent to it stops the server itself.
    raise typer.Exit(api.dashboard(db=state.db, port=port, host=host,
                                   replace_process=True, read_only=read_only,
                                   allow_writes=allow_writes))


@app.command("demo", short_help="Import, list and replay the bundled sample history.",
             epilog=examples("tracker --db demo.db demo"))
def demo_cmd(
    dashboard: Annotated[bool, typer.Option(help="Open the dashboard at the end.")] = False,
) -> None:
    """Import, list and replay the bundled sample history.

    The sample is a real Lichess history (indexinator, 2,907 games, and his next 10, 9 with
    Lichess's evals: the strength pages show them); its blitz games are replayed as FIDE
    rating periods."""
    summary = api.demo(db=state.db)
    say(out, summary.line())
    players_cmd(as_json=False)
    report = replay_cmd(api.DEMO_USER, perf="blitz")
    say(out, "")
    say(out, "Next, from this folder: the raw Lichess numbers' replay, today's Lichess rating "
             "through each model, the level his analysed games show, the dashboard:")
    for line in next_commands(state.db, report.current_lichess):
        say(out, f"  {line}")
    if dashboard:
        dashboard_cmd(port=8501, host="127.0.0.1")


def self_command() -> str:
    """How this ``tracker`` was run, to print commands that work as printed: its path
    relative to the current folder (``.venv/bin/tracker``) when it is not the ``tracker`` on
    the PATH, else ``tracker``."""
    argv0 = Path(sys.argv[0])
    if argv0.name != "tracker":
        return "tracker"
    found = shutil.which("tracker")
    if found is not None and Path(found).resolve() == argv0.resolve():
        return "tracker"
    try:
        return str(argv0.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(argv0.resolve())


def next_commands(db: str | None, lichess: int | None) -> list[str]:
    """The commands ``tracker demo`` ends with: the same tracker, the same database;
    ``lichess``, the demo player's blitz rating now as the replay says it (its convert line
    is left out without one)."""
    base = self_command() + (f" --db {shlex.quote(db)}" if db else "")
    user = api.DEMO_USER
    convert = [] if lichess is None else [f"{base} convert {lichess} --perf blitz"]
    return [f"{base} replay {user} --perf blitz --scale lichess", *convert,
            f"{base} strength {user} --perf blitz", f"{base} dashboard"]


# Every command module has one sub-app, added here the one way: merged (its commands at the
# top) or under its name (tracker fide …, tracker group …), in the order --help lists them.
for sub in (sync.app, strength.app):
    app.add_typer(sub)
app.add_typer(fide.app, name="fide")
app.add_typer(groups.group_app, name="group")


def db_anywhere(args: list[str]) -> list[str]:
    """``args`` with every ``--db URL`` / ``--db=URL`` moved before the command, so the option
    works in both places (``tracker import-file x.pgn --db other.db``). After ``--`` nothing
    is moved."""
    moved: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i:])
            break
        if arg == "--db" and i + 1 < len(args):
            moved += args[i:i + 2]
            i += 2
            continue
        if arg.startswith("--db="):
            moved.append(arg)
        else:
            rest.append(arg)
        i += 1
    return moved + rest


def plain_help(command: Any) -> Any:
    """Help written for people, not as the library's internals: arguments as ``FILE...`` and
    ``USERNAME`` (not ``{FILE...}...`` or ``username <str>``), and no ``<int>`` type tags.

    typer renders an argument's Python type and braces in the usage line; this sets, on each
    argument object, the names people expect (as ``git``, ``gh`` or ``sqlite-utils`` show).
    """
    # ``command`` is typer's own (vendored) click Command or Group, hence Any.
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)
    for param in command.params:
        if getattr(param, "param_type_name", "") != "argument":
            continue
        name = (param.metavar or (param.name or "").upper()).removesuffix("...")
        many = param.nargs != 1
        label = name + ("..." if many else "")
        usage = label if param.required else f"[{label}]"
        # Instance attributes shadow typer's methods for this parameter only.
        param._usage_display_name = lambda usage=usage: usage
        param._rich_display_name = lambda label=label: label
        param.display_type_rich = lambda ctx: None
        param.display_type = lambda ctx: None
    return command


def _converter(annotation: Any) -> Callable[[Any], Any] | None:
    """A direct conversion for a plain annotation (str, int, bool, Path, an optional or a list
    of those), or ``None`` for anything else."""
    if annotation in (str, bool, Path):
        same: Callable[[Any], Any] = annotation  # the type converts its own values
        return same
    if annotation is int:
        def to_int(value: Any) -> int:
            try:
                return int(value)
            except (TypeError, ValueError):
                raise typer.BadParameter(f"{value!r} is not a whole number.") from None
        return to_int
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) is list and len(args) == 1:
        item = _converter(args[0])
        return None if item is None else (lambda values: [item(v) for v in values])
    if type(None) in get_args(annotation) and len(args) == 1:
        return _converter(args[0])
    return None


class _Direct:
    """A parameter's values converted directly (see :func:`fast_coercion`): what typer's own
    coercion does for a plain type (None stays None, or ``()`` for a list; a lone string is no
    list), without a pydantic TypeAdapter."""

    def __init__(self, convert: Callable[[Any], Any]) -> None:
        self.convert = convert

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        many = param.multiple or param.nargs == -1
        if value is None:
            return () if many else None
        if many and isinstance(value, str):
            raise typer.BadParameter("Value must be an iterable.", ctx=ctx, param=param)
        return self.convert(value)


def fast_coercion(command: Any) -> Any:
    """Convert plain option values directly instead of through pydantic.

    typer (0.2x) builds a pydantic TypeAdapter for a parameter when it first gets a value
    (``get_runtime_param``, "lazy to avoid up-front costs"): importing pydantic and building
    the schemas costs ~0.1 s, a third of ``tracker calc``'s start-up. Every parameter here is a
    plain str, int, bool or Path (or an optional or list of one), which a direct conversion
    handles the same way; each such parameter object answers ``get_runtime_param`` with one
    (an attribute of the instance, through the parameter's public method: no module of typer
    is imported or changed). Parameters of any other type, and a typer whose parameters have
    no ``type_descriptor``, are left as they are. A bool flag never gets this far: typer
    passes a flag's bool through unconverted (so ``--help`` loads nothing either).
    """
    for sub in getattr(command, "commands", {}).values():
        fast_coercion(sub)
    for param in command.params:
        _direct(param)
    # --help is made when the command runs (click's get_help_option), not listed in its params;
    # unset, its value is None, which typer would coerce.
    make_help = command.get_help_option
    command.get_help_option = lambda ctx: _direct(make_help(ctx))
    return command


def _direct(param: Any) -> Any:
    """``param`` answering ``get_runtime_param`` with a :class:`_Direct` conversion, when its
    annotation is a plain one (see :func:`fast_coercion`)."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or getattr(descriptor, "file_annotation", None) is not None:
        return param
    convert = _converter(getattr(descriptor, "annotation", None))
    if convert is not None and hasattr(param, "get_runtime_param"):
        direct = _Direct(convert)
        param.get_runtime_param = lambda: direct
    return param


def _terminate(_signum: int, _frame: object) -> None:
    raise Terminated


def main() -> None:
    """Console entry point: user errors become one line on stderr and a non-zero exit.

    SIGTERM is handled as Ctrl+C is (what was kept is said, the run is recorded as partial),
    with exit code 143 instead of 130.
    """
    signal.signal(signal.SIGTERM, _terminate)
    api.allow_collector_pauses()  # a short-lived process: its imports and replays may pause gc
    try:
        command = fast_coercion(plain_help(typer.main.get_command(app)))
        command.main(args=db_anywhere(sys.argv[1:]), prog_name="tracker")
    except TrackerError as exc:
        message = str(exc)
        if isinstance(exc, ReadOnlyError) and api.read_only_mode():
            # The user's own shell set $TRACKER_READ_ONLY: name the variable to unset.
            action = message.split(" is not allowed", 1)[0]
            message = f"{action} is not allowed: {api.READ_ONLY_ENV_HINT}"
        say(err, f"error: {message}")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt as exc:
        stopped = isinstance(exc, Terminated)
        say(err, f"{'terminated' if stopped else 'interrupted'}: what was imported so far is "
                 "kept; run again to resume")
        sys.exit(EXIT_TERMINATED if stopped else EXIT_INTERRUPTED)
    except SystemExit as exc:
        interrupt = _unhandled_interrupt(exc)
        if interrupt is None:
            raise
        stopped = isinstance(interrupt, Terminated)
        say(err, f"{'terminated' if stopped else 'interrupted'}: stopped before it finished")
        sys.exit(EXIT_TERMINATED if stopped else EXIT_INTERRUPTED)


def _unhandled_interrupt(exc: SystemExit) -> KeyboardInterrupt | None:
    """The Ctrl+C or SIGTERM that typer turned into a silent exit 130 (a command that does
    not handle it itself, as imports do: ``fide link``…), or ``None``."""
    cause = exc.__context__.__cause__ if exc.__context__ is not None else None
    return cause if isinstance(cause, KeyboardInterrupt) else None


if __name__ == "__main__":
    main()
