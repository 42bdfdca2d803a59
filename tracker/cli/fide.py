"""``tracker fide link`` and ``tracker fide show``: a player's real FIDE rating, thin
wrappers over :mod:`tracker.api` (this module's sub-app :data:`app`, added as ``fide``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from tracker import api
from tracker.cli.text import BaseUrl, Username, err, examples, out, root_db, say

#: ``tracker fide …``, added to the ``tracker`` app under its name.
app = typer.Typer(
    help="Your real FIDE rating beside the replay: link a FIDE id, show what is stored.",
    short_help="Link your FIDE id; show the real FIDE ratings stored.",
    epilog=examples("tracker fide link me 35009192", "tracker fide show me"),
    no_args_is_help=True,
    rich_markup_mode=None,
)
def _fide_month(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def _print_fide(link: api.FideLink) -> None:
    """The link for people: who, the current ratings, and one row per list."""
    p = link.profile
    about = ", ".join(x for x in (p.title, p.federation,
                                  f"born {p.birth_year}" if p.birth_year else None) if x)
    say(out, f"{link.player_id} → FIDE {p.fide_id} {p.name}" + (f" ({about})" if about else ""))
    from rich import box
    from rich.table import Table

    table = Table("list", "current", "months listed", "first list", "latest list",
                  box=box.SIMPLE_HEAD)
    for kind in api.FIDE_LIST_KINDS:
        entries = link.lists[kind]
        current = p.rating(kind)
        table.add_row(
            kind, "-" if current is None else str(current), str(len(entries)),
            f"{entries[0].month}  {entries[0].rating}" if entries else "-",
            f"{entries[-1].month}  {entries[-1].rating}" if entries else "-",
        )
    out.print(table)
    out.print(f"fetched from Lichess {_fide_month(link.fetched_at_ms)}; ratings in FIDE rating "
              "points; a list month keeps its rating until the next one", markup=False)


@app.command("link", short_help="Link a FIDE id to a player and fetch its rating lists.",
                  epilog=examples("tracker fide link me 35009192"))
def fide_link_cmd(
    ctx: typer.Context,
    username: Username,
    fide_id: Annotated[str, typer.Argument(help="The player's FIDE id (ratings.fide.com).",
                                           show_default=False, metavar="FIDE_ID")],
    base_url: BaseUrl = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored link as JSON.")
                       ] = False,
) -> None:
    """Link a FIDE id to a player and fetch its rating lists.

    Fetches FIDE's profile and monthly rating lists (standard, rapid, blitz) from Lichess and
    stores them. Linking again refreshes; every
    complete `tracker import USER` refreshes too. Exit code 1 for an unknown FIDE id
    (nothing is stored)."""
    result = api.fide_link(username, fide_id, db=root_db(ctx), base_url=base_url,
                           on_wait=lambda line: say(err, line))
    for w in result.warnings:
        say(err, f"warning: {w}")
    if as_json:
        print(api.dumps(api.fide_json(result.link)))
        return
    link, c = result.link, result.counts
    p = link.profile
    about = ", ".join(x for x in (p.title, p.federation,
                                  f"born {p.birth_year}" if p.birth_year else None) if x)
    now = ", ".join(f"{kind} {p.rating(kind) or '-'}" for kind in api.FIDE_LIST_KINDS)
    stored = sum(len(link.lists[kind]) for kind in api.FIDE_LIST_KINDS)
    say(out, f"linked {link.player_id} to FIDE {p.fide_id} {p.name}"
             + (f" ({about})" if about else "") + f": {now} now; {stored} list months stored "
             f"({c.new} new, {c.updated} updated, {c.unchanged} unchanged)")


@app.command("show", short_help="Show the FIDE profile and lists stored for a player.",
                  epilog=examples("tracker fide show me --json"))
def fide_show_cmd(
    ctx: typer.Context,
    username: Username,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (every list month).")
                       ] = False,
) -> None:
    """Show the FIDE profile and lists stored for a player.

    No network: what the last link or import fetched."""
    link = api.fide_show(username, db=root_db(ctx))
    if as_json:
        print(api.dumps(api.fide_json(link)))
        return
    _print_fide(link)
