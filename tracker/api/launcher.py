"""``tracker dashboard``: start the Streamlit app on a database (a process launcher).

The Python twin of ``tracker dashboard`` (:func:`dashboard`): it checks the port, opens the
database (so a database that cannot be opened is one line, before anything starts), then
runs ``streamlit run dashboard/app.py`` with ``$TRACKER_DB`` set to that database.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from tracker.api._db import open_store, read_only_mode
from tracker.core import config
from tracker.core.errors import ArgumentError, DashboardError, PortError

if TYPE_CHECKING:
    from tracker.api._db import Db

#: ``client.showErrorDetails``: Streamlit's least revealing value (no message, type or trace
#: of an uncaught exception; the app's own one-line ``st.error`` messages still show).
SHOW_ERROR_DETAILS = "none"


def app_path() -> Path:
    """The dashboard's ``app.py``: ``dashboard/`` in a source checkout, ``tracker/_dashboard/``
    in an installed wheel."""
    here = Path(__file__).resolve().parent.parent  # the tracker package
    app = here.parent / "dashboard" / "app.py"
    return app if app.is_file() else here / "_dashboard" / "app.py"


def check_port_range(port: int) -> None:
    """Raise PortError (a usage error, one line) unless ``port`` is 1-65535."""
    if not 1 <= port <= 65535:
        raise PortError(f"port must be between 1 and 65535, not {port}")


def check_port(host: str, port: int) -> None:
    """Raise DashboardError (one line) unless ``port`` is 1-65535 and free at ``host``.

    Binds as the server will (SO_REUSEADDR: a port in TIME_WAIT is free), so a busy port is
    refused before any banner announces it.
    """
    check_port_range(port)
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                       flags=socket.AI_PASSIVE)
        for family, kind, proto, _, address in addresses:
            with socket.socket(family, kind, proto) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:  # as tornado does: IPv4 is bound on its own
                    probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                probe.bind(address)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise DashboardError(f"port {port} is in use: pick another with --port") from None
        raise DashboardError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only: a loopback address (``127.0.0.1``, ``::1``) or
    a name every address of which is one (``localhost``). ``""`` and ``0.0.0.0`` listen on
    every interface: not loopback."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    if not host:
        return False
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return False
    return bool(found) and all(ipaddress.ip_address(str(a[4][0]).split("%")[0]).is_loopback
                               for a in found)


class WritesNotAllowedError(DashboardError, ArgumentError):
    """``--host`` beyond this machine without ``--read-only`` or ``--allow-writes``: a usage
    error (exit code 2)."""


def check_exposure(host: str, *, read_only: bool, allow_writes: bool) -> str | None:
    """The rule for serving beyond this machine: a ``host`` that is not loopback needs
    ``read_only`` (the club sees, nobody writes) or an explicit ``allow_writes``. Returns the
    warning to print (``None``: none); raises WritesNotAllowedError (exit code 2) when
    neither is given, ArgumentError when both are."""
    if read_only and allow_writes:
        raise ArgumentError("--read-only and --allow-writes contradict each other: give one")
    if read_only or is_loopback(host):
        return None
    if not allow_writes:
        raise WritesNotAllowedError(
            f"--host {host} serves the dashboard beyond this machine, and anyone who reaches "
            "it could import games and change settings: add --read-only to serve it "
            "read-only, or --allow-writes to serve it writable anyway")
    return (f"warning: the dashboard on {host} is writable by anyone who can reach it "
            "(imports, settings, FIDE links); --read-only serves it read-only")


def dashboard(*, db: Db = None, port: int = 8501, host: str = "127.0.0.1",
              replace_process: bool = False, read_only: bool = False,
              allow_writes: bool = False) -> int:
    """Run the Streamlit app until it stops; returns its exit code.

    ``replace_process``: the calling process becomes the Streamlit server (``exec``; what the
    ``tracker dashboard`` command does), so a SIGTERM or SIGINT sent to it stops the server
    itself and no server is left behind. Otherwise the server is a child process: a SIGTERM
    (in the main thread) or Ctrl+C stops it before this returns.

    Raises DashboardError (one line) when ``port`` is not 1-65535 or cannot be listened on at
    ``host`` (in use, or an address not on this machine): checked before the banner, so a
    busy port is not announced as the dashboard's URL. A database that cannot be opened is
    one line too (DatabaseError), before anything starts.

    ``read_only`` (or ``$TRACKER_READ_ONLY``): the app opens the database read-only (the
    Import page gone, Settings shown but not editable, every write of :mod:`tracker.api`
    refused; every page says so); the database must exist at this tracker's schema. A
    ``host`` beyond this machine needs ``read_only`` or ``allow_writes`` (which prints a
    warning): see :func:`check_exposure`.
    """
    check_port_range(port)
    read_only = read_only or read_only_mode()
    warning = check_exposure(host, read_only=read_only, allow_writes=allow_writes)
    # one line here if the database cannot be opened (read-only: missing, or an old schema)
    store = open_store(db, create=not read_only, read_only=read_only)
    # A database that refuses this role's writes (a PostgreSQL role granted only SELECT) is
    # served read-only: no Import page, no engine panel, rather than forms that fail.
    read_only = read_only or store.read_only
    url = store.url
    check_port(host, port)
    cmd = [
        # -P: the launch folder is not put on sys.path, so a file there named like a module
        # (``random.py``, ``streamlit.py``) cannot run inside the server.
        sys.executable, "-P", "-m", "streamlit", "run", str(app_path()),
        "--server.address", host, "--server.port", str(port),
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
        "--client.toolbarMode", "minimal",
        # An error is shown to visitors as one line: no traceback, no server paths.
        "--client.showErrorDetails", SHOW_ERROR_DETAILS,
        # Streamlit's own "You can now view … URL: …" then ends the output, with the URL last;
        # its info-level server log line would come after our banner and before it.
        "--logger.level", "warning",
    ]
    env = config.child_environment(url, read_only=read_only)
    if warning is not None:
        print(warning, file=sys.stderr)
    mode = "  read-only" if read_only else ""
    print(f"tracker dashboard: http://{host}:{port}{mode}  (Ctrl+C to stop)", file=sys.stderr)
    if store is not db:
        store.close()
    if replace_process:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, cmd, env)  # never returns: this process is the server now

    def stop(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt  # subprocess.call then stops the server and waits for it

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, stop) if in_main else None
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 0
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
