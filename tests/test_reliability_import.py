"""Import reliability: no bad game stops an import, every count adds up, memory is bounded,
no race stores the poorer copy, a full disk is one line."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import INDEXINATOR
from tracker.core.records import invalid_value
from tracker.importing import import_file
from tracker.sources.ndjson import record_from_json
from tracker.store import queries
from tracker.store.db import Store

LINES = [line for line in INDEXINATOR.read_text(encoding="utf-8").splitlines() if line.strip()]


def with_id(line: str, n: int) -> str:
    """The real game ``line`` under a new 8-character id (``n`` in base 36)."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    new = ""
    for _ in range(8):
        n, r = divmod(n, 36)
        new = digits[r] + new
    assert line.startswith('{"id":"')
    return '{"id":"' + new + line[15:]


def games(n: int, start: int = 0) -> list[str]:
    """``n`` real games under new ids, the sample's lines over and over."""
    return [with_id(LINES[i % len(LINES)], start + i) for i in range(n)]


def corrupt(line: str, path: tuple[str, ...], value: Any) -> str:
    obj = json.loads(line)
    target = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(obj, separators=(",", ":"))


# -- 1: every game that cannot be read or stored is skipped; the others are stored ------------

CORRUPTIONS = [
    (("createdAt",), -1e30),
    (("createdAt",), 1e308),
    (("players", "white", "rating"), 10**30),
    (("players",), "x"),
    (("players", "white", "user", "id"), 5),
    (("lastMoveAt",), 10**40),
    (("clock", "initial"), -(10**25)),
    (("players", "black", "ratingDiff"), 2**63),
]


@pytest.mark.parametrize(("path", "value"), CORRUPTIONS)
def test_one_invalid_value_is_one_skip_and_every_other_game_is_stored(
        tmp_path: Path, store: Store, path: tuple[str, ...], value: Any) -> None:
    lines = games(600)
    lines[300] = corrupt(lines[300], path, value)
    f = tmp_path / "games.ndjson"
    f.write_text("\n".join(lines) + "\n")
    summary = import_file(f, store=store)
    assert (summary.read, summary.new, summary.skipped) == (600, 599, {"invalid value": 1})
    assert summary.status == "complete"
    assert any(w.startswith("games.ndjson: line 301: invalid value") for w in summary.warnings)
    assert queries.count_games(store) == 599
    again = import_file(f, store=store)  # a rerun adds nothing and still skips it
    assert (again.new, again.unchanged, again.skipped) == (0, 599, {"invalid value": 1})


def test_fifty_thousand_games_with_one_bad_line_store_49999(tmp_path: Path) -> None:
    lines = games(50_000)
    lines[25_000] = corrupt(lines[25_000], ("createdAt",), -1e30)
    f = tmp_path / "big.ndjson"
    f.write_text("\n".join(lines) + "\n")
    with Store(str(tmp_path / "t.db")) as store:
        summary = import_file(f, store=store)
        assert (summary.read, summary.new, summary.skipped) == (
            50_000, 49_999, {"invalid value": 1})
        assert queries.count_games(store) == 49_999


def _paths(obj: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            out.append((*prefix, key))
            out.extend(_paths(value, (*prefix, key)))
    return out


SAMPLE = json.loads(LINES[7])
FIELDS = _paths(SAMPLE)
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=300),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(),
                                                          max_size=2),
    st.sampled_from([0, -1, 2**31, 2**63, 10**11, 10**15, "", "x" * 5000, [], {}]),
)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(FIELDS), value=VALUES)
def test_any_single_field_corruption_is_stored_in_range_or_skipped(
        tmp_path: Path, store: Store, path: tuple[str, ...], value: Any) -> None:
    good = games(2, start=10**9)
    bad = corrupt(LINES[7], path, value)
    f = tmp_path / "games.ndjson"
    f.write_text("\n".join([good[0], bad, good[1]]) + "\n")
    summary = import_file(f, store=store)  # never an exception
    skipped = sum(summary.skipped.values())
    assert summary.read == 3
    assert summary.new + summary.updated + summary.unchanged + skipped == 3
    assert set(store.stored_digests([g[7:15] for g in good])) == {
        g[7:15] for g in good}
    if skipped:
        assert set(summary.skipped) <= {"invalid value", "truncated or invalid line"}
    else:  # stored: then every value it holds is in range
        record = record_from_json(json.loads(bad, parse_constant=lambda c: math.nan))
        assert invalid_value(record) is None


