"""A throwaway PostgreSQL server for the tests, on 127.0.0.1 and a free port.

Uses ``$TRACKER_TEST_PG_URL`` when set; otherwise starts a private cluster with the machine's
``initdb``/``pg_ctl`` (PostgreSQL refuses to run as root, so as root it runs them as the
``postgres`` user). Returns ``None`` with a reason when neither is possible, and the caller
skips with that reason.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def postgres_url() -> Iterator[tuple[str | None, str]]:
    """Yields ``(url, reason)``; ``url`` is ``None`` when no server could be had."""
    env_url = os.environ.get("TRACKER_TEST_PG_URL")
    if env_url:
        yield env_url, ""
        return
    initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
    if not initdb or not pg_ctl:
        yield None, "no PostgreSQL server binaries (initdb, pg_ctl) on this machine"
        return
    prefix: list[str] = []
    if os.geteuid() == 0:
        runuser = shutil.which("runuser")
        if runuser is None:
            yield None, "running as root without runuser: cannot start PostgreSQL"
            return
        prefix = [runuser, "-u", "postgres", "--"]
    tmp = Path(tempfile.mkdtemp(prefix="tracker-pg-"))
    data = tmp / "data"
    if prefix:
        shutil.chown(tmp, "postgres")
    port = _free_port()
    log = tmp / "server.log"
    try:
        subprocess.run([*prefix, initdb, "-D", str(data), "-U", "tracker", "-A", "trust",
                        "--no-sync", "-E", "UTF8"], check=True, capture_output=True)
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(data), "-l", str(log), "-w", "-t", "30", "-o",
             f"-h 127.0.0.1 -p {port} -k {tmp} -F", "start"],
            check=True, capture_output=True,
        )
    except (subprocess.CalledProcessError, OSError) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        yield None, f"could not start PostgreSQL: {exc}"
        return
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"postgresql+psycopg://tracker@127.0.0.1:{port}/postgres", ""
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
