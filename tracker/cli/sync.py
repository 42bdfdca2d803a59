"""``tracker sync``: bring every tracked player (or a group's members) up to date, a thin
wrapper over :func:`tracker.api.sync` (this module's sub-app :data:`app`, merged into the
``tracker`` app)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from tracker import api
from tracker.cli.text import BaseUrl, cell, err, examples, out, root_db, say

#: ``tracker sync``, merged into the ``tracker`` app.
app = typer.Typer(rich_markup_mode=None)


@app.command("sync", short_help="Bring every tracked player (or a group) up to date.",
             epilog=examples("tracker sync", "tracker sync --group club"))
def sync_cmd(
    ctx: typer.Context,
    group: Annotated[str | None, typer.Option(
        "--group", help="Only this group's members (default: every tracked player and every "
        "group's members).", metavar="NAME")] = None,
    base_url: BaseUrl = None,
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

    result = api.sync(group, db=root_db(ctx), base_url=base_url, token_file=token_file,
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
