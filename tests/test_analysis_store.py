"""Evals in, kept: NDJSON ``analysis[]`` and PGN ``[%eval …]`` read by the sources, stored one
row per game (packed), with their source; Lichess's kept and preferred; migration 0008 on
SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text

from tests.conftest import ANALYSED, LICHESS, SINGLE
from tracker.core.evals import PlyEval, from_lichess_entry
from tracker.core.records import Analysis
from tracker.importing import import_file
from tracker.sources.ndjson import read_ndjson, record_from_json, typed_record
from tracker.sources.pgn import read_pgn
from tracker.sources.pgn_evals import pgn_analysis
from tracker.store import analysis as stored
from tracker.store.db import Store
from tracker.store.engine import _sqlite_on_connect, alembic_config

LINES = ANALYSED.read_text(encoding="utf-8").splitlines()
EXPORT = LICHESS.parent.parent / "fixtures" / "lichess" / "api-examples"


def _stripped(line: str) -> str:
    """The same game exported without evals (no ``analysis[]``, no players' analysis)."""
    obj = json.loads(line)
    obj.pop("analysis")
    for side in obj["players"].values():
        side.pop("analysis", None)
    return json.dumps(obj)


def test_ndjson_analysis_is_read_entry_by_entry_on_both_paths() -> None:
    first = json.loads(LINES[0])
    typed = typed_record(LINES[0], LINES[0])
    general = record_from_json(first, raw=LINES[0])
    assert typed is not None and typed == general
    assert typed.analysis is not None and typed.analysis.source == "lichess"
    assert typed.analysis.evals == tuple(from_lichess_entry(e) for e in first["analysis"])
    assert len(typed.analysis.evals) == 91 == typed.plies  # a resignation: one eval a ply
    judged = [e for e in typed.analysis.evals if e.judgment]
    assert judged and all(e.best for e in judged)
    for line in LINES:  # every game: the typed decoder gives what json.loads gives
        assert typed_record(line, line) == record_from_json(json.loads(line), raw=line)


def test_a_game_ending_in_mate_has_one_eval_fewer_than_plies() -> None:
    mates = [r for r in read_ndjson(LINES) if r.status == "mate"]
    assert len(mates) == 15
    assert all(r.analysis and len(r.analysis.evals) == r.plies - 1 for r in mates)


def test_a_game_without_evals_or_with_broken_ones_is_imported_without_them() -> None:
    assert typed_record(_stripped(LINES[0]), "x") is not None
    assert typed_record(_stripped(LINES[0]), "x").analysis is None  # type: ignore[union-attr]
    obj = json.loads(LINES[0])
    obj["analysis"][3] = {"eval": "12"}
    broken = json.dumps(obj)
    (record,) = read_ndjson([broken])
    assert record.analysis is None and record.plies == 91
    obj["analysis"][3] = {"eval": 10**9}  # out of range: that eval alone dropped, counted
    (record,) = read_ndjson([json.dumps(obj)])
    assert record.analysis is not None and record.analysis.dropped == 1
    assert record.analysis.evals[3] == PlyEval(None, None)
    assert record.analysis.evals[4].cp == obj["analysis"][4]["eval"]


def test_pgn_evals_equal_the_ndjson_export_of_the_same_game() -> None:
    (record,) = read_pgn(SINGLE.read_bytes().splitlines(keepends=True))
    export = json.loads((EXPORT / "game-export_q7ZvsdUF_rated-blitz-arena.json").read_text())
    assert record.analysis is not None and record.plies == 125
    assert [(e.cp, e.mate) for e in record.analysis.evals] == [
        (e.get("eval"), e.get("mate")) for e in export["analysis"]]


def test_pgn_evals_mates_glyphs_and_variations() -> None:
    text_ = ("1. e4 { [%eval 0.2] } 1... e5 { [%eval 0.25] } 2. Qh5?! { [%eval -0.3] } "
             "( 2. Nf3 { [%eval 0.3] } ) 2... Nc6 $4 { [%eval #3] } 3. Bc4 { [%eval #-2,20] } "
             "3... Nf6?? 4. Qxf7# 1-0")
    a = pgn_analysis(text_)
    assert a is not None
    assert a.evals == (PlyEval(20, None), PlyEval(25, None), PlyEval(-30, None, None, "Inaccuracy"),
                       PlyEval(None, 3, None, "Blunder"), PlyEval(None, -2))
    assert pgn_analysis("1. e4 e5 2. Nf3 1-0") is None


def test_packed_evals_round_trip_compactly() -> None:
    evals = tuple(from_lichess_entry(e) for e in json.loads(LINES[0])["analysis"])
    blob = stored.pack_evals(evals)
    assert stored.unpack_evals(blob) == evals
    assert len(blob) < 4 * len(evals)  # 91 plies in under 364 bytes
    engine = (PlyEval(36, None, "e2e4"), PlyEval(None, -1, "c7c5"), PlyEval(0, None, "e1g1"),
              PlyEval(None, None, "a7a8q"), PlyEval(-5, None, "h2h1n"))
    assert stored.unpack_evals(stored.pack_evals(engine)) == engine
    # what is no move from square to square is not kept (it cannot be shown on a board)
    assert stored.unpack_evals(stored.pack_evals([PlyEval(3, None, "0000")])) == (
        PlyEval(3, None),)
    with pytest.raises(ValueError, match="unknown layout"):
        stored.unpack_evals(b"\x09abc")


def test_an_import_stores_lichess_evals_one_row_per_game(store: Store) -> None:
    summary = import_file(ANALYSED, store=store, user="reda46")
    assert (summary.new, summary.evals) == (41, 41)
    assert "Lichess evals stored for 41" in summary.line()
    assert stored.count_analysed(store, "reda46") == {"lichess": 41}
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM game_analysis")).scalar() == 41
    game = stored.game_analysis(store, json.loads(LINES[0])["id"])
    assert game is not None
    assert game.analysis.evals == tuple(
        from_lichess_entry(e) for e in json.loads(LINES[0])["analysis"])
    assert (game.analysis.engine, game.analysis.nodes) == (None, None)
    again = import_file(ANALYSED, store=store, user="reda46")
    assert (again.unchanged, again.evals) == (41, 0)


def test_a_reimport_with_evals_adds_them_and_one_without_never_removes_them(
        store: Store, tmp_path: Path) -> None:
    bare = tmp_path / "bare.ndjson"
    bare.write_text("\n".join(_stripped(line) for line in LINES) + "\n")
    assert import_file(bare, store=store).new == 41
    assert stored.count_analysed(store, "reda46") == {}
    with_evals = import_file(ANALYSED, store=store)
    assert (with_evals.updated, with_evals.evals) == (41, 41)
    assert stored.count_analysed(store, "reda46") == {"lichess": 41}
    assert import_file(bare, store=store).updated == 41  # the copy without evals…
    assert stored.count_analysed(store, "reda46") == {"lichess": 41}  # …keeps them


def test_a_poorer_pgn_copy_with_evals_still_brings_its_evals(store: Store, tmp_path: Path
                                                             ) -> None:
    export = json.loads((EXPORT / "game-export_q7ZvsdUF_rated-blitz-arena.json").read_text())
    export.pop("analysis")
    for side in export["players"].values():
        side.pop("analysis", None)
    bare = tmp_path / "bare.ndjson"
    bare.write_text(json.dumps(export) + "\n")
    assert import_file(bare, store=store).new == 1
    pgn = import_file(SINGLE, store=store)
    assert (pgn.unchanged, pgn.evals) == (1, 1)  # the NDJSON game is kept, the evals added
    assert stored.count_analysed(store, "lance5500") == {"lichess": 1}


def test_a_local_analysis_never_replaces_lichess_evals(store: Store) -> None:
    import_file(ANALYSED, store=store)
    gid = json.loads(LINES[0])["id"]
    with store.engine.connect() as conn:
        pk = conn.execute(text("SELECT pk FROM games WHERE id = :i"), {"i": gid}).scalar()
    local = Analysis((PlyEval(1, None, "e2e4"),), "engine", "Stockfish", "15.1", 1000)
    assert stored.write_engine_analysis(store, pk, local) is False
    assert stored.game_analysis(store, gid).analysis.source == "lichess"  # type: ignore[union-attr]


def test_migration_0008_upgrades_and_downgrades_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    Store(url).close()
    engine = create_engine(url)
    from sqlalchemy import event
    event.listen(engine, "connect", _sqlite_on_connect)
    cfg = alembic_config()
    with engine.begin() as conn:
        assert "game_analysis" in inspect(conn).get_table_names()
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0006")
        assert "game_analysis" not in inspect(conn).get_table_names()
        command.upgrade(cfg, "head")
        assert "game_analysis" in inspect(conn).get_table_names()
    engine.dispose()


def test_postgres_keeps_evals_and_migrates_0008_both_ways(pg_url: str) -> None:
    store = Store(pg_url)
    try:
        assert import_file(ANALYSED, store=store).evals == 41
        game = stored.game_analysis(store, json.loads(LINES[0])["id"])
        assert game is not None and len(game.analysis.evals) == 91
        assert len(list(stored.analysed_games(store, "reda46", "rapid"))) == 41
        cfg = alembic_config()
        with store.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0006")
            assert "game_analysis" not in inspect(conn).get_table_names()
            command.upgrade(cfg, "head")
            assert "game_analysis" in inspect(conn).get_table_names()
    finally:
        with store.engine.begin() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        store.close()
