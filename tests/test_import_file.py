from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CMRADE, DB2013, INDEXINATOR, INDEXINATOR_LATER, SINGLE, default_sigint
from tracker import api
from tracker.importing import import_file
from tracker.sources.files import InputError
from tracker.store import queries
from tracker.store.db import Store


def test_indexinator_exports_store_2907_then_2917_and_reimport_changes_nothing(
    store: Store,
) -> None:
    first = import_file(INDEXINATOR, store=store)
    assert (first.read, first.new, first.status, first.player) == (
        2907, 2907, "complete", "indexinator"
    )
    assert queries.count_games(store) == 2907
    later = import_file(INDEXINATOR_LATER, store=store)
    assert later.new == 10
    assert queries.count_games(store) == 2917
    again = import_file([INDEXINATOR, INDEXINATOR_LATER], store=store)
    assert (again.new, again.updated, again.unchanged) == (0, 0, 2917)
    assert queries.count_games(store) == 2917
    assert queries.import_runs(store)[0].new == 0


@pytest.mark.parametrize(
    ("path", "games"), [(CMRADE, 474), (DB2013, 50), (SINGLE, 1)]
)
def test_pgn_exports_store_every_game(store: Store, path: Path, games: int) -> None:
    summary = import_file(path, store=store)
    assert summary.new == games
    assert queries.count_games(store) == games


def test_single_game_keeps_whites_title(store: Store) -> None:
    import_file(SINGLE, store=store)
    (game,) = queries.player_games(store, "lance5500")
    assert game.id == "q7ZvsdUF"
    assert game.white.title == "LM" and game.white.name == "Lance5500"
    assert game.white.rating == 2389 and game.black.rating == 2498
    assert game.result == "1/2-1/2" and game.plies == 125


def test_raw_record_is_kept(store: Store) -> None:
    import_file(SINGLE, store=store)
    (game,) = queries.player_games(store, "lance5500", with_raw=True)
    assert game.raw.startswith('[Event "2017 Winter Marathon"]')
    assert "63. Kc4 { [%eval 0.08] [%clk 0:00:16] } 1/2-1/2" in game.raw


def test_user_option_keeps_only_that_players_games(store: Store) -> None:
    summary = import_file(DB2013, store=store, user="BFG9k")
    assert summary.player == "bfg9k"
    assert summary.new == 2 and summary.skipped == {"not the player's game": 48}


def test_player_is_named_and_tracked(store: Store) -> None:
    import_file(CMRADE, store=store)
    (p,) = queries.list_players(store)
    assert (p.id, p.games) == ("cmrade", 474)
    assert {x.perf for x in p.perfs} == {"bullet", "blitz", "rapid", "classical", "correspondence"}


