"""Input fields no column can hold, each on SQLite and on a throwaway PostgreSQL: a PGN tag line
whose *name* is huge, player names given on the command line that no column can hold, a
winner that is neither side (found by a second adversarial pass over issue 19's fixes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.conftest import INDEXINATOR
from tests.lichess_server import ndjson_lines
from tracker.importing import import_file
from tracker.store import queries
from tracker.store.db import Store


def _stored_ids(store: Store) -> set[str]:
    with store.engine.connect() as conn:
        return {r[0] for r in conn.execute(text("SELECT id FROM games"))}


def _pgn(gid: str, extra: str = "") -> bytes:
    return (f'[Event "Rated Blitz game"]\n{extra}[Site "https://lichess.org/{gid}"]\n'
            '[White "a"]\n[Black "b"]\n[Result "1-0"]\n[UTCDate "2024.01.01"]\n'
            '[UTCTime "10:00:00"]\n[WhiteElo "1500"]\n[BlackElo "1500"]\n'
            '[TimeControl "180+0"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n\n').encode()


# -- item 5: a tag line over the cap whose name alone fills the first 256 bytes ---------------

HUGE = 5 << 20  # over the 4 MB cap of one game


@pytest.mark.parametrize("user", [None, "b"])
@pytest.mark.parametrize("line", [
    "[" + "N" * HUGE + ' "v"]\n',  # a 5 MB tag name
    "[Event" + "x" * HUGE + "]\n",  # a name and value run together, no quote
    "[ " + "x" * HUGE + "\n",  # a bracket, a space, then 5 MB
], ids=["name", "no-quote", "bracket-space"])
def test_a_tag_line_with_a_huge_name_is_one_game_too_large(
    any_store: Store, tmp_path: Path, line: str, user: str | None
) -> None:
    middle = _pgn("aaaaaaa2", extra=line)
    path = tmp_path / "tag.pgn"
    path.write_bytes(_pgn("aaaaaaa1") + middle + _pgn("aaaaaaa3"))
    summary = import_file(path, store=any_store, user=user)
    # before: read 4, new 3: the tags after the huge line and the moves were read as a game
    # of their own and stored as "aaaaaaa2" (its Event lost), the huge line one more "game"
    assert (summary.read, summary.new, summary.skipped) == (3, 2, {"game too large": 1})
    assert _stored_ids(any_store) == {"aaaaaaa1", "aaaaaaa3"}
    one = tmp_path / "one.pgn"
    one.write_bytes(middle)
    alone = import_file(one, store=any_store, user=user)
    assert (alone.read, alone.new, alone.skipped) == (1, 0, {"game too large": 1})
    assert queries.count_games(any_store) == 2


# -- items 3 and 4: a player's name from the command line that no column can hold ------------

NOT_UTF8 = os.fsdecode(b"ab\xffcd")  # a command-line argument that is not UTF-8 arrives so
TOO_LONG = "a" * 100  # a side's user_id (and a run's player_id) is 64 wide


@pytest.mark.parametrize("name", [NOT_UTF8, TOO_LONG], ids=["not-utf8", "100-chars"])
def test_a_player_name_no_column_holds_is_one_line_and_exit_2(
    any_store: Store, tmp_path: Path, name: str
) -> None:
    path = tmp_path / "g.pgn"
    path.write_bytes(_pgn("aaaaaaa1"))
    url = any_store.engine.url.render_as_string(hide_password=False)
    assert import_file(path, store=any_store).new == 1  # a database with a game and a run
    any_store.engine.dispose()
    why = "it is not UTF-8 text" if name == NOT_UTF8 else "it is 100 characters long (at most 64)"
    for args, prefix in ((["import-file", str(path), "--user", name], "--user "),
                         (["replay", name, "--perf", "blitz"], ""),
                         (["settings", name, "--scale", "lichess"], ""),
                         (["fide", "link", name, "35009192"], "")):
        proc = subprocess.run(
            [sys.executable, "-m", "tracker.cli.commands", "--db", url, *args], capture_output=True,
            text=True, errors="replace", timeout=120,
            env={**os.environ, "NO_COLOR": "1", "LICHESS_BASE_URL": "http://127.0.0.1:9"})
        # before: a UnicodeEncodeError traceback (SQLite and PostgreSQL) or, for 100
        # characters on PostgreSQL, a DataError (player_id VARCHAR(64)); exit 1
        assert (proc.returncode, proc.stdout) == (2, ""), (args, proc.stderr)
        assert proc.stderr == f"error: {prefix}{name!r} cannot be a player's name: {why}\n"
    assert len(queries.import_runs(any_store)) == 1  # nothing written
    assert queries.count_games(any_store) == 1


# -- item 3: a winner Lichess never sends is an invalid value, not a draw ---------------------


def test_a_winner_that_is_neither_white_nor_black_is_one_invalid_value(
    any_store: Store, tmp_path: Path
) -> None:
    lines = ndjson_lines(INDEXINATOR)[:40]
    decisive = [i for i, line in enumerate(lines) if '"winner":"white"' in line][:4]
    bad = {}
    for i, value in zip(decisive, ['"\\u0000white"', '"White"', '1', '"draw"'], strict=True):
        lines[i] = lines[i].replace('"winner":"white"', f'"winner":{value}', 1)
        bad[json.loads(lines[i])["id"]] = value
    path = tmp_path / "w.ndjson"
    path.write_text("\n".join(lines) + "\n")
    summary = import_file(path, store=any_store)
    # before: new 40, each of the four stored as a draw (1/2-1/2) beside its "mate"/"resign"
    assert (summary.read, summary.new, summary.skipped) == (40, 36, {"invalid value": 4})
    assert not _stored_ids(any_store) & set(bad)