def test_a_pgn_game_with_a_huge_rating_or_odd_digits_is_skipped_as_invalid(
        tmp_path: Path, store: Store) -> None:
    game = ('[Event "Rated Blitz game"]\n[Site "https://lichess.org/{id}"]\n[White "a"]\n'
            '[Black "b"]\n[Result "1-0"]\n[UTCDate "{date}"]\n[UTCTime "10:00:00"]\n'
            '[WhiteElo "{elo}"]\n[BlackElo "1500"]\n[TimeControl "180+0"]\n\n1. e4 e5 1-0\n\n')
    text = "".join([
        game.format(id="aaaaaaa1", date="2024.01.01", elo="1500"),
        game.format(id="aaaaaaa2", date="2024.01.01", elo="9" * 40),
        game.format(id="aaaaaaa3", date="2024.01.01", elo="9" * 5000),
        game.format(id="aaaaaaa4", date="²024.01.01", elo="1500"),
        game.format(id="aaaaaaa5", date="2024.01.01", elo="1500"),
    ])
    f = tmp_path / "odd.pgn"
    f.write_text(text)
    summary = import_file(f, store=store)
    assert summary.read == 5 and summary.new == 2
    assert sum(summary.skipped.values()) == 3
    assert summary.skipped.get("invalid value", 0) >= 2


# -- 13: read = new + updated + unchanged + skipped, always ------------------------------------

def _adds_up(summary: Any) -> bool:
    return summary.read == (summary.new + summary.updated + summary.unchanged
                            + sum(summary.skipped.values()))


def test_the_same_file_twice_in_one_run_counts_every_game(store: Store) -> None:
    summary = import_file([INDEXINATOR, INDEXINATOR], store=store)
    assert (summary.read, summary.new, summary.updated, summary.unchanged) == (
        5814, 2907, 0, 2907)
    assert _adds_up(summary)
    run = queries.import_runs(store)[0]
    assert (run.read, run.new, run.unchanged) == (5814, 2907, 2907)


def _variant(line: str) -> str:
    """The same game with a changed raw text (a re-export with a new field): an update."""
    return line[:-1] + ',"x":1}'


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(["same", "changed",
                                                                      "bad", "blank"])),
                      min_size=1, max_size=1200),
       twice=st.booleans())
