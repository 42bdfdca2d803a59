"""Headless Chromium over the DevTools protocol, for the dashboard's browser test.

Streamlit renders in the browser: the page is a skeleton until its websocket has delivered the
script's output and plotly.js has drawn. So instead of a blind ``--screenshot``, the test opens
the page, waits until a JavaScript condition holds (the chart's ``.js-plotly-plot`` drawn, the
app no longer running), then captures the screen. Uses ``websockets`` (a Streamlit dependency).
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
)


def chromium_path() -> str | None:
    """Debian's ``chromium`` (installed by ``scripts/ensure-chromium.sh``), if present."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def running_dashboard(db: Path, *args: str) -> Iterator[str]:
    """``tracker --db DB dashboard --port FREE ARGS…`` running (its output in
    ``DB's folder/dashboard-PORT.log``); yields its URL once it answers, stops it (the CLI and
    the Streamlit server it started) after. Skips the test without chromium."""
    if chromium_path() is None:
        pytest.skip("chromium is not installed: run `bash scripts/ensure-chromium.sh` (as root)")
    port = free_port()
    with serving([sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "dashboard",
                  "--port", str(port), *args], port, cwd=db.parent,
                 log=db.parent / f"dashboard-{port}.log") as url:
        yield url


def healthy(url: str) -> bool:
    """Whether the Streamlit server at ``url`` answers its health check."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return bool(r.read() == b"ok")
    except OSError:
        return False


@contextlib.contextmanager
def serving(cmd: list[str], port: int, *, cwd: Path, log: Path) -> Iterator[str]:
    """``cmd`` (a ``tracker … dashboard --port PORT``) started in a process group of its own
    in ``cwd``, its output in ``log``; yields the server's URL once it answers (fails the test
    with the log if the command ends first or nothing answers within 60 s), then stops the
    command and the Streamlit server it started."""
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=cwd)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the dashboard did not start:\n{log.read_text()}")
            time.sleep(0.2)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):  # the group may have ended already
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class Browser:
    """One headless Chromium with one page, driven over CDP. Use as a context manager."""

    def __init__(self, width: int = 1400, height: int = 1000) -> None:
        exe = chromium_path()
        if exe is None:
            raise RuntimeError("chromium is not installed")
        self._profile = tempfile.TemporaryDirectory(prefix="tracker-chromium-",
                                                    ignore_cleanup_errors=True)
        self._stack = contextlib.ExitStack()
        self.proc = subprocess.Popen(
            [exe, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile.name}",
             f"--window-size={width},{height}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        port_file = Path(self._profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.is_file() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not start (no DevToolsActivePort)")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        page = next(t for t in targets if t["type"] == "page")
        self._ws = self._stack.enter_context(
            connect(page["webSocketDebuggerUrl"], max_size=None))
        self._ids = itertools.count(1)
        self.send("Page.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Call a CDP method and return its result (events in between are skipped)."""
        msg_id = next(self._ids)
        self._ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self._ws.recv(timeout=60))
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def goto(self, url: str) -> None:
        self.send("Page.navigate", url=url)

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 60) -> bool:
        """Poll until ``expression`` is truthy in the page; False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.evaluate(expression):
                return True
            time.sleep(0.25)
        return False

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self._stack.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
