"""``tracker analyse`` with an engine that misbehaves (issue 32, item 5): fake UCI engines,
small Python scripts written here, that never answer ``go``, answer an illegal ``bestmove`` or
``pv``, or a score beyond 64 bits. Each position has a bounded time; each failure is one line
naming the engine, and nothing of the game is stored."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.test_analyse import bare_export
from tracker.importing import import_file
from tracker.importing.analyse import run_analyse
from tracker.sources import engine as engine_module
from tracker.sources.engine import (
    EngineFailedError,
    EngineMissingError,
    LocalEngine,
    find_engine,
)
from tracker.store.db import Store

#: What the fake engine answers to ``go``: the lines after ``info depth 1``.
ANSWERS = {
    "silent": "",
    "illegal_bestmove": "info depth 1 score cp 10 nodes 1000 pv e2e4\nbestmove a1a8",
    "illegal_pv": "info depth 1 score cp 10 nodes 1000 pv e7e1 a1h8\nbestmove (none)",
    "huge_score": f"info depth 1 score cp {'9' * 30} nodes 1000 pv e2e4\nbestmove e2e4",
}


def fake_engine(tmp_path: Path, answer: str) -> Path:
    """A UCI engine named ``Fake 0.1`` that answers every ``go`` with ``ANSWERS[answer]``."""
    path = tmp_path / f"fake-{answer}"
    path.write_text(f"""#!{sys.executable}
import sys
ANSWER = {ANSWERS[answer]!r}
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "uci":
        print("id name Fake 0.1\\noption name Threads type spin default 1 min 1 max 512\\n"
              "option name Hash type spin default 16 min 1 max 33554432\\nuciok", flush=True)
    elif cmd[0] == "isready":
        print("readyok", flush=True)
    elif cmd[0] == "go" and ANSWER:
        print(ANSWER, flush=True)
    elif cmd[0] == "quit":
        break
""")
    path.chmod(0o755)
    return path


@pytest.fixture(autouse=True)
def _short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "GRACE_S", 2.0)


def test_a_position_has_a_time_derived_from_the_node_budget() -> None:
    assert LocalEngine.position_limit_s.__doc__ is not None
    engine = LocalEngine.__new__(LocalEngine)
    engine.nodes = 100_000
    assert engine.position_limit_s() == 100_000 / 50_000 + 2.0


@pytest.mark.parametrize(("answer", "says"), [
    ("silent", "the engine Fake 0.1 ({path}) gave no answer within 2 s for a position of "
               "game g1 (1,000 nodes): stopped"),
    # the search asks for the best move (``play``): an illegal one stops it at once
    ("illegal_bestmove", "the engine Fake 0.1 ({path}) stopped: illegal uci: 'a1a8' in "
                         "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
    ("huge_score", "the engine Fake 0.1 ({path}) answered an eval out of range "
                   "(99999999999999999999…) for a position of game g1: stopped"),
])
def test_a_bad_engine_fails_in_one_line_naming_it(
        tmp_path: Path, capfd: pytest.CaptureFixture[str], answer: str, says: str) -> None:
    path = fake_engine(tmp_path, answer)
    with LocalEngine(1_000, path) as engine, pytest.raises(EngineFailedError) as info:
        engine.analyse_game("g1", ["e4", "e5"])
    assert str(info.value).startswith(says.format(path=path))
    assert "\n" not in str(info.value)
    assert "Traceback" not in capfd.readouterr().err


def test_an_illegal_pv_gives_no_best_move_and_no_traceback(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = fake_engine(tmp_path, "illegal_pv")
    with LocalEngine(1_000, path) as engine:
        game = engine.analyse_game("g1", ["e4", "e5"])
    assert [(e.cp, e.best) for e in game.analysis.evals] == [(-10, None), (10, None)]
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("answer", ["silent", "huge_score"])
def test_analyse_with_a_bad_engine_stores_nothing_and_says_why(
        any_store: Store, tmp_path: Path, answer: str) -> None:
    import_file(bare_export(tmp_path), store=any_store)
    summary = run_analyse(any_store, "reda46", nodes=1_000, last=2,
                          engine_path=str(fake_engine(tmp_path, answer)))
    assert summary.analysed == 0
    assert summary.status == "partial"
    assert summary.message is not None and "the engine Fake 0.1" in summary.message
    with any_store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM game_analysis")).scalar() == 0


@pytest.mark.parametrize(("answer", "says"), [
    ("illegal_pv", b"1 analysed by Fake 0.1 at 1,000 nodes"),
    ("huge_score", b"the engine Fake 0.1 ("),
])
def test_the_cli_says_one_line(tmp_path: Path, answer: str, says: bytes) -> None:
    db = tmp_path / "t.db"
    with Store(str(db)) as store:
        import_file(bare_export(tmp_path), store=store)
    done = subprocess.run(
        [sys.executable, "-m", "tracker.cli.commands",
         "--db", str(db), "analyse", "reda46", "--nodes",
         "1000", "--last", "1", "--engine", str(fake_engine(tmp_path, answer))],
        capture_output=True, timeout=120)
    out = done.stdout + done.stderr
    assert b"Traceback" not in out and b"Exception" not in out, out
    assert says in out, out
    assert len(out.decode().splitlines()) == 1, out


def test_a_file_that_is_no_program_is_not_an_engine(tmp_path: Path) -> None:
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")  # there, not executable
    with pytest.raises(EngineMissingError) as info:
        find_engine(text)
    assert str(info.value) == (f"not an engine: {text} (not executable): give the path of a "
                               "UCI engine such as Stockfish")  # was "no engine at …"
    with pytest.raises(EngineMissingError, match=r"^no engine at "):
        find_engine(tmp_path / "missing")


def test_a_program_that_speaks_no_uci_is_not_an_engine(tmp_path: Path) -> None:
    quits = tmp_path / "quits"
    quits.write_text("#!/bin/sh\nexit 0\n")
    quits.chmod(0o755)
    with pytest.raises(EngineFailedError) as info:
        LocalEngine(1_000, quits)
    assert str(info.value) == (f"not an engine: {quits} does not answer as a UCI engine "
                               "(engine process died unexpectedly (exit code: 0))")
    db = tmp_path / "t.db"
    with Store(str(db)) as store:
        import_file(bare_export(tmp_path), store=store)
    done = subprocess.run(
        [sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "analyse", "reda46",
         "--nodes", "1000", "--last", "1", "--engine", str(quits)],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    # a run again cannot mend it: not "…; run the same command again to go on"
    assert done.stdout.rstrip().endswith(
        f"partial: not an engine: {quits} does not answer as a UCI engine (engine process "
        "died unexpectedly (exit code: 0))"), done.stdout
