"""tracker.core.forked: work in a forked child, its items streamed back in order; its errors, its
death and an early stop here all end it, reaped."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tracker.core import forked
from tracker.core.errors import TrackerError
from tracker.core.forked import ForkedProcessError, Send, beside


@pytest.fixture(autouse=True)
def _allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(forked.ENV_SWITCH, raising=False)


def test_the_items_come_in_order_and_more_than_the_queue_holds() -> None:
    def work(send: Send) -> None:
        for i in range(100):
            send((i, os.getpid(), b"x" * 100_000))  # 10 MB in all: far past a pipe's 64 KB

    with beside(work, name="test", queued=2) as items:
        got = list(items)
    assert [i for i, _, _ in got] == list(range(100))
    assert {pid for _, pid, _ in got} != {os.getpid()}  # made in another process
    assert multiprocessing.active_children() == []


def test_an_error_comes_after_the_items_sent_before_it() -> None:
    def work(send: Send) -> None:
        send(1)
        send(2)
        raise ValueError("bad line 3")

    got = []
    with pytest.raises(ValueError, match="bad line 3"), beside(work, name="test") as items:
        for item in items:
            got.append(item)
    assert got == [1, 2]
    assert multiprocessing.active_children() == []


def test_an_error_that_does_not_pickle_comes_as_its_one_line() -> None:
    class Local(Exception):  # defined in a function: pickle cannot find it by name
        pass

    def work(send: Send) -> None:
        raise Local("the disk is gone")

    with pytest.raises(TrackerError, match=r"^Local: the disk is gone$"), \
            beside(work, name="test") as items:
        list(items)


def test_a_child_that_dies_raises_in_one_line() -> None:
    def work(send: Send) -> None:
        os._exit(7)  # what it queued and the feeder had not written yet is lost with it

    with beside(work, name="reader", then="run it again") as items, \
            pytest.raises(ForkedProcessError) as info:
        next(items)
    assert str(info.value) == ("the reader process stopped (exit code 7) before the end of "
                               "its work; run it again")


def test_stopping_early_ends_the_child() -> None:
    def work(send: Send) -> None:
        while True:  # never ends by itself
            send(b"y" * 10_000)

    started = time.monotonic()
    with beside(work, name="test") as items:
        assert next(items) == b"y" * 10_000
    assert multiprocessing.active_children() == []
    assert time.monotonic() - started < 30  # ended, not waited for


def test_available_only_from_the_main_thread_and_unless_switched_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert forked.available()
    seen: list[bool] = []
    thread = threading.Thread(target=lambda: seen.append(forked.available()))
    thread.start()
    thread.join()
    assert seen == [False]
    monkeypatch.setenv(forked.ENV_SWITCH, "1")
    assert not forked.available()


def test_a_child_killed_in_the_middle_of_a_message_raises_in_one_line() -> None:
    def work(send: Send) -> None:
        send(b"z" * 10_000_000)  # far past a pipe's 64 KB: the feeder waits inside the write
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)

    with beside(work, name="reader") as items, pytest.raises(ForkedProcessError) as info:
        deadline = time.monotonic() + 30
        while multiprocessing.active_children():  # not read until it is dead: a cut message
            assert time.monotonic() < deadline
            time.sleep(0.05)
        next(items)
    assert str(info.value) == "the reader process stopped (exit code -9) before the end of its work"


def test_the_child_holds_only_its_own_end_of_the_pipe_and_ends_when_its_parent_dies(
        tmp_path: Path) -> None:
    """A middle process runs beside(); it is killed (SIGKILL, nothing of it runs) while its
    child is blocked writing to the pipe: the child goes too."""
    pid_file = tmp_path / "child.pid"
    middle = os.fork()
    if middle == 0:  # the parent to be killed
        try:
            def work(send: Send) -> None:
                pid_file.write_text(str(os.getpid()))
                while True:
                    send(b"w" * 100_000)

            with beside(work, name="test"):
                time.sleep(60)
        finally:
            os._exit(0)
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    child = int(pid_file.read_text())
    time.sleep(0.3)  # its pipe full: it waits in a write
    os.kill(middle, signal.SIGKILL)
    os.waitpid(middle, 0)
    assert gone_within(child, 10)


def gone_within(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` ended (no longer in /proc, or a zombie) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False
