"""``tracker analyse`` and ``tracker strength``: thin wrappers over :mod:`tracker.api`, on
this module's sub-app :data:`app` (merged into the ``tracker`` app by
:mod:`tracker.cli.commands`, as every command module is)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from tracker import api
from tracker.api import InterruptedRun, Terminated
from tracker.cli.text import err, examples, out, root_db, say

if TYPE_CHECKING:
    from tracker.api import AnalyseSummary, GameStrength, PlayerStrength, SetLevel

EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
#: Games listed by ``tracker strength`` without ``--games``.
SHOWN_GAMES = 20
#: Said beside counts computed from the evals (the file carried no judgments).
COMPUTED = " (computed from the evals by Lichess's thresholds: the file carried no judgments)"
#: Marks a listed game's level that has a note of its own (said under the table).
NOTED = "†"


def _progress(err: Console) -> tuple[Any, Callable[[int, int], None]]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    progress = Progress(TextColumn("[bold]analysing"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("games"), TextColumn("{task.fields[rate]}"),
                        TimeElapsedColumn(), TimeRemainingColumn(), console=err,
                        transient=True, disable=not err.is_terminal)
    task = progress.add_task("analyse", total=None, rate="")
    started = datetime.now(UTC)

    def callback(done: int, total: int) -> None:
        secs = (datetime.now(UTC) - started).total_seconds() or 1e-9
        progress.update(task, completed=done, total=total,
                        rate=f"{done / secs:.2f} games/s" if done else "")

    return progress, callback


def _level(level: Any) -> str:
    if level is None:
        return "-"
    return f"{level.estimate} ({level.low}–{level.high})"


def _point(point: Any, game: GameStrength | None = None) -> str:
    if point is None:
        return "-"
    text = f"{point.notation} {point.win_before:.0f}→{point.win_after:.0f}%"
    if game is not None:
        best = game.best_san(point.ply)
        if best and best != point.san:
            text += f", {best} was better"
    return text


def _print_sets(report: PlayerStrength, games: int) -> None:
    """The months' levels and the last games' level together, each with what it alone needs
    said (the model weak there, outside its fitted range, local evals): the note every level
    shares is said once above."""
    from rich import box
    from rich.table import Table

    noted = [report.own_note(m.level) for m in report.months]
    months = Table("month", "games", "level shown", "estimate, FIDE scale",
                   *(["note"] if any(noted) else []), box=box.SIMPLE_HEAD)
    for m, own in zip(report.months, noted, strict=True):
        months.add_row(m.label, str(m.games), _level(m.level), _fide(m),
                       *([own or ""] if any(noted) else []))
    out.print(months)
    scales = sorted({f.scale for m in report.months for f in m.fide if f.estimate is not None})
    if len(scales) > 1:
        say(out, f"estimate, FIDE scale: the level's estimate through each scale model "
                 f"({', '.join(scales)}), lowest–highest: the models' spread, not a range; in "
                 "brackets the level's 10–90 % range through them, lowest to highest")
    recent = report.recent.level
    extra = report.own_note(recent)  # what all levels share is said once above
    together = report.recent.games or min(games, api.RECENT_GAMES)  # the games it reads
    say(out, ("last game: " if together == 1 else f"last {together} games together: ")
             + _level(recent) + (f" ({extra})" if extra else ""))
    raw = report.recent_uncalibrated()
    if raw:
        say(out, f"({raw})")
    apart = report.recent_apart()
    if apart is not None:
        # From the set fit's games on, a fit of their own; fewer: their scores averaged.
        by_fit = report.set_games is not None and together >= report.set_games
        say(out, "(games read together, "
                 + ("by a fit of their own" if by_fit else "their scores averaged and read as one")
                 + f": not the mean of the single games' levels ({apart}), each of which leans "
                 "toward the typical player, one game saying little)")


def _print_player(report: PlayerStrength, shown: int) -> None:
    from rich import box
    from rich.table import Table

    games = len(report.games)
    say(out, f"{report.player} — {report.perf}: {games} analysed game"
                 f"{'s' if games != 1 else ''}; levels on the Lichess "
                 f"{report.scale or report.perf} scale, "
                 f"10–90 % range, model {report.model or '-'}")
    if report.note:
        say(out, f"note: {report.note}")
    _print_sets(report, games)
    table = Table("date", "colour", "rating", "accuracy", "ACPL", "?!/?/??", "level shown",
                  "turning point", box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False)
    listed = [g for g, _ in report.games[:shown]]
    engines = sorted({g.engine or "local engine" for g in listed if g.source == "engine"})
    mixed = bool(engines) and any(g.source != "engine" for g in listed)
    footnotes: list[str] = []
    for g, color in report.games[:shown]:
        s = g.side(color)
        own = report.own_note(s.level)
        if own:
            footnotes.append(f"{NOTED} {g.played_at:%Y-%m-%d} {g.id}: {own}")
        local = g.source == "engine" and mixed
        table.add_row(g.played_at.strftime("%Y-%m-%d") + ("°" if local else ""), color,
                      str(s.rating or "-"),
                      (f"- ({g.coverage_text})" if not g.covered else
                       "-" if s.accuracy is None else f"{s.accuracy}%"),
                      "-" if s.acpl is None else str(s.acpl),
                      f"{s.inaccuracy}/{s.mistake}/{s.blunder}{'*' if s.counts_computed else ''}",
                      _level(s.level) + (f" {NOTED}" if own else ""),
                      _point(s.turning_point))
    if shown:  # --games 0: no per-game table (not an empty header)
        out.print(table)
        say(out, _evals_line(engines, mixed))
        for line in footnotes:
            say(out, line)
    if any(g.side(c).counts_computed for g, c in report.games[:shown]):
        say(out, f"* ?!/?/??{COMPUTED}")
    if report.partial:
        say(out, f"{report.partial} game{'s' if report.partial != 1 else ''} with evals "
                 "for part of the plies only: no accuracy, ACPL or level, and left out of "
                 "the levels above")
    if games > shown:
        say(out, f"{shown} newest of {games} games shown (--games N for more)"
                 + ("; the rating is the player's Lichess rating, for comparison: the level "
                    "never reads it" if shown else ""))


def _evals_line(engines: Sequence[str], mixed: bool) -> str:
    """Whose evals the games of the table carry (a game's own line: ``strength --game``)."""
    if not engines:
        return "evals: Lichess's server analysis, every game above"
    if mixed:
        return f"° evals from {'; '.join(engines)}; the others' from Lichess's server analysis"
    return f"evals: {'; '.join(engines)}, every game above"


def _say_unreadable(lines: Sequence[str]) -> None:
    """One line on stderr a game whose moves cannot be read."""
    for line in lines:
        say(err, f"{line}: not analysed")


def _fide(m: SetLevel) -> str:
    """The level's estimate on the FIDE scale (several models: lowest–highest) and, in
    brackets, its 10–90 % range through them (the lowest low to the highest high; "unrated"
    where a model leaves that end unrated): never an estimate without its range."""
    values = [f.estimate for f in m.fide if f.estimate is not None]
    if not values:
        return "-"
    estimate = (f"{min(values)}–{max(values)}" if min(values) != max(values)
                else str(values[0]))
    lows = [f.low for f in m.fide if f.estimate is not None]
    highs = [f.high for f in m.fide if f.estimate is not None]
    low = "unrated" if None in lows else str(min(x for x in lows if x is not None))
    high = "unrated" if all(x is None for x in highs) else str(
        max(x for x in highs if x is not None))
    return f"{estimate} ({low}–{high})"


def _print_game(g: GameStrength) -> None:
    source = g.engine or "Lichess's server analysis"
    say(out, f"{g.id} ({g.perf or '?'}, {g.played_at:%Y-%m-%d}), evals: {source}, "
             f"{g.coverage_text}"
             + ("" if g.covered else " (partial: no accuracy, ACPL or level)"))
    for color in ("white", "black"):
        s = g.side(color)
        acc = "-" if s.accuracy is None else f"{s.accuracy}%"
        say(out, f"{color:5} {s.name or s.user_id or '?'} ({s.rating or '?'}): accuracy "
                     f"{acc}, ACPL {s.acpl if s.acpl is not None else '-'}, "
                     f"{api.plural(s.inaccuracy, 'inaccuracy')}, "
                     f"{api.plural(s.mistake, 'mistake')}, {api.plural(s.blunder, 'blunder')}"
                     f"{COMPUTED if s.counts_computed else ''}; level shown "
                     f"{_level(s.level)}; turning point {_point(s.turning_point, g)}")
        if s.level is not None and s.level.note:  # what the dashboard shows beside it
            say(out, f"{'':5} {color}'s level: {s.level.note}")
    turn = g.turn
    say(out, f"the game: {turn.label}")


def _summary_dict(s: AnalyseSummary) -> dict[str, Any]:
    return {"player": s.player, "perf": s.perf, "status": s.status, "games": s.asked,
            "had_evals": s.had_evals, "found": s.found, "analysed": s.analysed,
            "skipped": s.skipped, "engine": s.engine, "nodes": s.nodes, "jobs": s.jobs,
            "seconds": round(s.seconds, 2), "message": s.message,
            "uncalibrated": s.uncalibrated}


#: ``tracker analyse`` and ``tracker strength``, merged into the ``tracker`` app.
app = typer.Typer(rich_markup_mode=None)



@app.command("analyse", short_help="Analyse a player's games with a local engine.",
             epilog=examples("tracker analyse me --perf blitz --last 100 --jobs 2",
                             "tracker analyse me --since 2025-01-01 --nodes 200000",
                             "tracker analyse --group club --perf blitz",
                             "tracker --db postgresql://club@server/club analyse "
                             "--group club --worker --jobs 2"))
def analyse_cmd(
    ctx: typer.Context,
    username: Annotated[str | None, typer.Argument(
        help="The player (Lichess username); or --group NAME.", show_default=False,
        metavar="USERNAME")] = None,
    group: Annotated[str | None, typer.Option(
        "--group", help="Every member's games instead of one player's, newest first.",
        metavar="NAME")] = None,
    worker: Annotated[bool, typer.Option(
        "--worker", help="Work beside other workers on one PostgreSQL database: each "
        "game analysed once, by whichever worker claims it; runs until none is left.")
                      ] = False,
    lease: Annotated[float | None, typer.Option(
        "--lease", help="With --worker: seconds a claim on a game lasts unrenewed (a "
        "dead worker's game is claimed again after it). Default 60.",
        metavar="SECONDS")] = None,
    perf: Annotated[str | None, typer.Option("--perf", help="Only this perf (blitz, "
                                             "rapid, …). Default: every perf.",
                                             metavar="PERF")] = None,
    last: Annotated[int | None, typer.Option("--last", help="Only the N most recent "
                                             "games.", metavar="N")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Only games started on or "
                                              "after this day (YYYY-MM-DD).",
                                              metavar="DATE")] = None,
    nodes: Annotated[int | None, typer.Option(
        "--nodes", help=f"Nodes searched per position (default {api.default_nodes():,}).",
        metavar="N")] = None,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", help="Engine processes at once (default: one per core this process may "
        "use).", metavar="N")] = None,
    engine: Annotated[str | None, typer.Option(
        "--engine", help="A UCI engine's path. Default: $TRACKER_ENGINE, else Stockfish.",
        metavar="PATH")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")
                       ] = False,
) -> None:
    """Analyse a player's games that have no evals with a local engine (Stockfish).

    A fixed node budget per position, one engine process per job. Every finished game is
    stored at once: Ctrl+C or SIGTERM keeps them, and the same command goes on with the
    rest. Games Lichess analysed are never analysed again. With --group, every member's
    games, newest first. With --worker (PostgreSQL only), one of many workers on as many
    machines, each game analysed once: it prints a line per game it finished and runs
    until no game is left. Exit code 0 when every game asked for is analysed, 1 when the
    run stopped early or found no game to analyse (a perf without games, a --since after
    the last), 130 after Ctrl+C, 143 after SIGTERM."""
    api.check_analyse_args(nodes, jobs, lease)
    progress, callback = _progress(err)

    def on_game(game_id: str, what: str) -> None:
        """A worker's log on stdout, one line a game (above the bar on a terminal)."""
        print(f"{game_id} {what}", flush=True)

    try:
        with progress:
            summary = api.analyse(username, db=root_db(ctx), perf=perf, last=last, since=since,
                                  nodes=nodes, jobs=jobs, engine=engine, progress=callback,
                                  group=group, worker=worker, lease=lease,
                                  on_game=on_game if worker and not as_json else None)
    except KeyboardInterrupt as exc:
        kept = exc.summary if isinstance(exc, InterruptedRun) else None
        stopped = isinstance(exc, Terminated)
        if kept is not None:
            _say_unreadable(getattr(kept, "unreadable", ()))  # an AnalyseSummary's
            say(err, kept.line())
        say(err, f"{'terminated' if stopped else 'interrupted'}: every finished game "
                     "is kept; run the same command again to go on")
        raise typer.Exit(EXIT_TERMINATED if stopped else EXIT_INTERRUPTED) from None
    _say_unreadable(summary.unreadable)
    if as_json:
        out.print_json(json.dumps(_summary_dict(summary)))
    else:
        say(out, summary.line())
    if summary.status != "complete" or summary.asked == 0:
        raise typer.Exit(1)  # stopped early, or nothing to analyse: one rule with replay

