"""Groups in the store, their API twins and ``tracker group …``: create, add (usernames,
--fide, a roster CSV with bad rows), remove, list; migration 0009 up and down."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect

from tracker import api
from tracker.api.groups import read_roster
from tracker.store.db import Store
from tracker.store.engine import alembic_config


def _roster(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "roster.csv"
    p.write_text(text, encoding="utf-8")
    return p


def test_create_list_and_a_taken_name(store: Store) -> None:
    g = api.group_create(" club ", db=store)
    assert (g.name, g.members) == ("club", 0)
    with pytest.raises(api.GroupExistsError, match="'club' exists already"):
        api.group_create("club", db=store)
    api.group_create("another", db=store)
    assert [(x.name, x.members) for x in api.group_list(db=store)] == [("another", 0),
                                                                        ("club", 0)]


@pytest.mark.parametrize("bad", ["", "   ", "x" * 28, "tab\there"])
def test_a_bad_group_name_is_a_usage_error(store: Store, bad: str) -> None:
    with pytest.raises(api.ArgumentError, match="cannot name a group") as exc:
        api.group_create(bad, db=store)
    assert exc.value.exit_code == 2


def test_add_usernames_and_fide_ids_then_remove(store: Store) -> None:
    api.group_create("club", db=store)
    r = api.group_add("club", ["Alice", "bob", "alice"], fide={"BOB": 4100018, "carol": 7},
                      db=store)
    assert (r.added, r.already, r.bad) == (["alice", "bob", "carol"], [], [])
    assert api.group_members("club", db=store) == [("Alice", None), ("bob", 4100018),
                                                   ("carol", 7)]
    again = api.group_add("club", ["alice"], fide={"alice": 35009192}, db=store)
    assert (again.added, again.already) == ([], ["alice"])
    assert api.group_members("club", db=store)[0] == ("Alice", 35009192)
    gone = api.group_remove("club", ["BOB", "zed"], db=store)
    assert (gone.removed, gone.not_members) == (["bob"], ["zed"])
    assert [u for u, _ in api.group_members("club", db=store)] == ["Alice", "carol"]
    assert api.group_list(db=store)[0].members == 2


NOT_A_USERNAME = ("is not a Lichess username (2-30 letters, digits, _ or -, starting with a "
                  "letter or digit)")


def test_a_bad_username_is_one_line_and_the_rest_is_added(store: Store) -> None:
    api.group_create("club", db=store)
    r = api.group_add("club", ["ok_1", "no way", "x"], db=store)
    assert r.added == ["ok_1"]
    assert r.bad == [f"'no way': 'no way' {NOT_A_USERNAME}", f"'x': 'x' {NOT_A_USERNAME}"]


def test_unknown_group(store: Store) -> None:
    with pytest.raises(api.UnknownGroupError, match="no group named 'nope'"):
        api.group_add("nope", ["alice"], db=store)
    with pytest.raises(api.UnknownGroupError):
        api.group_members("nope", db=store)


def test_roster_csv_of_12_with_one_malformed_row(store: Store, tmp_path: Path) -> None:
    rows = ["username,fide_id"] + [f"player{i:02d},{1000 + i}" for i in range(9)]
    rows += ["player10,", "bad row!,5", "player11"]
    roster = _roster(tmp_path, "\n".join(rows) + "\n\n")
    api.group_create("club", db=store)
    r = api.group_add("club", from_csv=roster, db=store)
    assert len(r.added) == 11 and r.already == []
    assert r.bad == [f"row 12: 'bad row!' {NOT_A_USERNAME}"]
    members = dict(api.group_members("club", db=store))
    assert members["player03"] == 1003 and members["player10"] is None
    assert members["player11"] is None and len(members) == 11


@pytest.mark.parametrize(("line", "reason"), [
    ("alice,12,extra", "row 2: 3 columns, expected username[,fide_id]"),
    ("alice,twelve", "row 2: 'twelve' is not a FIDE id (a positive number, up to 10 digits)"),
    (",12", f"row 2: '' {NOT_A_USERNAME}"),
    ("-2-3,12", f"row 2: '-2-3' {NOT_A_USERNAME}"),
    ("_x,12", f"row 2: '_x' {NOT_A_USERNAME}"),
])
def test_each_kind_of_bad_row(store: Store, tmp_path: Path, line: str, reason: str) -> None:
    api.group_create("club", db=store)
    r = api.group_add("club", from_csv=_roster(tmp_path, f"bob\n{line}\n"), db=store)
    assert (r.added, r.bad) == (["bob"], [reason])


def test_an_unreadable_roster_is_a_usage_error_and_adds_nothing(store: Store,
                                                               tmp_path: Path) -> None:
    api.group_create("club", db=store)
    with pytest.raises(api.ArgumentError, match="cannot read the roster"):
        api.group_add("club", ["alice"], from_csv=tmp_path / "none.csv", db=store)
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(api.ArgumentError, match="is not UTF-8 text"):
        api.group_add("club", ["alice"], from_csv=tmp_path / "bin.csv", db=store)
    assert api.group_members("club", db=store) == []


def test_fide_pairs() -> None:
    assert api.parse_fide_pairs(["a=1", " b = 22 "]) == {"a": 1, "b": 22}
    for bad in ("a", "=5", "a=x"):
        with pytest.raises(api.ArgumentError, match="--fide"):
            api.parse_fide_pairs([bad])


def _tracker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracker.cli.commands",
                           *args], capture_output=True,
                          text=True, check=False)


def test_cli_group_commands(tmp_path: Path) -> None:
    db = str(tmp_path / "g.db")
    assert _tracker("--db", db, "group", "create", "club").returncode == 0
    taken = _tracker("--db", db, "group", "create", "club")
    assert (taken.returncode, taken.stderr) == (1, "error: a group named 'club' exists "
                                                   "already\n")
    roster = _roster(tmp_path, "username,fide_id\nalice,1\nbad!,2\n")
    added = _tracker("group", "add", "club", "bob", "--fide", "carol=3", "--from", str(roster),
                     "--db", db)
    assert added.returncode == 1
    assert added.stderr == f"skipped row 3: 'bad!' {NOT_A_USERNAME}\n"
    assert added.stdout == "group club: 3 added, 0 already there, 1 bad\n"
    listed = _tracker("--db", db, "group", "list")
    assert "club" in listed.stdout and " 3 " in listed.stdout
    removed = _tracker("--db", db, "group", "remove", "club", "bob")
    assert (removed.returncode, removed.stdout) == (0, "group club: 1 removed\n")
    bad_fide = _tracker("--db", db, "group", "add", "club", "--fide", "carol")
    assert bad_fide.returncode == 2 and "expected USER=FIDE_ID" in bad_fide.stderr


def test_migration_0009_up_and_down(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    Store(url).close()
    engine = create_engine(url)
    assert {"groups", "group_members", "club_models"} <= set(inspect(engine).get_table_names())
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0008")  # the revision before 0009
    assert not {"groups", "group_members", "club_models"} & set(
        inspect(engine).get_table_names())
    engine.dispose()
    with Store(url) as s:
        api.group_create("again", db=s)
        assert api.group_list(db=s)[0].name == "again"


def test_groups_and_migration_0009_on_postgres(pg_url: str) -> None:
    from sqlalchemy import text

    store = Store(pg_url)
    try:
        api.group_create("club", db=store)
        r = api.group_add("club", ["alice", "bob"], fide={"bob": 4100018}, db=store)
        assert r.added == ["alice", "bob"]
        assert api.group_members("club", db=store) == [("alice", None), ("bob", 4100018)]
        assert [(g.name, g.members) for g in api.group_list(db=store)] == [("club", 2)]
        cfg = alembic_config()
        with store.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0008")  # the revision before 0009
            assert "groups" not in inspect(conn).get_table_names()
            command.upgrade(cfg, "head")
            assert "club_models" in inspect(conn).get_table_names()
    finally:
        with store.engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        store.close()


def test_a_user_given_with_two_fide_ids_is_a_reported_conflict(any_store: Store,
                                                              tmp_path: Path) -> None:
    roster = _roster(tmp_path, "username,fide_id\nalice,12345\nbob,777\nAlice,67890\n"
                               "bob,777\ncarol,1\ncarol\ndave,5\ndave,6\nDAVE,7\n")
    api.group_create("club", db=any_store)
    r = api.group_add("club", from_csv=roster, db=any_store)
    assert r.added == ["bob", "carol"]  # same id twice, or an id and none: no conflict
    assert r.bad == [
        "rows 2 and 4: 'alice' is given with different FIDE ids (12345, 67890): not added",
        "rows 8, 9 and 10: 'dave' is given with different FIDE ids (5, 6, 7): not added"]
    assert dict(api.group_members("club", db=any_store)) == {"bob": 777, "carol": 1}
    # the roster against --fide on the same command
    again = api.group_add("club", fide={"bob": 778}, from_csv=roster, db=any_store)
    assert again.bad[1] == ("row 3, row 5 and --fide: 'bob' is given with different FIDE ids "
                            "(777, 778): not added")
    assert dict(api.group_members("club", db=any_store))["bob"] == 777  # unchanged
    # read on its own, the roster says the same
    members, bad = read_roster(roster)
    assert [m.user_id for m in members] == ["bob", "bob", "carol", "carol"]
    assert bad == r.bad


def test_the_cli_names_the_conflicting_rows(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    roster = _roster(tmp_path, "alice,12345\nalice,67890\n")
    assert _tracker("--db", db, "group", "create", "club").returncode == 0
    added = _tracker("--db", db, "group", "add", "club", "--from", str(roster))
    assert added.returncode == 1
    assert added.stderr == ("skipped rows 1 and 2: 'alice' is given with different FIDE ids "
                            "(12345, 67890): not added\n")
    assert added.stdout == "group club: 0 added, 0 already there, 1 bad\n"


def test_two_groups_cannot_give_one_player_two_fide_ids(any_store: Store) -> None:
    """A player has one FIDE link. Two groups with two ids for them made each group's sync
    link its own (each sync flipping it back), and each group's table and calibration read
    whichever was linked last: the other person's ratings under this group's id."""
    api.group_create("club", db=any_store)
    api.group_create("juniors", db=any_store)
    assert api.group_add("club", fide={"alice": 12345, "bob": 777}, db=any_store).bad == []
    r = api.group_add("juniors", ["carol"], fide={"Alice": 67890, "bob": 777}, db=any_store)
    assert r.added == ["carol", "bob"]  # the same id, or a new player: added
    assert r.bad == ["'Alice': FIDE id 67890 here, but 12345 in group club: not added (a "
                     "player has one FIDE id: give the same one, or change it in the other "
                     "group first)"]
    assert dict(api.group_members("juniors", db=any_store)) == {"bob": 777, "carol": None}
    assert api.group_add("juniors", ["alice"], db=any_store).added == ["alice"]  # no id: fine
    # Changed in the other group first, it is accepted here.
    assert api.group_add("club", fide={"alice": 67890}, db=any_store).bad == []
    assert api.group_add("juniors", fide={"alice": 67890}, db=any_store).bad == []
    assert dict(api.group_members("juniors", db=any_store))["alice"] == 67890


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_roster_saved_with_semicolons_or_tabs_is_read(store: Store, tmp_path: Path,
                                                         sep: str) -> None:
    """A spreadsheet where the decimal mark is a comma saves "CSV" with semicolons: every row
    was refused ("'alice;12345' is not a Lichess username"), nothing added."""
    text = f"username{sep}fide_id\r\nalice{sep}12345\r\nbob{sep}\r\ncarol\r\nbad!{sep}5\r\n"
    api.group_create("club", db=store)
    r = api.group_add("club", from_csv=_roster(tmp_path, text), db=store)
    assert (r.added, r.bad) == (["alice", "bob", "carol"], [f"row 5: 'bad!' {NOT_A_USERNAME}"])
    assert dict(api.group_members("club", db=store)) == {"alice": 12345, "bob": None,
                                                        "carol": None}


def test_a_member_is_a_tracked_player_even_before_a_sync(tmp_path: Path) -> None:
    """A member whose games came from a file of other players' games (no network to sync) was
    in the group's table but not in `tracker players` nor the dashboard's player picker."""
    db = tmp_path / "club.db"
    analysed = Path(__file__).parent / "fixtures" / "lichess" / "analysed-reda46-rapid.ndjson"
    assert api.import_file(analysed, db=db).new == 41  # the file's player: reda46
    assert [p.id for p in api.players(db=db)] == ["reda46"]
    api.group_create("club", db=db)
    api.group_add("club", ["TOP_LAD", "nobody_yet"], db=db)  # an opponent of his; no games
    tracked = {p.id: p for p in api.players(db=db)}
    assert set(tracked) == {"reda46", "top_lad", "nobody_yet"}
    assert tracked["top_lad"].username == "TOP_LAD"  # the spelling given, until an import's
    assert sum(p.games for p in tracked["top_lad"].perfs) == 1
    assert tracked["nobody_yet"].perfs == ()  # tracked, no games until a sync
    api.group_add("club", ["Top_Lad"], db=db)  # already a member: the spelling stays
    assert {p.id: p.username for p in api.players(db=db)}["top_lad"] == "TOP_LAD"