def test_counts_always_add_up(tmp_path: Path, picks: list[tuple[int, str]], twice: bool
                              ) -> None:
    pool = games(41, start=5 * 10**9)
    lines = []
    for i, kind in picks:
        if kind == "same":
            lines.append(pool[i])
        elif kind == "changed":
            lines.append(_variant(pool[i]))
        elif kind == "bad":
            lines.append(pool[i][: len(pool[i]) // 2])
        else:
            lines.append("")
    lines.insert(0, pool[40])  # a file of blank lines only is refused before any import
    f = tmp_path / "g.ndjson"
    f.write_text("\n".join(lines) + "\n")
    with Store("sqlite://") as store:
        first = import_file([f, f] if twice else f, store=store)
        again = import_file(f, store=store)
        for summary in (first, again):
            assert _adds_up(summary), summary
            run = next(r for r in queries.import_runs(store) if r.id == summary.run_id)
            assert run.read == summary.read and run.new == summary.new


@pytest.mark.parametrize("tail", ["some trailing text\n", "\nDownloaded from lichess.org",
                                  "\n\n-- \nsent from my phone\n"])
def test_a_complete_last_game_then_text_is_stored_and_the_text_skipped(
        tmp_path: Path, store: Store, tail: str) -> None:
    from tests.conftest import SINGLE

    f = tmp_path / "single.pgn"
    f.write_text(SINGLE.read_text() + tail)
    summary = import_file(f, store=store)
    assert (summary.read, summary.new, summary.status) == (2, 1, "complete")
    assert summary.skipped == {"not a game": 1}
    assert any("text after a game that is no game" in w for w in summary.warnings)
    (game,) = queries.player_games(store, "lance5500", with_raw=True)
    assert game.plies == 125 and game.result == "1/2-1/2"
    assert game.raw.rstrip().endswith("63. Kc4 { [%eval 0.08] [%clk 0:00:16] } 1/2-1/2")


def test_a_last_game_cut_before_its_result_is_still_partial(tmp_path: Path, store: Store
                                                           ) -> None:
    from tests.conftest import SINGLE

    f = tmp_path / "cut.pgn"
    f.write_text(SINGLE.read_text().rsplit("63.", 1)[0])
    summary = import_file(f, store=store)
    assert (summary.new, summary.status) == (0, "partial")


# -- 9: a full disk is one line, the run partial ------------------------------------------------

def _fill_disk_after(monkeypatch: pytest.MonkeyPatch, batches: int) -> None:
    import sqlite3

    from sqlalchemy.exc import OperationalError

    real = Store.write_prepared
    calls = [0]

    def write_prepared(self: Store, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] > batches:
            raise OperationalError("INSERT INTO games …", None,
                                   sqlite3.OperationalError("database or disk is full"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Store, "write_prepared", write_prepared)


@pytest.mark.usefixtures("file_batches_of_500")
def test_a_full_disk_is_one_line_exit_1_and_a_partial_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    from tracker.cli import commands as cli

    db = tmp_path / "t.db"
    _fill_disk_after(monkeypatch, batches=2)
    monkeypatch.setattr("sys.argv", ["tracker", "--db", str(db), "import-file",
                                     str(INDEXINATOR)])
    with pytest.raises(SystemExit) as info:
        cli.main()
    assert info.value.code == 1
    captured = capsys.readouterr()
    assert captured.err == f"error: the disk is full at {db}: 1000 games kept\n"
    with Store(str(db)) as store:
        assert queries.count_games(store) == 1000
        run = queries.import_runs(store)[0]
        assert run.status == "partial" and run.new == 1000
        assert run.message is not None and run.message.startswith("the disk is full at")


@pytest.mark.usefixtures("file_batches_of_500")
def test_a_refused_last_batch_is_counted_as_not_stored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.core.errors import DiskFullError
    from tracker.importing import SKIP_NOT_STORED

    db = tmp_path / "t.db"
    _fill_disk_after(monkeypatch, batches=2)
    with Store(str(db)) as store, pytest.raises(DiskFullError):
        import_file(INDEXINATOR, store=store)
    with Store(str(db)) as store:
        run = queries.import_runs(store)[0]
    assert (run.read, run.new, run.skipped) == (1500, 1000, {SKIP_NOT_STORED: 500})
    assert run.read == run.new + run.updated + run.unchanged + sum(run.skipped.values())
    assert run.message is not None and "the last 500 games were not stored" in run.message


# -- 6: a PGN import beside an NDJSON import of the same games never stores PGN over them -----

_IMPORT = ("import sys; from tracker.importing import import_file; "
           "from tracker.store.db import Store; "
           "import_file(sys.argv[1], store=Store(sys.argv[2]))")


def _race(db: str, ndjson: Path, pgn: Path) -> None:
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-c", _IMPORT, str(path), db],
                              stderr=subprocess.PIPE, text=True) for path in (pgn, ndjson)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err


def _pgn_of(lines: list[str], path: Path) -> Path:
    from tests.lichess_server import game_to_pgn

    path.write_text("".join(game_to_pgn(json.loads(line)) + "\n" for line in lines))
    return path


def test_concurrent_pgn_and_ndjson_imports_store_no_pgn_row(tmp_path: Path) -> None:
    import sqlite3

    ndjson = tmp_path / "g.ndjson"
    ndjson.write_text("\n".join(LINES) + "\n")
    pgn = _pgn_of(LINES, tmp_path / "g.pgn")
    for round_ in range(3):
        db = tmp_path / f"race{round_}.db"
        Store(str(db)).close()  # both find the schema
        _race(str(db), ndjson, pgn)
        with sqlite3.connect(db) as con:
            rows = dict(con.execute("SELECT source, count(*) FROM games GROUP BY source"))
            no_end = con.execute("SELECT count(*) FROM games WHERE last_move_at_ms IS NULL"
                                 ).fetchone()[0]
        assert rows == {"ndjson": 2907}, rows
        assert no_end == 0


def test_concurrent_imports_on_postgresql_store_no_pgn_row(tmp_path: Path) -> None:
    from sqlalchemy import text

    from tests.pg_server import postgres_url

    ndjson = tmp_path / "g.ndjson"
    ndjson.write_text("\n".join(LINES[:1500]) + "\n")
    pgn = _pgn_of(LINES[:1500], tmp_path / "g.pgn")
    with postgres_url() as (url, reason):
        if url is None:
            pytest.skip(reason)
        try:
            for _ in range(2):
                with Store(url) as s, s.engine.begin() as conn:
                    conn.execute(text("DELETE FROM games"))
                _race(url, ndjson, pgn)
                with Store(url) as s, s.engine.connect() as conn:
                    rows = dict(conn.execute(text(  # type: ignore[arg-type]
                        "SELECT source, count(*) FROM games GROUP BY source")).all())
                assert rows == {"ndjson": 1500}, rows
        finally:
            with Store(url) as s, s.engine.begin() as conn:
                conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))


