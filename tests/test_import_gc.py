"""Python's cyclic garbage collector is paused only where the process allows it: the ``tracker``
command's entry allows it, for its imports' runs and saved-pass reads; library code (a program
using :mod:`tracker.api`, the dashboard's server) never pauses it on its own. Where paused, it
is given back as it was, also after a failed run."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import INDEXINATOR
from tracker.core import collector
from tracker.importing import import_file
from tracker.importing.runner import ImportRecorder
from tracker.store.db import Store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def pauses_allowed() -> Iterator[None]:
    """This process allows pauses, as the ``tracker`` command's process does."""
    collector.allow_pauses()
    try:
        yield
    finally:
        collector.allow_pauses(False)


def test_library_code_leaves_the_collector_alone(store: Store) -> None:
    assert gc.isenabled() and not collector.pauses_allowed()
    with ImportRecorder(store, "file", "x.ndjson") as rec:
        assert gc.isenabled()
    assert rec.summary.status == "complete"
    with collector.paused() as paused:
        assert paused is False and gc.isenabled()
    assert import_file(INDEXINATOR, store=store).new == 2907
    assert gc.isenabled()


@pytest.mark.usefixtures("pauses_allowed")
def test_where_allowed_the_collector_is_paused_during_the_run_and_enabled_after(
        store: Store) -> None:
    with ImportRecorder(store, "file", "x.ndjson") as rec:
        assert not gc.isenabled()
    assert gc.isenabled() and rec.summary.status == "complete"
    assert import_file(INDEXINATOR, store=store).new == 2907
    assert gc.isenabled()
    with collector.paused() as paused:
        assert paused is True and not gc.isenabled()
    assert gc.isenabled()


@pytest.mark.usefixtures("pauses_allowed")
def test_the_collector_is_given_back_after_a_failed_run(store: Store) -> None:
    with pytest.raises(RuntimeError), ImportRecorder(store, "file", "x.ndjson") as rec:
        raise RuntimeError("boom")
    assert gc.isenabled() and rec.summary.status == "failed"


@pytest.mark.usefixtures("pauses_allowed")
def test_a_collector_the_caller_disabled_stays_disabled(store: Store) -> None:
    gc.disable()
    try:
        assert import_file(INDEXINATOR, store=store).new == 2907
        with collector.paused() as paused:
            assert paused is False
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_tracker_command_allows_pauses_and_nothing_else_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.cli.commands import main

    monkeypatch.setattr(sys, "argv", ["tracker", "--version"])
    try:
        with pytest.raises(SystemExit) as exit_:
            main()
        assert exit_.value.code in (0, None) and collector.pauses_allowed()
    finally:
        collector.allow_pauses(False)
    callers = sorted(str(p.relative_to(ROOT)) for folder in ("tracker", "dashboard")
                     for p in (ROOT / folder).rglob("*.py")
                     if "allow_collector_pauses()" in p.read_text(encoding="utf-8")
                     or "allow_pauses()" in p.read_text(encoding="utf-8"))
    assert callers == ["tracker/api/about.py", "tracker/cli/commands.py"]
    assert "gc.disable()" not in "".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "tracker").rglob("*.py")
        if p.name != "collector.py")
