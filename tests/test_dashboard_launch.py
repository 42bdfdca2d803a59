"""How ``tracker dashboard`` starts its Streamlit server: errors shown to visitors as one line
(``client.showErrorDetails``), and a launch folder that cannot shadow modules (no ``cwd`` on
the server's ``sys.path``: ``python -P``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser import free_port, serving
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
    with serving([str(tracker_cmd), "--db", str(tmp_path / "t.db"), "dashboard", "--port",
                  str(port)], port, cwd=tmp_path, log=tmp_path / "dashboard.log"):
        assert not marker.exists()