def test_a_write_between_the_lookup_and_the_write_waits_for_the_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race made certain: another import writes the richer copies right after this batch
    read the stored ones. It must wait for this batch's transaction, then win."""
    import sqlite3
    import threading

    from tests.lichess_server import game_to_pgn
    from tracker.sources.ndjson import read_ndjson
    from tracker.sources.pgn import read_pgn
    from tracker.store import games as store_games

    lines = LINES[:50]
    pgn_records = list(read_pgn("".join(game_to_pgn(json.loads(x)) + "\n" for x in lines)
                                .splitlines(keepends=True)))
    ndjson_records = list(read_ndjson(lines))
    assert len(pgn_records) == len(ndjson_records) == 50
    db = tmp_path / "race.db"
    pgn_import, ndjson_import = Store(str(db)), Store(str(db))
    real = store_games._stored_copies
    other: list[threading.Thread] = []

    def stored_then_other_writes(*args: Any) -> Any:
        found = real(*args)
        if not other:  # the PGN batch has read the stored copies (none): the other import
            other.append(threading.Thread(target=ndjson_import.write_games,
                                          args=(ndjson_records,)))
            other[0].start()
            other[0].join(timeout=1.0)  # done by now unless it waits for this transaction
        return found

    monkeypatch.setattr(store_games, "_stored_copies", stored_then_other_writes)
    pgn_import.write_games(pgn_records)
    other[0].join()
    with sqlite3.connect(db) as con:
        rows = dict(con.execute("SELECT source, count(*) FROM games GROUP BY source"))
    assert rows == {"ndjson": 50}, rows


# -- 4: a hard cap on one game; memory bounded on bombs -------------------------------------------
# The inputs of the issue (1 GB of zeros, 2 GB and 4 GB bombs) scaled down, the cap with them:
# benchmarks/bench_bombs.py measures the full-size ones.

CAP = 256 * 1024
MB = 1 << 20


