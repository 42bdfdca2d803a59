"""``tracker group …`` and ``tracker sync``: thin wrappers over :mod:`tracker.api` (its groups
functions live in ``tracker/api/groups.py``). The ``--db`` option is read from the root
command's parameters, so this module needs nothing of :mod:`tracker.cli.commands`.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from tracker import api
from tracker.cli.text import cell, err, examples, out, say

group_app = typer.Typer(
    help="Groups of players (a club, a coach's students): create, add, remove, list.",
    short_help="Groups of players: create, add members (or a roster CSV), list.",
    epilog=examples("tracker group create club", "tracker group add club alice bob "
                    "--fide alice=35009192", "tracker group add club --from roster.csv"),
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _db(ctx: typer.Context) -> str | None:
    """The root command's ``--db`` (``None``: ``$TRACKER_DB`` or the default)."""
    db = ctx.find_root().params.get("db")
    return db if isinstance(db, str) else None


Name = Annotated[str, typer.Argument(help="The group's name.", show_default=False,
                                     metavar="NAME")]


@group_app.command("create", short_help="Create an empty group.",
                   epilog=examples("tracker group create club"))
def group_create_cmd(ctx: typer.Context, name: Name) -> None:
    """Create an empty group (exit code 1 if the name is taken)."""
    g = api.group_create(name, db=_db(ctx))
    say(out, f"group {g.name} created: add members with tracker group add {g.name} USER…")


@group_app.command("add", short_help="Add players to a group (usernames or a roster CSV).",
                   epilog=examples("tracker group add club alice bob",
                                   "tracker group add club alice --fide alice=35009192",
                                   "tracker group add club --from roster.csv"))
def group_add_cmd(
    ctx: typer.Context,
    name: Name,
    users: Annotated[list[str] | None, typer.Argument(
        help="Lichess usernames.", show_default=False, metavar="USER…")] = None,
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
    result = api.group_add(name, users or [], fide=pairs, from_csv=from_csv, db=_db(ctx))
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
                                               metavar="USER…")],
) -> None:
    """Take players out of a group; their games and FIDE links stay."""
    result = api.group_remove(name, users, db=_db(ctx))
    for u in result.not_members:
        say(err, f"{u} is not a member of {result.group}")
    say(out, f"group {result.group}: {len(result.removed)} removed")
    if result.not_members:
        raise typer.Exit(1)


@group_app.command("list", short_help="List the groups and their member counts.",
                   epilog=examples("tracker group list"))
def group_list_cmd(ctx: typer.Context) -> None:
    """List the groups, their member counts and creation dates (UTC)."""
    groups = api.group_list(db=_db(ctx))
    if not groups:
        out.print("No groups yet: tracker group create NAME")
        return
    from rich.table import Table

    table = Table("group", "members", "created", title="Groups")
    for g in groups:
        created = datetime.fromtimestamp(g.created_at_ms / 1000, tz=UTC).strftime("%Y-%m-%d")
        table.add_row(cell(g.name), str(g.members), created)
    out.print(table)


def sync_cmd(
    ctx: typer.Context,
    group: Annotated[str | None, typer.Option(
        "--group", help="Only this group's members (default: every tracked player and every "
        "group's members).", metavar="NAME")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", help="Lichess server. Default: $LICHESS_BASE_URL, else "
        "https://lichess.org.", metavar="URL")] = None,
    token_file: Annotated[Path | None, typer.Option(
        "--token-file", help="File holding a Lichess API token (default: $LICHESS_TOKEN); "
        "never printed or stored.", metavar="PATH")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")
                       ] = False,
) -> None:
    """Bring every tracked player (or a group's members) up to date.

    One player and one Lichess request at a time: new games through the incremental import,
    linked FIDE ratings refreshed (at most once a UTC day), a member's FIDE id (group add
    --fide) linked; with a token, the rating history of players with new games. HTTP 429s are
    waited out; a player that fails (closed account, network) is reported and the others go
    on. Progress on a terminal only, so it runs quietly from cron. Ends with a table; exit
    code 0 when every player synced, 1 when some failed."""
    tty = sys.stderr.isatty() and not as_json

    def on_player(i: int, n: int, username: str) -> None:
        if tty:
            say(err, f"[{i}/{n}] {username}…")

    result = api.sync(group, db=_db(ctx), base_url=base_url, token_file=token_file,
                      on_player=on_player)
    if as_json:
        print(api.dumps({"group": result.group,
                         "players": [api.sync_row(p) for p in result.players]}))
    elif not result.players:
        out.print("No players to sync: tracker import USER, or tracker group add NAME USER…")
    else:
        _print_sync(result)
    if result.failed:
        raise typer.Exit(1)


def _print_sync(result: api.SyncResult) -> None:
    from rich import box
    from rich.table import Table

    table = Table("player", "status", "new", "updated", "FIDE", "note", box=box.SIMPLE_HEAD,
                  title=f"Sync of {result.group}" if result.group else "Sync")
    for p in result.players:
        table.add_row(cell(p.username), p.status, str(p.new), str(p.updated), cell(p.fide),
                      cell(p.message))
    out.print(table)
    failed = len(result.failed)
    say(out, f"{len(result.players) - failed} synced, {failed} failed, {result.new} new games")


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
    c = api.group_calibrate(name, perf, db=_db(ctx))
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
    table = Table("model", "signed gap", "mean |gap|", "members", "unrated", box=box.SIMPLE_HEAD,
                  title="model − real FIDE standard, rating points (mean over members)")
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