def test_bundled_demo_sample_is_the_indexinator_export(store: Store) -> None:
    summary = api.demo(db=store)
    # the history and his next 10 games, 9 of them with Lichess's evals (issue 33 item 7)
    assert (summary.new, summary.player, summary.evals) == (2917, "indexinator", 9)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        (b"", "the file is empty"),
        (b"hello, this is not a game file\n", "not a PGN or NDJSON game file"),
    ],
)
def test_bad_input_is_one_line_error_and_database_unchanged(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    db = tmp_path / "t.db"
    with Store(str(db)) as s:
        import_file(SINGLE, store=s)
    before = db.read_bytes() if not (tmp_path / "t.db-wal").exists() else None
    path = tmp_path / "input.pgn"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        api.import_file(path, db=str(db))
    proc = subprocess.run(
        [sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "import-file", str(path)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and message in proc.stderr
    assert "Traceback" not in proc.stderr
    with Store(str(db)) as s:
        assert queries.count_games(s) == 1
        assert len(queries.import_runs(s)) == 1
    if before is not None:
        assert db.read_bytes() == before


def test_cli_import_file_prints_one_line_summary(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    copy = tmp_path / "games.ndjson"
    shutil.copy(INDEXINATOR_LATER, copy)
    proc = subprocess.run(
        [sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "import-file", str(copy)],
        capture_output=True, text=True, check=True,
    )
    assert proc.stdout.strip().startswith(
        "indexinator: read 10, new 10, updated 0, unchanged 0, skipped 0"
    )
    assert proc.stdout.strip().endswith("complete")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("api-examples/api-user_mary_LOCAL-DEV-LILA.json", "JSON, but not Lichess games"),
        ("api-examples/api-user-perf_thibault_blitz.json", "JSON, but not Lichess games"),
        ("rating-history-doc-example.json", "pretty-printed JSON document"),
    ],
)
def test_json_that_is_not_a_game_export_is_refused(store: Store, name: str, message: str
                                                    ) -> None:
    from tests.conftest import LICHESS

    with pytest.raises(InputError, match=message):
        import_file(LICHESS / name, store=store)
    assert queries.count_games(store) == 0


def test_a_one_game_export_json_is_a_game(store: Store) -> None:
    from tests.conftest import LICHESS

    summary = import_file(LICHESS / "api-examples/game-export_q7ZvsdUF_rated-blitz-arena.json",
                          store=store)
    assert summary.new == 1


@pytest.mark.parametrize("cut_at", [29_000, 30_000])
def test_a_pgn_cut_in_a_game_skips_that_game_ends_partial_and_changes_nothing_stored(
    store: Store, tmp_path: Path, cut_at: int
) -> None:
    import_file(CMRADE, store=store)
    before = {g.id: (g.plies, g.result) for g in queries.player_games(store, "cmrade")}
    cut = tmp_path / "cut.pgn"
    cut.write_bytes(CMRADE.read_bytes()[:cut_at])
    summary = import_file(cut, store=store)
    assert summary.status == "partial"
    assert "cut before its result" in summary.message
    assert summary.skipped == {"cut game at the end of the file": 1}
    assert summary.updated == 0 and summary.new == 0
    after = {g.id: (g.plies, g.result) for g in queries.player_games(store, "cmrade")}
    assert after == before


def test_every_user_named_is_tracked_and_a_misspelt_one_is_warned_not_tracked(
    store: Store,
) -> None:
    summary = import_file(DB2013, store=store, user=["sebastian44", "jtkjtkful", "nobody_here"])
    tracked = {p.id: p.games for p in queries.list_players(store)}
    assert tracked == {"sebastian44": 3, "jtkjtkful": 3}
    assert summary.new == 5  # they played each other once
    assert any("no games of 'nobody_here'" in w for w in summary.warnings)


def test_cli_ctrl_c_says_what_was_kept_and_a_rerun_finishes(tmp_path: Path) -> None:
    import os
    import signal
    import time

    big = tmp_path / "big.ndjson"
    with big.open("w") as out:  # 40 copies of the export with new ids: a few seconds to import
        for i in range(40):
            for line in INDEXINATOR.read_text().splitlines():
                out.write(line.replace('"id":"', f'"id":"{i:02d}', 1) + "\n")
    db = tmp_path / "t.db"
    cmd = [sys.executable, "-m", "tracker.cli.commands", "--db", str(db), "import-file", str(big)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until the first batches are in
        time.sleep(0.2)
        if db.exists():
            with Store(str(db)) as s:
                if queries.count_games(s) >= 1000:
                    break
    os.kill(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "— partial: interrupted" in stderr and "run the same command again" in stderr
    assert "Traceback" not in stderr
    with Store(str(db)) as s:
        kept = queries.count_games(s)
        assert queries.import_runs(s)[0].status == "partial"
    assert 1000 <= kept < 40 * 2907
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    with Store(str(db)) as s:
        assert queries.count_games(s) == 40 * 2907


def test_cli_partial_file_import_exits_1(tmp_path: Path) -> None:
    from tests.conftest import CASES

    proc = subprocess.run([sys.executable, "-m", "tracker.cli.commands",
                           "--db", str(tmp_path / "t.db"),
                           "import-file", str(CASES / "C08.ndjson")], capture_output=True,
                          text=True)
    assert proc.returncode == 1
    assert "— partial:" in proc.stdout
