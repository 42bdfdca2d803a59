"""``tracker group …`` and ``tracker sync``: thin wrappers over :mod:`tracker.api` (its groups
functions live in ``tracker/api/groups.py``). The ``--db`` option is read from the root
command's parameters, so this module needs nothing of :mod:`tracker.cli.commands`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from tracker import api
from tracker.cli import group_show
from tracker.cli.text import cell, err, examples, out, root_db, say

group_app = typer.Typer(
    help="Groups of players (a club, a coach's students): create, add, remove, list.",
    short_help="Groups of players: create, add members (or a roster CSV), list.",
    epilog=examples("tracker group create club", "tracker group add club alice bob "
                    "--fide alice=35009192", "tracker group add club --from roster.csv"),
    no_args_is_help=True,
    rich_markup_mode=None,
)


group_app.add_typer(group_show.app)  # tracker group show

Name = Annotated[str, typer.Argument(help="The group's name.", show_default=False,
                                     metavar="NAME")]


@group_app.command("create", short_help="Create an empty group.",
                   epilog=examples("tracker group create club"))
def group_create_cmd(ctx: typer.Context, name: Name) -> None:
    """Create an empty group (exit code 1 if the name is taken)."""
    g = api.group_create(name, db=root_db(ctx))
    say(out, f"group {g.name} created: add members with tracker group add {g.name} USER…")


@group_app.command("add", short_help="Add players to a group (usernames or a roster CSV).",
                   epilog=examples("tracker group add club alice bob",
                                   "tracker group add club alice --fide alice=35009192",
                                   "tracker group add club --from roster.csv"))
def group_add_cmd(
    ctx: typer.Context,
    name: Name,
    users: Annotated[list[str] | None, typer.Argument(
        help="Lichess usernames.", show_default=False, metavar="USER")] = None,
    fide: Annotated[list[str] | None, typer.Option(
        "--fide", help="A member's FIDE id, linked at the next sync (repeatable).",
        metavar="USER=ID")] = None,
    from_csv: Annotated[str | None, typer.Option(
        "--from", help="A roster CSV: columns username and optional fide_id (a header row "
        "is optional).", metavar="FILE")] = None,
) -> None:
    """Add players to a group: usernames, --fide USER=ID, or a roster CSV.

    No network: `tracker sync --group NAME` imports the members' games and links their FIDE
    ids. A bad row or username is one line on stderr and the rest is added (exit code 1)."""
    pairs = api.parse_fide_pairs(fide or [])
    result = api.group_add(name, users or [], fide=pairs, from_csv=from_csv, db=root_db(ctx))
    for line in result.bad:
        say(err, f"skipped {line}")
    say(out, f"group {result.group}: {len(result.added)} added, {len(result.already)} "
             f"already there, {len(result.bad)} bad")
    if result.bad:
        raise typer.Exit(1)


@group_app.command("remove", short_help="Take players out of a group.",
                   epilog=examples("tracker group remove club bob"))
def group_remove_cmd(
    ctx: typer.Context,
    name: Name,
    users: Annotated[list[str], typer.Argument(help="Lichess usernames.", show_default=False,
                                               metavar="USER")],
) -> None:
    """Take players out of a group; their games and FIDE links stay."""
    result = api.group_remove(name, users, db=root_db(ctx))
    for u in result.not_members:
        say(err, f"{u} is not a member of {result.group}")
    say(out, f"group {result.group}: {len(result.removed)} removed")
    if result.not_members:
        raise typer.Exit(1)


@group_app.command("list", short_help="List the groups and their member counts.",
                   epilog=examples("tracker group list"))
def group_list_cmd(ctx: typer.Context) -> None:
    """List the groups, their member counts and creation dates (UTC)."""
    groups = api.group_list(db=root_db(ctx))
    if not groups:
        out.print("No groups yet: tracker group create NAME")
        return
    from rich.table import Table

    table = Table("group", "members", "created", title="Groups")
    for g in groups:
        created = datetime.fromtimestamp(g.created_at_ms / 1000, tz=UTC).strftime("%Y-%m-%d")
        table.add_row(cell(g.name), str(g.members), created)
    out.print(table)


def _gap(x: float | None) -> str:
    """A signed gap in whole points (``+36``, ``0``, ``-12``; ``-`` for none)."""
    if x is None:
        return "-"
    text = f"{x:+.0f}"
    return "0" if text in ("+0", "-0") else text


@group_app.command("calibrate", short_help="Measure the scale models on the members with a "
                   "FIDE rating; fit a club model.",
                   epilog=examples("tracker group calibrate club --perf blitz",
                                   "tracker replay alice --perf blitz --scale club:club"))
def group_calibrate_cmd(
    ctx: typer.Context,
    name: Name,
    perf: Annotated[str, typer.Option("--perf", help="The perf (blitz, rapid, …).",
                                      metavar="PERF")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (with the data).")
                       ] = False,
) -> None:
    """Measure the scale models on the members with a FIDE rating; fit a club model.

    Uses every member with a linked FIDE id (tracker sync --group NAME first): each month
    since 2024-03 with both a Lichess rating in the perf and a FIDE standard rating. Each
    published model's signed and absolute mean gap (model − real, mean over members); a club
    line FIDE = a + b × Lichess fitted by least absolute deviations, with its leave-one-out
    error, stored for --scale club:NAME. Refused below 8 such members (exit code 1)."""
    c = api.group_calibrate(name, perf, db=root_db(ctx))
    if as_json:
        print(api.dumps(api.calibration_json(c)))
    else:
        _print_calibration(c)
    if c.refused:
        if not as_json:
            say(err, f"no club model: {c.refused}")
        raise typer.Exit(1)


def _print_calibration(c: api.Calibration) -> None:
    from rich import box
    from rich.table import Table

    say(out, f"group {c.group}, {c.perf}: {c.members} members, {c.linked} with a FIDE id "
             f"linked, {c.used} with ratings in the same months ({len(c.data)} member-months)")
    for line in c.left_out:
        say(out, f"  left out: {line}")
    # "unrated" alone read as a count of members beside "members": it counts member-months.
    table = Table("model", "signed gap", "mean |gap|", "members", "months left out",
                  box=box.SIMPLE_HEAD,
                  title="model − real FIDE standard, rating points (mean over members); "
                        "months left out: member-months the model cannot place")
    rows = [*c.gaps, *([c.club_gap] if c.club_gap else [])]
    for g in rows:
        table.add_row(cell(g.key), _gap(g.signed), "-" if g.mean_abs is None else
                      f"{g.mean_abs:.0f}", str(g.members), str(g.unrated))
    out.print(table)
    f = c.club
    if f is not None:
        lo, hi = f.lichess_range
        say(out, f"club model: FIDE = {f.intercept} + {f.slope} × Lichess {c.perf} "
                 f"(n={f.n} members, {f.points} member-months, Lichess {lo}–{hi}); "
                 f"leave-one-out mean error {f.loo_mae:.0f}, in-sample {f.mae:.0f}")
        say(out, f"stored: tracker replay USER --perf {c.perf} --scale club:{c.group}")
