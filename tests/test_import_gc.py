"""An import pauses Python's cyclic garbage collector for its run and gives it back as it was."""

from __future__ import annotations

import gc

import pytest

from tests.conftest import INDEXINATOR
from tracker.importing import import_file
from tracker.importing.runner import ImportRecorder
from tracker.store.db import Store


def test_the_collector_is_paused_during_the_run_and_enabled_after(store: Store) -> None:
    assert gc.isenabled()
    with ImportRecorder(store, "file", "x.ndjson") as rec:
        assert not gc.isenabled()
    assert gc.isenabled() and rec.summary.status == "complete"
    assert import_file(INDEXINATOR, store=store).new == 2907
    assert gc.isenabled()


def test_the_collector_is_given_back_after_a_failed_run(store: Store) -> None:
    with pytest.raises(RuntimeError), ImportRecorder(store, "file", "x.ndjson") as rec:
        raise RuntimeError("boom")
    assert gc.isenabled() and rec.summary.status == "failed"


def test_a_collector_the_caller_disabled_stays_disabled(store: Store) -> None:
    gc.disable()
    try:
        assert import_file(INDEXINATOR, store=store).new == 2907
        assert not gc.isenabled()
    finally:
        gc.enable()
