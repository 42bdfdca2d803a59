"""How ``tracker dashboard`` starts its Streamlit server: errors shown to visitors as one line
(``client.showErrorDetails``), and a launch folder that cannot shadow modules (no ``cwd`` on
the server's ``sys.path``: ``python -P``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.browser import free_port
from tracker.api import launcher


def test_the_server_shows_one_line_errors_and_ignores_the_launch_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(subprocess, "call",
                        lambda cmd, env, **kw: started.append((cmd, env)) or 0)
    assert launcher.dashboard(db=tmp_path / "t.db", port=free_port()) == 0
    cmd, env = started[-1]
    assert cmd[:5] == [sys.executable, "-P", "-m", "streamlit", "run"]
    assert cmd[cmd.index("--client.showErrorDetails") + 1] == "none"
    assert env["PYTHONSAFEPATH"] == "1"
    # ``tracker dashboard`` itself becomes the server (exec): the same command line.
    execs: list[list[str]] = []

    def execve(path: str, args: list[str], env: dict[str, str]) -> None:
        execs.append(args)

    monkeypatch.setattr(os, "execve", execve)
    launcher.dashboard(db=tmp_path / "t.db", port=free_port(), replace_process=True)
    (args,) = execs
    assert args[:5] == cmd[:5]
    assert args[args.index("--client.showErrorDetails") + 1] == "none"


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return bool(r.read() == b"ok")
    except OSError:
        return False


def test_a_file_in_the_launch_folder_named_like_a_module_never_runs(tmp_path: Path) -> None:
    tracker_cmd = Path(sys.executable).parent / "tracker"
    if not tracker_cmd.exists():
        pytest.skip("the tracker command is not installed next to this Python")
    marker = tmp_path / "shadow-ran"
    for name in ("streamlit", "uuid", "tornado", "random"):  # what the server imports
        (tmp_path / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n"
            "raise SystemExit('a module from the launch folder ran')\n")
    port = free_port()
    proc = subprocess.Popen([str(tracker_cmd), "--db", str(tmp_path / "t.db"), "dashboard",
                             "--port", str(port)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not _healthy(f"http://127.0.0.1:{port}"):
            if proc.poll() is not None:
                out = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"the dashboard did not start: {out}")
            assert time.monotonic() < deadline, "the dashboard did not answer within 60 s"
            time.sleep(0.2)
        assert not marker.exists()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