def _zeros(f: Any, n: int, newline_every: int | None = None) -> None:
    block = b"0" * (newline_every - 1) + b"\n" if newline_every else b"\0" * MB
    for _ in range(n // len(block)):
        f.write(block)


def _import_peak(path: Path, store: Store, **kw: Any) -> tuple[Any, int]:
    import tracemalloc

    tracemalloc.start()
    try:
        summary = import_file(path, store=store, max_game_bytes=CAP, **kw)
        return summary, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _two_games() -> tuple[str, str]:
    return LINES[0], LINES[1]


def test_a_valid_line_then_50_mb_of_zeros_without_a_newline(tmp_path: Path, store: Store
                                                            ) -> None:
    first, last = _two_games()
    path = tmp_path / "zeros.ndjson"
    with path.open("wb") as f:
        f.write(first.encode() + b"\n")
        _zeros(f, 50 * MB)
    summary, peak = _import_peak(path, store)
    assert (summary.read, summary.new, summary.skipped) == (2, 1, {"game too large": 1})
    assert peak < 8 * MB  # ~4 chunks of 1 MB and the cap: not the 50 MB line
    with path.open("ab") as f:  # the zeros end with a newline, a game follows: kept
        f.write(b"\n" + last.encode() + b"\n")
    summary, _ = _import_peak(path, store)
    assert (summary.read, summary.new, summary.unchanged, summary.skipped) == (
        3, 1, 1, {"game too large": 1})
    assert any("line 2: a game of 52,428,801 bytes" in w for w in summary.warnings)


def test_a_line_over_the_default_cap_of_1_mb_is_too_large(tmp_path: Path, store: Store
                                                          ) -> None:
    first, last = _two_games()
    huge = json.loads(first)
    huge["id"], huge["moves"] = "huge0001", "e4 " * 400_000  # 1.2 MB: valid JSON, too large
    path = tmp_path / "big.ndjson"
    path.write_text("\n".join([first, json.dumps(huge), last]) + "\n")
    summary = import_file(path, store=store)
    assert (summary.read, summary.new, summary.skipped) == (3, 2, {"game too large": 1})
    assert any("over the limit of 1,048,576" in w for w in summary.warnings)


@pytest.mark.parametrize("codec", ["gzip", "zstd", "bzip2", "xz"])
def test_a_decompression_bomb_is_one_game_too_large(tmp_path: Path, store: Store, codec: str
                                                    ) -> None:
    import bz2
    import gzip
    import lzma

    import zstandard

    first, last = _two_games()
    size = 200 * MB
    path = tmp_path / f"bomb.ndjson.{codec}"
    with path.open("wb") as raw:
        writer: Any = {
            "gzip": lambda: gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9),
            "zstd": lambda: zstandard.ZstdCompressor(level=19).stream_writer(raw),
            "bzip2": lambda: bz2.BZ2File(raw, "wb"),
            "xz": lambda: lzma.LZMAFile(raw, "wb"),  # noqa: SIM115 (closed by the with below)
        }[codec]()
        with writer as f:
            f.write(first.encode() + b"\n")
            _zeros(f, size)
            f.write(b"\n" + last.encode() + b"\n")
    assert path.stat().st_size < size // 100  # a bomb
    summary, peak = _import_peak(path, store)
    assert (summary.read, summary.new, summary.skipped) == (3, 2, {"game too large": 1})
    assert peak < 48 * MB, peak  # zstd: one 512-byte feed expands to at most ~16 MB


def _pgn(gid: str, comment: bytes = b"") -> bytes:
    return (f'[Event "Rated Blitz game"]\n[Site "https://lichess.org/{gid}"]\n[White "a"]\n'
            '[Black "b"]\n[Result "1-0"]\n[UTCDate "2024.01.01"]\n[UTCTime "10:00:00"]\n'
            f'[WhiteElo "1500"]\n[BlackElo "1500"]\n[TimeControl "180+0"]\n\n1. e4 '
            ).encode() + comment + b"e5 2. Nf3 Nc6 1-0\n\n"


@pytest.mark.parametrize("user", [None, "a"])
@pytest.mark.parametrize("newlines", [None, 100])
def test_a_pgn_game_then_an_unclosed_comment_keeps_the_game(
        tmp_path: Path, store: Store, newlines: int | None, user: str | None) -> None:
    path = tmp_path / "comment.pgn"
    with path.open("wb") as f:
        f.write(_pgn("aaaaaaa1") + b"{ ")
        _zeros(f, 50 * MB, newline_every=newlines)
    summary, peak = _import_peak(path, store, user=user)
    assert summary.new == 1 and queries.count_games(store) == 1
    assert sum(summary.skipped.values()) == 1
    assert peak < (8 * MB if user is None else 24 * MB), peak  # filtered: 4 MB chunks


