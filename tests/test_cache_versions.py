"""Each kind of saved result has a version, bumped when its computation changes: a pass or a
scale's replay computed now must be byte for byte the one saved under the same version.

The digests below are of what is saved for a fixture history (cmrade, 474 games). A change to
the selection, the Lichess line, the engine, the scale models or an encoding changes them:
then the version of that kind must be bumped (so no database reads a result the old code
saved) and the new digests pinned here, under the new version."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.conftest import CMRADE
from tracker import api
from tracker.report.saved_pass import PASS_VERSION, describe
from tracker.report.scale_runs import RUN_VERSION

#: PASS_VERSION → perf → the sha256 (16 hex) of the saved pass's payload.
PASSES: dict[int, dict[str, str]] = {
    1: {"blitz": "48bd6f704eb17e8b", "bullet": "aaf3a2b5b10f822d",
        "classical": "d6f121694772f13d", "correspondence": "f72ea0a44c4c86a0",
        "rapid": "d4d7a8c642bea0f3"},
}
#: RUN_VERSION → perf → the digests of the scales' saved replays, sorted.
RUNS: dict[int, dict[str, list[str]]] = {
    1: {"blitz": ["3507759d708e2741", "84022cc3d593101b"], "bullet": ["61e74b8ae53dbf46"],
        "classical": ["84f299e35bcb4990", "cd9d43438d4bfcc2"],
        "correspondence": ["f0040d9f69026e7d"], "rapid": ["8812c7ab49ec2300"]},
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, str]]:
    """(perf, options, digest) of every result saved by importing the fixture (the import
    computes each perf's pass and its replays ahead)."""
    db = Path(tmp_path_factory.mktemp("cache")) / "t.db"
    api.import_file(CMRADE, db=db)
    with api.open_store(db).engine.connect() as conn:
        rows = conn.execute(text("SELECT perf, kind, version, payload FROM cache_entries")
                            ).all()
    return [(perf, f"{kind}-v{version}", hashlib.sha256(bytes(payload)).hexdigest()[:16])
            for perf, kind, version, payload in rows]


def test_a_pass_computed_now_is_the_one_saved_under_its_version(
        saved: list[tuple[str, str, str]]) -> None:
    passes = {perf: digest for perf, kind, digest in saved if kind == f"pass-v{PASS_VERSION}"}
    assert PASS_VERSION in PASSES, f"pin the digests of PASS_VERSION {PASS_VERSION}: {passes}"
    assert passes == PASSES[PASS_VERSION], (
        "a saved pass changed without a new PASS_VERSION (tracker/report/saved_pass.py): bump "
        "it and pin the new digests here")


def test_a_replay_computed_now_is_the_one_saved_under_its_version(
        saved: list[tuple[str, str, str]]) -> None:
    runs: dict[str, list[str]] = {}
    for perf, kind, digest in saved:
        if kind == f"run-v{RUN_VERSION}":
            runs.setdefault(perf, []).append(digest)
    runs = {perf: sorted(digests) for perf, digests in runs.items()}
    assert RUN_VERSION in RUNS, f"pin the digests of RUN_VERSION {RUN_VERSION}: {runs}"
    assert runs == RUNS[RUN_VERSION], (
        "a scale's saved replay changed without a new RUN_VERSION "
        "(tracker/report/scale_runs.py): bump it and pin the new digests here")


def test_passes_are_listed_with_their_options_in_words(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    api.import_file(CMRADE, db=db)
    api.group_create("club", db=db)
    api.group_add("club", ["cmrade"], db=db)
    api.group_table("club", "blitz", db=db)  # saves a member's summary beside the passes
    listed = api.saved_passes(db=db)
    assert sorted(p.perf for p in listed) == ["blitz", "bullet", "classical", "correspondence",
                                              "rapid"]
    assert {(p.options, p.version) for p in listed} == {
        ("provisional opponents not counted", PASS_VERSION)}
    assert all(p.current for p in listed)


def test_describe_says_an_outdated_version() -> None:
    assert describe("p1", 0) == "provisional opponents counted, version 0, outdated"
    assert describe("p0", PASS_VERSION) == "provisional opponents not counted"
