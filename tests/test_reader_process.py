"""A file import's reader in a process of its own (tracker/importing/reader_process.py): the
same games, rows and counts as the one-process import, and nothing lost when the reader
fails, dies, or the writer is interrupted."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tracker.core import forked
from tracker.core.errors import InterruptedRun
from tracker.core.forked import ForkedProcessError
from tracker.importing import files, import_file, reader_process
from tracker.importing.runner import ImportRecorder, ImportSummary
from tracker.sources.files import open_inputs
from tracker.store import queries
from tracker.store.db import Store

from .conftest import CMRADE, INDEXINATOR, stored_rows

N_INDEXINATOR = 2907


@pytest.fixture
def always(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file is read in a reader process, however small."""
    monkeypatch.setattr(reader_process, "MIN_BYTES", 0)
    monkeypatch.delenv(forked.ENV_SWITCH, raising=False)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records, per file read, whether it went to a reader process."""
    seen: list[bool] = []
    real = reader_process.read_in_child

    def read_in_child(*args: Any, **kwargs: Any) -> Any:
        seen.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(reader_process, "read_in_child", read_in_child)
    return seen


def _edge_file(path: Path) -> Path:
    """30 real games, then every kind of line a reader skips or repairs: bad JSON, a blank
    line, a game of cp1252 bytes, a game twice with more moves the second time, an invalid
    value, and a last line cut without its end."""
    lines = INDEXINATOR.read_bytes().splitlines()[:34]
    game = json.loads(lines[30])
    twice = json.loads(lines[31])
    shorter = dict(twice, moves=" ".join(twice["moves"].split()[:-2]))
    bad_value = json.loads(lines[32])
    bad_value["players"]["white"]["rating"] = 99_999  # a rating out of range
    cp1252 = json.dumps(dict(game, id="cp1252ok")).replace("indexinator", "Jos\u00e9")
    out = [*lines[:30], b'{"id": "broken", ', b"",
           cp1252.encode("cp1252"), json.dumps(shorter).encode(), json.dumps(twice).encode(),
           json.dumps(bad_value).encode()]
    path.write_bytes(b"\n".join(out) + b"\n" + lines[33][:200])
    return path


def _summary_fields(s: ImportSummary) -> tuple[Any, ...]:
    return (s.status, s.message, s.read, s.new, s.updated, s.unchanged, s.skipped, s.repaired,
            s.player, s.player_name, s.players, s.evals, s.warnings)


def _import_both(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: Any
                 ) -> list[tuple[tuple[Any, ...], Any]]:
    """Import ``path`` into two new databases, in one process and with a reader process:
    the summaries' fields and the stored rows of each."""
    got = []
    for switch in ("1", ""):  # one process, then the reader beside the writer
        monkeypatch.setenv(forked.ENV_SWITCH, switch)
        with Store(str(tmp_path / f"reader-{switch}.db")) as store:
            summary = import_file(path, store=store, **kwargs)
            got.append((_summary_fields(summary), stored_rows(store)))
    return got


@pytest.mark.usefixtures("always")
def test_the_real_export_is_stored_the_same_with_a_reader_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: list[bool]) -> None:
    alone, beside = _import_both(INDEXINATOR, tmp_path, monkeypatch)
    assert spy == [True]  # the second import went through the reader process
    assert alone == beside
    assert alone[0][:6] == ("complete", None, N_INDEXINATOR, N_INDEXINATOR, 0, 0)
    games, sides = alone[1]
    assert (len(games), len(sides)) == (N_INDEXINATOR, 2 * N_INDEXINATOR)


@pytest.mark.usefixtures("always")
def test_skips_repairs_and_a_cut_last_line_are_counted_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: list[bool]) -> None:
    path = _edge_file(tmp_path / "edges.ndjson")
    alone, beside = _import_both(path, tmp_path, monkeypatch)
    assert spy == [True]
    assert alone == beside
    status, message, read, new, updated, unchanged, skipped, repaired, *_ = alone[0]
    assert status == "partial" and "cut in the middle of a game" in message
    # 30 games, a repaired cp1252 game, one game twice (the longer copy wins), 3 bad lines
    assert (read, new, updated, unchanged) == (36, 32, 1, 0)
    assert skipped == {"invalid value": 1, "truncated or invalid line": 2}
    assert repaired == {"not UTF-8, read as cp1252": 1}


@pytest.mark.usefixtures("always")
def test_a_pgn_file_and_a_user_filter_are_read_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: list[bool]) -> None:
    alone, beside = _import_both(CMRADE, tmp_path, monkeypatch, user="cmrade")
    assert spy == [True]
    assert alone == beside
    assert alone[0][:4] == ("complete", None, 474, 474)


@pytest.mark.usefixtures("always")
def test_a_reimport_is_screened_in_the_reader_process(any_store: Store, spy: list[bool]
                                                      ) -> None:
    first = import_file(INDEXINATOR, store=any_store)
    again = import_file(INDEXINATOR, store=any_store)
    assert spy == [True, True]
    assert (first.new, first.unchanged) == (N_INDEXINATOR, 0)
    assert (again.read, again.new, again.updated, again.unchanged, again.player) == (
        N_INDEXINATOR, 0, 0, N_INDEXINATOR, "indexinator")
    assert queries.count_games(any_store) == N_INDEXINATOR


