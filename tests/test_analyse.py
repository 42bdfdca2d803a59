"""``tracker analyse``: the local engine as a source (positions in, evals out), the runner
(each finished game stored at once, Lichess's games never analysed again, resumable, Ctrl+C /
SIGTERM / stop safe) and the command. Skipped where Stockfish is not installed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.conftest import ANALYSED, INDEXINATOR_LATER
from tracker import api
from tracker.core.evals import PlyEval
from tracker.importing import import_file
from tracker.importing.analyse import run_analyse
from tracker.report.strength import engine_judgments
from tracker.sources.engine import EngineMissingError, LocalEngine, find_engine
from tracker.store import analysis as stored
from tracker.store.db import Store

try:
    ENGINE: str | None = find_engine()
    WHY = ""
except EngineMissingError as exc:
    ENGINE, WHY = None, str(exc)
needs_engine = pytest.mark.skipif(ENGINE is None, reason=f"no engine: {WHY}")

#: Small budgets keep the tests quick; the default budget is measured by the benchmark.
NODES = 2_000
SCHOLAR = ["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#"]


@needs_engine
def test_the_engine_gives_one_eval_a_ply_with_its_best_move_and_none_for_the_mated() -> None:
    with LocalEngine(NODES) as engine:
        first = engine.analyse_game("g1", SCHOLAR)
        again = engine.analyse_game("g2", SCHOLAR)
    evals = first.analysis.evals
    assert len(evals) == 6  # the mated position after 4.Qxf7# has no eval, as on Lichess
    assert evals[-1] == PlyEval(None, 1, evals[-1].best)  # after 3…Nf6?? White mates in 1
    assert evals[-1].best is not None  # Black's better move in the position before 3…Nf6
    assert all(e.best and len(e.best) in (4, 5) for e in evals)
    assert (first.analysis.source, first.analysis.engine, first.analysis.nodes) == (
        "engine", "Stockfish", NODES)
    assert first.analysis.engine_version  # e.g. "15.1"
    assert again.analysis == first.analysis  # a fresh hash per game: the same evals
    assert first.spent.positions == 7 and first.spent.nodes >= 7 * NODES * 0.9


@needs_engine
def test_an_illegal_move_is_refused_whole() -> None:
    with (LocalEngine(NODES) as engine,
          pytest.raises(ValueError, match=r"^move 1\.\.\.e4 is illegal there$")):
        engine.analyse_game("g", ["e4", "e4"])


def test_a_local_analysis_judges_only_moves_its_engine_would_not_play() -> None:
    evals = (PlyEval(20, None, "e2e4"), PlyEval(400, None, "e7e5"),  # 1…f6?: best was e5
             PlyEval(-300, None, "d2d4"))  # 2.Qh5: the engine's own move, however it drops
    judged = engine_judgments(evals, ["e2e4", "f7f6", "d2d4"])
    assert [e.judgment for e in judged] == [None, "Blunder", None]


def test_the_missing_engine_is_one_line_naming_apt_get(tmp_path: Path) -> None:
    with pytest.raises(EngineMissingError, match="apt-get install stockfish"):
        find_engine(tmp_path / "no-stockfish")


def _engine_rows(store: Store) -> list[tuple[str, str, int]]:
    with store.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(  # type: ignore[misc]
            "SELECT g.id, a.engine, a.nodes FROM game_analysis a JOIN games g ON g.pk = "
            "a.game_pk WHERE a.source = 'engine' ORDER BY g.id"))]


@needs_engine
def test_analyse_stores_each_game_and_never_analyses_one_twice(store: Store) -> None:
    import_file(INDEXINATOR_LATER, store=store, user="indexinator")
    lichess = stored.count_analysed(store, "indexinator").get("lichess", 0)
    seen: list[tuple[int, int]] = []
    first = run_analyse(store, "indexinator", perf="blitz", nodes=NODES,
                        progress=lambda d, t: seen.append((d, t)))
    assert first.status == "complete"
    assert first.asked == 10 and first.had_evals == lichess
    assert first.analysed == 10 - lichess > 0
    assert seen[0] == (0, first.analysed) and seen[-1] == (first.analysed, first.analysed)
    # 2,000 nodes: no calibration covers the budget, and the line says what that means
    assert first.uncalibrated == first.analysed == 1
    assert first.line().endswith(
        f"— complete; note: no engine calibration covers {first.engine} at 2,000 nodes: levels "
        "from these evals (1 game) read higher than Lichess's evals would (calibrated: "
        "Stockfish 15.1 at 10,000 or 20,000 nodes)")
    rows = _engine_rows(store)
    assert len(rows) == first.analysed and {(e, n) for _, e, n in rows} == {("Stockfish", NODES)}
    assert stored.count_analysed(store, "indexinator") == {"lichess": lichess,
                                                           "engine": first.analysed}
    again = run_analyse(store, "indexinator", perf="blitz", nodes=NODES)
    assert (again.had_evals, again.analysed, again.status) == (10, 0, "complete")


def test_lichess_analysed_games_need_no_engine_and_evals_in_the_text_are_found(
        store: Store, tmp_path: Path) -> None:
    import_file(ANALYSED, store=store)
    nowhere = str(tmp_path / "no-engine")
    done = run_analyse(store, "reda46", engine_path=nowhere)
    assert (done.asked, done.had_evals, done.analysed, done.status) == (41, 41, 0, "complete")
    with store.engine.begin() as conn:  # as in a database written before evals were kept
        conn.execute(text("DELETE FROM game_analysis"))
    found = run_analyse(store, "reda46", engine_path=nowhere)
    assert (found.found, found.analysed, found.status) == (41, 0, "complete")
    assert stored.count_analysed(store, "reda46") == {"lichess": 41}


def test_a_game_to_analyse_without_an_engine_is_a_one_line_error(store: Store,
                                                                  tmp_path: Path) -> None:
    import_file(INDEXINATOR_LATER, store=store)
    with pytest.raises(EngineMissingError, match="apt-get install stockfish"):
        run_analyse(store, "indexinator", engine_path=str(tmp_path / "none"))


def bare_export(tmp_path: Path) -> Path:
    """reda46's 41 games exported without evals."""
    bare = tmp_path / "bare.ndjson"
    lines = []
    for line in ANALYSED.read_text().splitlines():
        obj = json.loads(line)
        obj.pop("analysis")
        lines.append(json.dumps(obj))
    bare.write_text("\n".join(lines) + "\n")
    return bare


