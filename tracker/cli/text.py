"""Helpers shared by the ``tracker`` command's modules: the consoles, printing names read from
data (usernames, file names, messages) literally and safely, and the root's ``--db``."""

from __future__ import annotations

import re
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

#: The player a command is about: ``USERNAME``, a Lichess username in any case.
Username = Annotated[str, typer.Argument(help="The player (Lichess username, any case).",
                                         show_default=False, metavar="USERNAME")]
#: ``--base-url``, for the commands that read from Lichess.
BaseUrl = Annotated[str | None, typer.Option(
    "--base-url", help="Lichess server. Default: $LICHESS_BASE_URL, else https://lichess.org.",
    metavar="URL")]

#: Piped output gets a wide console, so tables stay one row per line for scripts and files.
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, highlight=False, soft_wrap=True)


#: Characters a terminal acts on instead of showing: C0/C1 controls (ESC starts colour,
#: title and hyperlink sequences), bidirectional overrides and isolates, zero-width marks.
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")


def visible(text: str) -> str:
    """``text`` safe for a terminal: every control character written as its escape
    (ESC → ``\\x1b``), so a name read from a file can neither recolour the terminal nor set
    its title. Print it with ``markup=False`` (or as a :class:`~rich.text.Text`) so that
    ``[link=…]`` stays literal too."""
    return _INVISIBLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def cell(value: object) -> Text:
    """A table cell shown literally: control characters escaped, no rich markup."""
    return Text(visible(str(value)))


def say(console: Console, text: str) -> None:
    """Print one line from data (names, file names, messages) literally and safely."""
    console.print(visible(text), markup=False, highlight=False)


def examples(*lines: str) -> str:
    """A command's help epilog: its examples, kept as written (``\\b`` stops click rewrapping)."""
    title = "Example:" if len(lines) == 1 else "Examples:"
    return "\b\n" + title + "\n" + "\n".join(f"  {line}" for line in lines)


def root_db(ctx: typer.Context) -> str | None:
    """The root command's ``--db`` (``None``: ``$TRACKER_DB`` or the default)."""
    db = ctx.find_root().params.get("db")
    return db if isinstance(db, str) else None
