"""Work done in a forked process beside this one, its results streamed back as they come.

Python runs one thread of Python at a time; a machine has two cores or more. Where a long job
splits into a part that produces (reads a file, reads rows from the database) and a part
that consumes (writes, replays), :func:`beside` runs the producer in a child process made by
``fork`` (it starts at once, with everything this process has loaded and opened) and hands
its items to this process in order:

    with beside(lambda send: [send(x) for x in produce()], name="…") as items:
        for item in items:
            consume(item)

Each ``send(item)`` pickles the item and queues it (at most ``queued`` of them) for a feeder
thread that writes it to the pipe, so the child keeps working while this process is busy
with an item: a pipe alone holds ~64 KB, and the two would take turns instead of running
together. The items come out in the order they were sent. An error in the child is raised
here once the items sent before it are taken, as it was raised there (its one line, when it
does not pickle); a child that dies raises :class:`ForkedProcessError`. Ctrl+C and SIGTERM
are this process's to act on: the child ignores them, and is ended (SIGKILL) and reaped when
the ``with`` block ends, however it ends. A child whose parent was killed (even by SIGKILL)
ends too: on Linux the kernel kills it (``PR_SET_PDEATHSIG``), and else its next ``send``
finds the pipe closed (each process holds only its own end of the pipe) or its parent
changed, and it exits.

Used only where a fork is safe and possible (:func:`available`): Linux (``fork``; not macOS,
where system libraries run threads of their own), from the main thread (a thread of a busy
server, such as the dashboard's, may hold a lock the child would wait on forever), unless
``TRACKER_PROCESSES=1`` asks for one process. The work must not use a connection this process
opened: a database store disposes of its pool in the child first (SQLAlchemy's fork recipe).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from tracker.core import config
from tracker.core.errors import TrackerError

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

#: ``TRACKER_PROCESSES=1``: every job in one process (the results are the same).
ENV_SWITCH: Final = config.ENV_PROCESSES
#: Items the child may have queued for the pipe while this process is busy.
QUEUED: Final = 8

#: ``send(item)``: what the work in the child calls for each item it hands over.
Send = Callable[[Any], None]


class ForkedProcessError(TrackerError):
    """The child process stopped without finishing its work (killed, out of memory)."""


def available() -> bool:
    """Whether :func:`beside` may fork here (see the module's docstring)."""
    return (not config.one_process() and sys.platform != "darwin"
            and "fork" in multiprocessing.get_all_start_methods()
            and threading.current_thread() is threading.main_thread())


#: Linux's ``prctl`` option: the signal the kernel sends a process when its parent dies.
_PR_SET_PDEATHSIG: Final = 1


def _die_with_parent(parent: int) -> None:
    """In the child: be killed when the parent process dies (Linux), and exit at once if it
    died already (the child then has another parent)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # no libc: the checks below remain
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    _exit_if_orphaned(parent)


def _exit_if_orphaned(parent: int) -> None:
    """Exit now when the process that forked this one is gone (this one was re-parented)."""
    if os.getppid() != parent:
        os._exit(1)


class _Feeder(threading.Thread):
    """The child's writer to the pipe: one blocking write a message, outside the GIL, from a
    queue the work fills. A closed pipe (the parent gone) is kept as :attr:`error`; the queue
    is then drained, so the work never waits on it."""

    def __init__(self, conn: Connection, queued: int, parent: int) -> None:
        super().__init__(name="tracker forked feeder", daemon=True)
        self.conn = conn
        self.parent = parent
        self.queue: queue.Queue[bytes | None] = queue.Queue(queued)
        self.error: OSError | None = None

    def run(self) -> None:
        while (payload := self.queue.get()) is not None:
            if self.error is None:
                try:
                    self.conn.send_bytes(payload)
                except OSError as exc:
                    self.error = exc

    def send(self, message: tuple[Any, ...]) -> None:
        """Queue ``message`` (pickled here); raises the pipe's error once it is closed, and
        exits the process when its parent is gone."""
        _exit_if_orphaned(self.parent)
        if self.error is not None:
            raise self.error
        self.queue.put(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))

    def close(self) -> None:
        """Send what is queued, then stop."""
        self.queue.put(None)
        self.join()


def _child(conn: Connection, other: Connection, parent: int, work: Callable[[Send], None],
           queued: int) -> None:
    """The child process: ``work(send)``, then say how it ended. ``other`` is the parent's
    end of the pipe, inherited by the fork: closed here, so that once the parent is gone a
    write finds no reader (else it would wait forever on a pipe it reads itself)."""
    other.close()
    _die_with_parent(parent)
    for sig in (signal.SIGINT, signal.SIGTERM):  # the parent's to act on
        signal.signal(sig, signal.SIG_IGN)
    feeder = _Feeder(conn, queued, parent)
    feeder.start()
    try:
        work(lambda item: feeder.send(("item", item)))
        feeder.send(("end",))
    except BaseException as exc:  # every error goes to the parent, which raises it
        try:
            pickle.dumps(exc)
        except Exception:  # an error that does not pickle: its one line
            exc = TrackerError(f"{type(exc).__name__}: {exc}")
        with contextlib.suppress(OSError):  # the parent is gone: nobody to tell
            feeder.send(("error", exc))
    finally:
        feeder.close()
        conn.close()


def _items(receive: Connection, process: multiprocessing.process.BaseProcess, name: str,
           then: str) -> Iterator[Any]:
    while True:
        try:
            message: tuple[Any, ...] = receive.recv()
        except (EOFError, OSError):  # OSError: it died in the middle of a message
            process.join()
            raise ForkedProcessError(
                f"the {name} process stopped (exit code {process.exitcode}) before the end of "
                f"its work{'; ' + then if then else ''}") from None
        if message[0] == "item":
            yield message[1]
        elif message[0] == "end":
            return
        else:
            raise message[1]


@contextmanager
def beside(work: Callable[[Send], None], *, name: str, then: str = "", queued: int = QUEUED
           ) -> Iterator[Iterator[Any]]:
    """Run ``work(send)`` in a forked child; yields the iterator of what it sends (see the
    module's docstring). ``name`` names the child in the error raised when it dies ("the
    reader process stopped (exit code -9) before the end of its work"), ``then`` what to do
    about it, after a semicolon. Call it only where :func:`available`."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, receive, os.getpid(), work, queued),
                              name=f"tracker {name}", daemon=True)
    process.start()
    send.close()  # the child's end: closed here, so the child's copy is the only one
    try:
        yield _items(receive, process, name, then)
    finally:
        receive.close()
        if process.is_alive():
            process.kill()
        process.join()