@needs_engine
def test_a_stopped_run_keeps_its_finished_games_and_the_next_one_finishes(
        store: Store, tmp_path: Path) -> None:
    import_file(bare_export(tmp_path), store=store)
    stop = threading.Event()
    partial = run_analyse(store, "reda46", last=6, nodes=NODES, jobs=2, stop=stop,
                          progress=lambda done, total: stop.set() if done >= 1 else None)
    assert (partial.asked, partial.had_evals) == (6, 0)
    assert partial.status == "partial" and 1 <= partial.analysed < 6
    assert len(_engine_rows(store)) == partial.analysed
    rest = run_analyse(store, "reda46", last=6, nodes=NODES)
    assert rest.status == "complete"
    assert (rest.had_evals, partial.analysed + rest.analysed) == (partial.analysed, 6)


def test_bad_arguments_are_usage_errors(store: Store) -> None:
    import_file(ANALYSED, store=store)
    for kwargs in ({"nodes": 10}, {"jobs": 0}, {"last": 0}, {"last": 5, "since": "2022-01-01"},
                   {"since": "yesterday"}):
        with pytest.raises(api.ArgumentError):
            api.analyse("reda46", db=store, **kwargs)  # type: ignore[arg-type]


@needs_engine
def test_sigterm_exits_143_and_keeps_every_finished_game(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    import_file(bare_export(tmp_path), store=Store(str(db)))
    proc = subprocess.Popen([sys.executable, "-m", "tracker.cli.commands",
                             "--db", str(db), "analyse",
                             "reda46", "--last", "5", "--nodes", str(NODES * 5)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check = Store(str(db))
    deadline = time.monotonic() + 120
    while not _engine_rows(check) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert b"every finished game is kept" in err and b"Traceback" not in err
    kept = len(_engine_rows(check))
    assert kept >= 1
    done = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "analyse",
                           "reda46", "--last", "5", "--nodes", str(NODES * 5), "--json"],
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["analysed"] == 5 - summary["had_evals"] and summary["status"] == "complete"
    assert summary["had_evals"] == kept
    assert summary["uncalibrated"] == 0  # 10,000 nodes: the default budget, calibrated


@needs_engine
def test_a_locally_analysed_game_is_judged_only_where_the_engine_preferred_another_move(
        store: Store, tmp_path: Path) -> None:
    import chess

    import_file(bare_export(tmp_path), store=store)
    assert run_analyse(store, "reda46", last=1, nodes=NODES).analysed == 1
    first = json.loads(ANALYSED.read_text().splitlines()[0])
    game = api.strength_game(first["id"], db=store)
    assert game.source == "engine" and (game.engine or "").startswith("Stockfish ")
    assert (game.engine or "").endswith(f"{NODES:,} nodes, not calibrated")  # none at 2,000
    board = chess.Board()
    judged = 0
    for ply, (san, ev) in enumerate(zip(game.sans, game.evals, strict=False), start=1):
        played = board.push_san(san).uci()
        assert ev.best is not None, ply
        if ev.judgment is not None:
            judged += 1
            assert ev.best != played
    assert judged >= 1  # a 91-ply game of two 1600s: the engine disagrees somewhere
    white = game.side("white")
    assert white.inaccuracy + white.mistake + white.blunder + sum(
        (game.black.inaccuracy, game.black.mistake, game.black.blunder)) == judged
    assert white.level is not None and white.acpl is not None


@needs_engine
def test_analyse_on_postgres_picks_stores_and_reports_the_same_way(tmp_path: Path) -> None:
    from tests.pg_server import postgres_url

    with postgres_url() as (url, reason):
        if url is None:
            pytest.skip(reason)
        store = Store(url)
        try:
            import_file(bare_export(tmp_path), store=store)
            first = run_analyse(store, "reda46", last=2, nodes=NODES)
            assert (first.asked, first.had_evals, first.analysed) == (2, 0, 2)
            again = run_analyse(store, "reda46", last=3, nodes=NODES)
            assert (again.asked, again.had_evals, again.analysed) == (3, 2, 1)
            assert stored.count_analysed(store, "reda46") == {"engine": 3}
            report = api.strength("reda46", perf="rapid", db=store).to_json()
            assert len(report["games"]) == 3 and report["recent"]["games"] == 3
        finally:
            with store.engine.begin() as conn:
                conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
            store.close()


DYING_ENGINE = '''#!{python}
import sys
for line in sys.stdin:
    cmd = line.split()[0] if line.split() else ""
    if cmd == "uci":
        print("id name Dying 1")
        print("option name Threads type spin default 1 min 1 max 8")
        print("option name Hash type spin default 16 min 1 max 1024")
        print("uciok", flush=True)
    elif cmd == "isready":
        print("readyok", flush=True)
    elif cmd == "go":
        sys.exit(3)
'''


def test_an_engine_that_dies_makes_a_partial_run_that_says_so(store: Store, tmp_path: Path
                                                              ) -> None:
    engine = tmp_path / "dying-engine"
    engine.write_text(DYING_ENGINE.format(python=sys.executable))
    engine.chmod(0o755)
    import_file(bare_export(tmp_path), store=store)
    done = run_analyse(store, "reda46", last=3, nodes=NODES, jobs=2, engine_path=str(engine))
    assert (done.status, done.analysed) == ("partial", 0)
    assert done.message is not None and done.message.startswith(
        f"the engine Dying 1 ({engine}) stopped: engine process died")
    assert stored.count_analysed(store, "reda46") == {}


def test_the_cli_knows_the_default_budget_without_loading_the_engine_module() -> None:
    from tracker.sources.engine import DEFAULT_NODES

    assert api.default_nodes() == DEFAULT_NODES
    code = ("import sys; from tracker.cli.commands import app, main; import typer; "
            "typer.main.get_command(app); print('chess.engine' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"  # tracker --help stays quick


def test_an_engine_name_longer_than_its_column_is_cut_to_fit() -> None:
    """An engine naming itself at length (a UCI ``id name`` is free text) is stored cut to the
    columns' widths instead of failing the analysis on PostgreSQL."""
    from tracker.sources.engine import ENGINE_NAME_MAX, ENGINE_VERSION_MAX, split_engine_name

    assert split_engine_name("Stockfish 15.1") == ("Stockfish", "15.1")
    name, version = split_engine_name("E" * 100 + " 1." + "2" * 50)
    assert (len(name), len(version)) == (ENGINE_NAME_MAX, ENGINE_VERSION_MAX)
    assert split_engine_name("x" * 100) == ("x" * ENGINE_NAME_MAX, "")


def test_nothing_to_analyse_does_not_say_complete(tmp_path: Path) -> None:
    """A --since after the last game: exit code 1 under a line ending "— complete", which
    reads as done. No engine is needed to find nothing."""
    db = tmp_path / "t.db"
    assert api.import_file(INDEXINATOR_LATER, db=db, user="indexinator").new > 0
    done = subprocess.run([sys.executable, "-m", "tracker.cli.commands", "--db", str(db),
                           "analyse", "indexinator", "--since", "2030-01-01", "--engine",
                           str(tmp_path / "no-engine")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stdout == ("indexinator: 0 games, 0 already analysed, 0 with Lichess evals "
                           "found, 0 analysed — nothing to analyse: no game in the set asked "
                           "for (see --perf, --since)\n")
