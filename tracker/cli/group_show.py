"""``tracker group show NAME [--perf P] [--sort KEY] [--json | --csv]``: the group table, a
thin wrapper over :func:`tracker.api.group_table` (merged into ``tracker group``)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from tracker import api
from tracker.api import ArgumentError
from tracker.cli.text import cell, examples, out, root_db, say

#: ``tracker group show``, merged into ``tracker group`` by :mod:`tracker.cli.groups`.
app = typer.Typer(rich_markup_mode=None)


def _n(x: Any, signed: bool = False) -> str:
    """A figure for the terminal: ``—`` when missing, whole as FIDE publishes it (a median's
    half rounded up, said once under the table), ``+`` on positive changes."""
    return api.rating_text(x, "—", signed=signed)


@app.command("show", short_help="The group's table: each member's FIDE rating now.",
                   epilog=examples("tracker group show club --perf blitz",
                                   "tracker group show club --sort gap --csv > club.csv"))
def group_show_cmd(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The group's name.", show_default=False,
                                        metavar="NAME")],
    perf: Annotated[str, typer.Option(help="The perf: bullet, blitz, rapid, classical or "
                                      "correspondence.", metavar="PERF")] = "blitz",
    sort: Annotated[str, typer.Option(help="Sort by fide (default), club, real, gap, "
                                      "lichess, games, change or name.",
                                      metavar="KEY")] = "fide",
    reverse: Annotated[bool, typer.Option(
        "--reverse", help="The other way round (lowest first; names Z first).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV (a header row).")] = False,
) -> None:
    """The group's table: per member the hypothetical FIDE rating now (the scale models'
    median and band), the rating through the group's club model when it has one (group
    calibrate), the real FIDE rating (standard list) and the gap, the Lichess rating, rated
    games in the last 30 days, the change over the last 3 months and the level shown in
    analysed games. A member without figures says why. On a narrow terminal the band and the
    level are left out (--json and --csv have every column)."""
    if as_json and as_csv:
        raise ArgumentError("--json and --csv: give one")
    if sort not in api.SORT_KEYS:
        raise ArgumentError(f"unknown sort key {sort!r}: use one of {', '.join(api.SORT_KEYS)}")
    table = api.group_table(name, perf, db=root_db(ctx))
    descending = (sort != "name") != reverse  # highest first, names A first
    if as_json:
        print(api.dumps(api.group_table_json(table, sort, descending=descending)))
        return
    if as_csv:
        print(api.group_table_csv(table, sort, descending=descending), end="")
        return
    from rich import box
    from rich.table import Table

    club = f"; club: {table.club}" if table.club else ""
    # A narrow terminal (80 columns) gets every figure whole, without the band and the level
    # (--json, --csv, a wider terminal) and with the notes under the table: squeezed, the gap
    # and club columns were drawn empty and the Lichess ratings cut to "24…".
    wide = out.width >= 150
    grid = Table(title=f"{table.group} — {table.perf}, as of {table.as_of} (FIDE-style: "
                       f"{table.scale_words}{club})",
                 box=box.HEAVY_HEAD if wide else box.SIMPLE_HEAD, show_edge=wide,
                 padding=(0, 1) if wide else (0, 0, 0, 1), pad_edge=wide)
    level = f"level (Lichess {table.perf})"
    band_shown = wide and table.banded  # one model: its rating, no band of one value
    columns = ["player", "FIDE-style", *(["band"] if band_shown else []),
               *(["club"] if table.club else []), "real FIDE", "gap", "Lichess", "30 days",
               "3 months", *([level, "note"] if wide else [])]
    for col in columns:
        folds = col in ("player", "note")
        grid.add_column(col, justify="left" if col in ("player", level, "note") else "right",
                        overflow="fold" if folds else "ellipsis", no_wrap=not folds,
                        min_width=None if folds else len(col))
    rows = api.sort_rows(table.rows, sort, descending=descending)
    for r in rows:
        band = f"{r.fide_low}–{r.fide_high}" if r.fide_low is not None else "—"
        grid.add_row(*map(cell, (
            r.username, _n(r.fide), *([band] if band_shown else []),
            *([_n(r.club)] if table.club else []),
            _n(r.real_fide), _n(r.gap, True), _n(r.lichess), str(r.recent_games),
            "no games" if r.games_3m == 0 else _n(r.change, True),
            *([r.level or api.NOT_ANALYSED, r.note or ""] if wide else []))))
    out.print(grid)
    say(out, "FIDE-style: what FIDE's rules make of the games on the FIDE scale (estimates); "
             "real FIDE: the standard list; gap = FIDE-style − real. " + api.HALF_NOTE)
    if not wide:
        for r in rows:
            if r.note:
                say(out, f"{r.username}: {r.note}")
        hidden = "the band and the level shown" if table.banded else "the level shown"
        out.print(f"({hidden}: widen the terminal, or use --json / --csv)", markup=False)