@app.command("strength", short_help="What a player's analysed games show: accuracy, "
             "ACPL, level, turning points.",
             epilog=examples("tracker strength me --perf rapid",
                               "tracker strength me --perf rapid --json",
                               "tracker strength --game q7ZvsdUF"))
def strength_cmd(
    ctx: typer.Context,
    username: Annotated[str | None, typer.Argument(help="The player (Lichess username).",
                                                   show_default=False,
                                                   metavar="USERNAME")] = None,
    perf: Annotated[str | None, typer.Option("--perf", help="The perf. Default: the one "
                                             "with the most analysed games.",
                                             metavar="PERF")] = None,
    game: Annotated[str | None, typer.Option("--game", help="One game, both sides.",
                                             metavar="ID")] = None,
    games: Annotated[int, typer.Option("--games", help="Games listed (newest first).",
                                       metavar="N")] = SHOWN_GAMES,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")
                       ] = False,
) -> None:
    """What a player's analysed games show, from their evals: per game Lichess's
    accuracy, ACPL and inaccuracy/mistake/blunder counts, the level the game shows (an
    estimate and a 10–90 % range on the Lichess scale, from the moves alone: never a
    rating) and the turning point; per month, and for the last 20 games, the level the
    games show together. With --game, both sides of one game."""
    if (username is None) == (game is None):
        raise api.ArgumentError("give a USERNAME or --game ID (one of them)")
    if games < 0:
        raise api.ArgumentError(f"--games must be 0 or more, got {games}")
    if game is not None:
        one = api.strength_game(game, db=root_db(ctx))
        if as_json:
            print(api.dumps(api.strength_game_json(one)))
        else:
            _print_game(one)
        return
    assert username is not None
    report = api.strength(username, db=root_db(ctx), perf=perf)
    if as_json:
        print(api.dumps(api.strength_json(report)))
    else:
        _print_player(report, games)
