"""Which import runs still have a process behind them.

An import run is recorded as ``running`` when it starts and gets its final status when it
ends. A process killed outright (``kill -9``, a power cut, the OOM killer) never ends its run,
so a run whose process is gone is marked **interrupted** — by ``tracker runs`` (and
:func:`tracker.api.runs`) and at the start of the next import. While it runs, the run's
``message`` says which process runs it (``running in process 1234 on host``); a process with
that number that started after the run did is another process. A run recorded on another
machine (a shared PostgreSQL database) is left as it is: its process cannot be checked here.

Every batch of games is written in the same transaction as the run's counts, so the counts of
an interrupted run are exactly what it stored.
"""

from __future__ import annotations

import os
import re
import socket

from sqlalchemy import select, update

from tracker.store.db import Store
from tracker.store.models import ImportRun
from tracker.store.runs import INTERRUPTED

__all__ = ["INTERRUPTED", "mark_interrupted", "process_gone", "running_message"]
_RUNNING = re.compile(r"^running in process (\d+) on (\S+)")


def running_message() -> str:
    """The message of a run while this process runs it."""
    return f"running in process {os.getpid()} on {socket.gethostname()}"


def _process_started_ms(pid: int) -> int | None:
    """When process ``pid`` started (ms since the epoch), from ``/proc``; ``None`` where
    unknown (no ``/proc``, no such process)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # field 22, starttime, counted after the ")" of the name
        with open("/proc/stat", encoding="ascii") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
        return (boot * 1000) + ticks * 1000 // os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def process_gone(message: str | None, started_at_ms: int) -> bool:
    """True when the run with this ``message`` (``running in process N on host``) and start
    can no longer be running: its process on this machine is gone, or that number now
    belongs to a process that started after the run."""
    m = _RUNNING.match(message or "")
    if m is None or m.group(2) != socket.gethostname():
        return False
    pid = int(m.group(1))
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, another user's
    started = _process_started_ms(pid)
    return started is not None and started > started_at_ms + 2000


def mark_interrupted(store: Store) -> list[int]:
    """Mark every ``running`` run whose process is gone as ``interrupted``; returns their
    ids. Their counts stay as stored: each batch was written with them."""
    gone: list[int] = []
    with store.engine.connect() as conn:
        rows = conn.execute(select(ImportRun.id, ImportRun.message, ImportRun.started_at_ms)
                            .where(ImportRun.status == "running")).all()
    for run_id, message, started in rows:
        if process_gone(message, started):
            gone.append(run_id)
            pid = _RUNNING.match(message or "")
            who = f"its process ({pid.group(1)})" if pid else "its process"
            with store.engine.begin() as conn:
                conn.execute(update(ImportRun).where(ImportRun.id == run_id,
                                                     ImportRun.status == "running").values(
                    status=INTERRUPTED,
                    message=f"{who} ended without finishing the run (killed, or the machine "
                            "stopped); every finished batch is kept: run the import again "
                            "to resume"))
    return gone
