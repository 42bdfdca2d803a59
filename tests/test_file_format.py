"""One bad line never decides a file (issue 19, item 11): the format is voted by the first
lines, a bad line is skipped under its reason, and of several files every one that can be
read is imported, the others named."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CMRADE, INDEXINATOR
from tracker import api
from tracker.sources.files import SKIP_TRUNCATED, InputError, sniff_format
from tracker.store import queries
from tracker.store.db import Store

GOOD = 2907


@pytest.mark.parametrize("first", [
    b'{"id":"garbled", "players": {"whi\n',   # a cut game object
    b'[Event "x"\n',                            # a PGN tag, unclosed
    b"\x01\x02 garbage \xff\xfe\n",             # binary garbage
])
def test_an_ndjson_file_with_a_bad_first_line_imports_every_good_game(
        tmp_path: Path, first: bytes) -> None:
    path = tmp_path / "games.ndjson"
    path.write_bytes(first + INDEXINATOR.read_bytes())
    assert sniff_format(path.read_bytes()[:65536]) == "ndjson"
    db = tmp_path / "t.db"
    summary = api.import_file(path, db=db)
    assert (summary.read, summary.new, summary.status) == (GOOD + 1, GOOD, "complete")
    assert dict(summary.skipped) == {SKIP_TRUNCATED: 1}
    assert any("line 1" in w for w in summary.warnings)
    with Store(str(db)) as store:
        assert queries.count_games(store) == GOOD


def test_a_pgn_file_with_a_bad_first_line_is_read_as_pgn(tmp_path: Path) -> None:
    path = tmp_path / "games.pgn"
    path.write_bytes(b'{"id": "x"}\n' + CMRADE.read_bytes())
    assert sniff_format(path.read_bytes()[:65536]) == "pgn"
    summary = api.import_file(path, db=tmp_path / "t.db")
    assert summary.new == api.import_file(CMRADE, db=tmp_path / "plain.db").new == 474


def test_one_unreadable_file_of_several_does_not_stop_the_others(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello, this is not a game file\n")
    empty = tmp_path / "empty.pgn"
    empty.write_bytes(b"")
    missing = tmp_path / "missing.pgn"
    db = tmp_path / "t.db"
    summary = api.import_file([bad, INDEXINATOR, empty, missing, CMRADE], db=db)
    assert summary.new == GOOD + 474
    assert summary.status == "partial"  # exit code 1: not everything given was imported
    assert summary.message == (f"not imported: {bad}: not a PGN or NDJSON game file; "
                               f"not imported: {empty}: the file is empty; "
                               f"not imported: {missing}: no such file")
    runs = api.runs(db=db)
    assert runs[0].status == "partial" and runs[0].message == summary.message


def test_when_no_file_can_be_read_nothing_is_written(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    db = tmp_path / "t.db"
    with pytest.raises(InputError, match=r"^none of the 2 files can be imported: .*notes\.txt: "
                                         r"not a PGN or NDJSON game file; .*nope\.pgn: no such "
                                         r"file$"):
        api.import_file([bad, tmp_path / "nope.pgn"], db=db)
    with pytest.raises(InputError, match=r"notes\.txt: not a PGN or NDJSON game file$"):
        api.import_file(bad, db=db)
    assert not db.exists()