@pytest.mark.parametrize("user", [None, "a"])
def test_a_pgn_game_with_a_huge_comment_is_skipped_and_the_next_kept(
        tmp_path: Path, store: Store, user: str | None) -> None:
    import io

    big = io.BytesIO()
    big.write(b"{ ")
    _zeros(big, 20 * MB, newline_every=80)
    big.write(b"} ")
    path = tmp_path / "middle.pgn"
    path.write_bytes(_pgn("aaaaaaa1") + _pgn("aaaaaaa2", big.getvalue()) + _pgn("aaaaaaa3"))
    del big
    summary, peak = _import_peak(path, store, user=user)
    assert (summary.read, summary.new, summary.skipped) == (3, 2, {"game too large": 1})
    assert any("game at line 14: " in w and "over the limit of 262,144" in w
               for w in summary.warnings)
    # filtered by player: a 4 MB chunk (twice, with its lower-case copy) cut into lines
    assert peak < (8 * MB if user is None else 48 * MB), peak


@pytest.mark.parametrize("user", [None, "a"])
def test_a_pgn_line_of_50_mb_closing_a_comment_is_too_large_and_the_next_game_kept(
        tmp_path: Path, store: Store, user: str | None) -> None:
    path = tmp_path / "line.pgn"
    with path.open("wb") as f:
        f.write(_pgn("aaaaaaa1") + _pgn("aaaaaaa2").replace(b"1. e4 ", b"1. e4 {"))
        _zeros(f, 50 * MB)
        f.write(b"} e5 1-0\n\n" + _pgn("aaaaaaa3"))
    summary, peak = _import_peak(path, store, user=user)
    assert (summary.read, summary.new, summary.skipped) == (3, 2, {"game too large": 1})
    assert peak < 24 * MB, peak


def _pieces(data: bytes, sizes: list[int]) -> list[bytes]:
    out, i = [], 0
    for n in sizes * (len(data) + 1):
        if i >= len(data):
            break
        out.append(data[i : i + n])
        i += n
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"{")) | st.just(b"\n"),
                max_size=12),
       st.integers(1, 20), st.lists(st.integers(1, 15), min_size=1, max_size=5))
def test_capped_lines_and_chunks_keep_short_lines_and_cut_long_ones(
        parts: list[bytes], cap: int, sizes: list[int]) -> None:
    import io

    from tracker.sources.limits import OversizedLine, capped_chunks, capped_lines, last_brace

    data = b"".join(parts)
    pieces = _pieces(data, sizes)
    it = iter(pieces)
    got = list(capped_lines(lambda _n: next(it, b""), cap, chunk_bytes=sizes[0]))
    for line, whole in zip(got, io.BytesIO(data).readlines(), strict=True):  # on \n only
        if isinstance(line, OversizedLine):
            assert len(whole) > cap and whole.startswith(line)
            assert (line.size, line.brace, line.ended) == (
                len(whole), last_brace(whole), whole.endswith(b"\n"))
        else:
            assert line == whole
    cut = b"".join(capped_chunks(pieces, cap)).split(b"\n")
    for line, whole in zip(cut, data.split(b"\n"), strict=True):
        if len(whole) <= cap:
            assert line == whole
        else:
            assert len(line) > cap and last_brace(line) == last_brace(whole)
            assert whole.startswith(line) or whole.startswith(line[:-1])


# -- 7: linear time on nested variations ---------------------------------------------------------

def _old_without_variations(movetext: str) -> str:
    """The former algorithm (one nesting level removed per pass): the reference."""
    import re

    variation = re.compile(r"\([^()]*\)")
    while "(" in movetext:
        cut = variation.sub(" ", movetext)
        if cut == movetext:
            movetext = movetext[: movetext.index("(")]
            break
        movetext = cut
    return movetext.replace(")", " ")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="() e4Nf3.1", max_size=60))