@pytest.mark.usefixtures("always", "file_batches_of_500")
def test_an_error_in_the_reader_keeps_what_it_read_and_the_next_run_resumes(
        db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = files._import_one

    class Failing:  # the reader's sink, failing after 1,500 games
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

        def add(self, record: Any) -> None:
            if self.inner.read == 1500:
                raise OSError("the disk holding the file failed")
            self.inner.add(record)

    monkeypatch.setattr(files, "_import_one",
                        lambda f, sink, *args: real(f, Failing(sink), *args))
    store = Store(str(db_path))
    with pytest.raises(OSError, match="the disk holding the file failed"):
        import_file(INDEXINATOR, store=store)
    run = queries.import_runs(store)[0]
    assert (run.status, run.read, run.new) == ("failed", 1500, 1500)
    assert "the disk holding the file failed" in run.message
    assert queries.count_games(store) == 1500
    assert multiprocessing.active_children() == []  # the reader process was reaped

    monkeypatch.setattr(files, "_import_one", real)
    summary = import_file(INDEXINATOR, store=store)
    assert (summary.new, summary.unchanged, summary.status) == (
        N_INDEXINATOR - 1500, 1500, "complete")


@pytest.mark.usefixtures("always")
def test_a_reader_that_dies_fails_the_run_in_one_line(db_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "_import_one", lambda *args: os._exit(3))
    store = Store(str(db_path))
    with pytest.raises(ForkedProcessError) as info:
        import_file(INDEXINATOR, store=store)
    assert str(info.value) == ("the reader process stopped (exit code 3) before the end of "
                               "its work; run the import again to resume")
    run = queries.import_runs(store)[0]
    assert (run.status, run.message) == ("failed", str(info.value))
    assert multiprocessing.active_children() == []


@pytest.mark.usefixtures("always", "file_batches_of_500")
def test_ctrl_c_in_the_writer_keeps_its_batches_and_ends_the_reader(
        db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = ImportRecorder.add_read
    calls = [0]

    def add_read(self: ImportRecorder, *args: Any) -> None:
        calls[0] += 1
        if calls[0] == 3:  # two messages of 1,000 games in: 4 batches of 500 written
            raise KeyboardInterrupt
        real(self, *args)

    monkeypatch.setattr(ImportRecorder, "add_read", add_read)
    store = Store(str(db_path))
    with pytest.raises(InterruptedRun) as info:  # a KeyboardInterrupt, with the run's summary
        import_file(INDEXINATOR, store=store)
    summary = info.value.summary
    assert isinstance(summary, ImportSummary)
    assert (summary.status, summary.read, summary.new) == ("partial", 2000, 2000)
    assert queries.count_games(store) == 2000
    assert multiprocessing.active_children() == []

    monkeypatch.setattr(ImportRecorder, "add_read", real)
    again = import_file(INDEXINATOR, store=store)
    assert (again.new, again.unchanged) == (N_INDEXINATOR - 2000, 2000)


def _opened() -> Iterator[Any]:
    (f,) = open_inputs(INDEXINATOR)
    with f:
        yield f


@pytest.fixture
def opened() -> Iterator[Any]:
    yield from _opened()


def test_where_the_reader_process_is_used(opened: Any, db_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(forked.ENV_SWITCH, raising=False)
    file_store = Store(str(db_path))
    memory = Store("sqlite://")
    assert opened.size >= reader_process.MIN_BYTES  # 2.1 MB: over the threshold
    assert reader_process.usable(opened, file_store)
    assert not reader_process.usable(opened, memory)  # the child could not open it
    monkeypatch.setenv(forked.ENV_SWITCH, "1")
    assert not reader_process.usable(opened, file_store)
    monkeypatch.delenv(forked.ENV_SWITCH)
    monkeypatch.setattr(reader_process, "MIN_BYTES", opened.size + 1)
    assert not reader_process.usable(opened, file_store)  # a small file: not worth a fork
    monkeypatch.setattr(reader_process, "MIN_BYTES", 0)
    in_thread: list[bool] = []
    worker = threading.Thread(target=lambda: in_thread.append(
        reader_process.usable(opened, file_store)))
    worker.start()
    worker.join()
    assert in_thread == [False]  # only from the main thread


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_a_killed_import_leaves_no_reader_process_behind(tmp_path: Path) -> None:
    """``kill -9`` of a real ``tracker import-file`` of a file past MIN_BYTES: its reader
    process (blocked on the full pipe, or still reading) ends within seconds."""
    from .test_forked import gone_within

    big = tmp_path / "big.ndjson"
    big.write_bytes(INDEXINATOR.read_bytes() * 4)  # 8.5 MB: read in a reader process
    assert big.stat().st_size >= reader_process.MIN_BYTES
    env = {k: v for k, v in os.environ.items() if k != forked.ENV_SWITCH}
    proc = subprocess.Popen([sys.executable, "-m", "tracker.cli.commands",
                             "--db", str(tmp_path / "t.db"),
                             "import-file", str(big)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 60
    children: list[int] = []
    while not children:
        assert proc.poll() is None, "the import ended before its reader process was seen"
        assert time.monotonic() < deadline
        children = _children(proc.pid)
        time.sleep(0.01)
    time.sleep(0.5)  # reading, and soon waiting on the pipe
    proc.kill()
    proc.wait(timeout=30)
    assert all(gone_within(child, 5) for child in children)