def test_variations_are_cut_as_before_in_one_pass(movetext: str) -> None:
    from tracker.sources.pgn import _without_variations

    assert _without_variations(movetext).split() == _old_without_variations(movetext).split()


def test_a_game_with_100k_nested_variations_is_read(tmp_path: Path, store: Store) -> None:
    nested = "( 1... e5 " * 100_000 + ")" * 100_000
    path = tmp_path / "nested.pgn"
    path.write_bytes(_pgn("aaaaaaa1", nested.encode() + b" "))
    assert 1_000_000 < path.stat().st_size < 1_200_000
    summary = import_file(path, store=store)
    assert summary.new == 1
    (game,) = queries.player_games(store, "a")
    assert game.plies == 4  # 1. e4 e5 2. Nf3 Nc6: the variations are no moves


# -- 2 and the API side of 4, 7: a line that is no game never stops an API import ---------------
# The local Lichess server over real HTTP on 127.0.0.1, the client as the CLI builds it.

def _api_import(server: Any, store: Store) -> Any:
    from tracker.importing.lichess import LichessOptions, import_user

    return import_user("indexinator", store=store, options=LichessOptions(
        base_url=server.url, retry_wait_429=0.01, retry_wait=0.01, timeout=(2.0, 5.0)))


@pytest.mark.parametrize(("line", "reason"), [
    (b"this is not JSON {", "truncated or invalid line"),
    (b'{"id":"broken1","createdAt":' + b"9" * 30, "truncated or invalid line"),
    (b"[1, 2, 3]", "truncated or invalid line"),  # JSON, but no game object
    (b"[" * 100_000 + b"]" * 100_000, "truncated or invalid line"),  # nested too deeply
    (b"0" * (10 * MB), "game too large"),  # a 10 MB line: streamed by, linear time
])
def test_one_api_line_that_is_no_game_is_skipped_and_the_import_completes(
        store: Store, line: bytes, reason: str) -> None:
    from tests.lichess_server import LichessServer

    with LichessServer() as server:
        server.add_user("indexinator", LINES)
        victim = json.loads(LINES[1400])["id"]
        server.replace_line("indexinator", victim, line)
        summary = _api_import(server, store)
        assert summary.status == "complete", summary.message
        assert (summary.read, summary.new, summary.skipped) == (2907, 2906, {reason: 1})
        assert queries.count_games(store) == 2906
        again = _api_import(server, store)  # the next run does not stop at it either
        assert again.status == "complete"


def test_a_bad_api_line_is_counted_once_when_the_stream_breaks_after_it(store: Store) -> None:
    from tests.lichess_server import LichessServer

    with LichessServer() as server:
        server.add_user("indexinator", LINES)
        victim = json.loads(LINES[1400])["id"]
        server.replace_line("indexinator", victim, b"not JSON")
        served = [g.id for g in server.accounts["indexinator"].games]
        # cut just after the bad line: the download resumes above it and it comes again
        server.cut_after(served.index(victim) + 1)
        summary = _api_import(server, store)
        assert summary.status == "complete", summary.message
        assert (summary.read, summary.new, summary.skipped) == (
            2907, 2906, {"truncated or invalid line": 1})
        assert len(server.game_requests()) == 2


def test_the_stream_reader_is_linear_and_cuts_anywhere() -> None:
    from tracker.sources.lichess.client import BadLine, read_game_stream

    body = (LINES[0] + "\n" + "x" * 5000 + "\n\n" + LINES[1] + "\n").encode()
    for size in (1, 7, 1000, 1 << 16):
        pieces = [body[i : i + size] for i in range(0, len(body), size)]
        got = list(read_game_stream(pieces, max_line_bytes=4000))
        assert [g["id"] if isinstance(g, dict) else g.reason for g in got] == [
            json.loads(LINES[0])["id"], "game too large", json.loads(LINES[1])["id"]]
        assert isinstance(got[1], BadLine)
    with pytest.raises(ValueError, match="ends in the middle of a line"):
        list(read_game_stream([body[:-40]]))
