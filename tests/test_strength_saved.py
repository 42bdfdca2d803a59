"""The strength report's saved per-game results (issue 33: 2,000 analysed games in ≤ 1 s
warm): a report read from them equals the report computed afresh, to the last figure, on real
data (the bundled player's Lichess-analysed blitz games, 41 analysed rapid games of another
player), on SQLite and PostgreSQL; a game whose evals change (imported again with other evals,
analysed again by the engine), a level model of another version or another engine
calibration is computed afresh; a saved entry that cannot be read is computed again."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from sqlalchemy import select, text

from tests.conftest import ANALYSED, INDEXINATOR_LATER
from tracker import api
from tracker.analysis import engine_calibration
from tracker.analysis.level import game_level, level_model_from_json, load_level_model, set_level
from tracker.core.evals import PlyEval
from tracker.core.records import Analysis
from tracker.importing import import_file
from tracker.report import strength as report
from tracker.report.strength import PlayerStrength
from tracker.store.analysis import (
    analysed_games,
    write_engine_analysis,
    write_lichess_analyses,
)
from tracker.store.db import Store
from tracker.store.models import Game, GameAnalysis

#: (file, player, perf): the bundled player's 9 Lichess-analysed blitz games; 41 rapid ones.
CASES = [(INDEXINATOR_LATER, "indexinator", "blitz"), (ANALYSED, "reda46", "rapid")]


def _side(s: Any) -> tuple[Any, ...]:
    return (s.color, s.user_id, s.name, s.rating, s.accuracy, s.acpl, s.inaccuracy, s.mistake,
            s.blunder, s.level, s.fide, s.turning_point, s.counts_computed, s.moves, s.score,
            s.features)


def snapshot(r: PlayerStrength) -> tuple[Any, ...]:
    """Every value of the report, the per-ply data and features included."""
    games = [(g.id, g.perf, g.played_at, g.source, g.engine, _side(g.white), _side(g.black),
              g.turn, g.evals, g.win, g.sans, g.initial_fen, g.evaluated, g.plies, g.covered,
              color) for g, color in r.games]
    return (r.player, r.perf, games, r.months, r.recent, r.model, r.note, r.partial,
            json.dumps(r.to_json(), default=str))


def saved_rows(store: Store) -> list[tuple[str, str, str]]:
    with store.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(text(
            "SELECT user_id, perf, options FROM cache_entries WHERE kind = 'strength'"))]


def drop_saved(store: Store) -> None:
    with store.engine.begin() as conn:
        conn.execute(text("DELETE FROM cache_entries WHERE kind = 'strength'"))


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the games computed (afresh) from their stored evals
    (:func:`~tracker.report.strength.unlevelled`)."""
    ids: list[str] = []
    fresh = report.unlevelled

    def counting(game: Any, model: Any) -> Any:
        ids.append(game.id)
        return fresh(game, model)

    monkeypatch.setattr(report, "unlevelled", counting)
    return ids


def fresh_report(store: Store, player: str, perf: str) -> PlayerStrength:
    """The report with nothing saved: every game computed (and saved again)."""
    drop_saved(store)
    return api.strength(player, db=store, perf=perf)


@pytest.mark.parametrize(("path", "player", "perf"), CASES, ids=["bundled-blitz", "rapid"])
def test_the_saved_report_is_the_fresh_report(any_store: Store, computed: list[str],
                                              path: Any, player: str, perf: str) -> None:
    import_file(path, store=any_store, user=player)
    first = api.strength(player, db=any_store, perf=perf)
    n = len(first.games)
    assert n == (9 if perf == "blitz" else 41)
    assert sorted(computed) == sorted(g.id for g, _ in first.games)  # each game once
    assert saved_rows(any_store) == [(player, perf, report._options(report.model_for(perf)))]
    computed.clear()
    again = api.strength(player, db=any_store, perf=perf)
    assert computed == []  # every game read from its saved result
    assert snapshot(again) == snapshot(first)
    # the lazy per-ply data was computed from the stored game on first use, not before
    assert sorted(computed) == sorted(g.id for g, _ in first.games)
    # the figures are those of the level of the features, game by game and set by set
    model = load_level_model(perf)
    for g, color in again.games:
        side = g.side(color)
        assert side.level == game_level(model, side.features)
    covered = [g.side(c).features for g, c in first.games if g.covered]
    assert again.recent.level == set_level(model, covered[:20])
    month_features: dict[str, list[Any]] = {}
    for g, color in reversed([(g, c) for g, c in first.games if g.covered]):
        month_features.setdefault(g.played_at.strftime("%Y-%m"), []).append(
            g.side(color).features)
    assert [m.level for m in again.months] == [set_level(model, fs)
                                              for fs in month_features.values()]


def _pk(store: Store, game_id: str) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(select(Game.pk).where(Game.id == game_id)).scalar_one())


def test_a_game_imported_again_with_other_evals_is_computed_afresh(
        any_store: Store, computed: list[str]) -> None:
    import_file(ANALYSED, store=any_store, user="reda46")
    before = api.strength("reda46", db=any_store, perf="rapid")
    game, color = before.games[3]
    stored = next(g for g in analysed_games(any_store, "reda46", "rapid") if g.id == game.id)
    # the same game's evals as another import would bring them: the player's moves read 80 cp
    # worse (Lichess's judgments kept)
    white = color == "white"
    worse = tuple(e._replace(cp=e.cp + (-80 if white else 80)) if e.cp is not None and
                  (i % 2 == 0) == white else e for i, e in enumerate(stored.analysis.evals))
    with any_store.engine.begin() as conn:
        write_lichess_analyses(conn, [(_pk(any_store, game.id),
                                       dataclasses.replace(stored.analysis, evals=worse), True)])
    computed.clear()
    after = api.strength("reda46", db=any_store, perf="rapid")
    assert computed == [game.id]  # that game alone
    changed, was = after.games[3][0].side(color).acpl, game.side(color).acpl
    assert changed is not None and was is not None and changed > was
    assert after.games[3][0].side(color).level != game.side(color).level
    assert [g.id for g, _ in after.games] == [g.id for g, _ in before.games]
    assert snapshot(after) == snapshot(fresh_report(any_store, "reda46", "rapid"))


def _engine_evals(plies: int, swing: int) -> tuple[PlyEval, ...]:
    """A local analysis where each move loses ``2 · swing`` centipawns (from +20)."""
    return tuple(PlyEval(20 + (swing if i % 2 else -swing), None, "a2a3") for i in range(plies))


def test_a_game_analysed_again_by_the_engine_is_computed_afresh(any_store: Store,
                                                               computed: list[str]) -> None:
    import_file(INDEXINATOR_LATER, store=any_store, user="indexinator")
    ((pk, game_id, raw_moves),) = _games_without_evals(any_store)
    plies = len(raw_moves.split())
    analysis = Analysis(_engine_evals(plies, 30), "engine", "Stockfish", "15.1", 10_000,
                        calibration="stockfish-15.1-10000n-1")
    assert write_engine_analysis(any_store, pk, analysis)
    first = api.strength("indexinator", db=any_store, perf="blitz")
    assert len(first.games) == 10
    mine = {g.id: (g, c) for g, c in first.games}[game_id]
    assert mine[0].source == "engine"
    assert "calibrated (stockfish-15.1-10000n-1)" in (mine[0].engine or "")
    computed.clear()
    read = api.strength("indexinator", db=any_store, perf="blitz")
    assert computed == []  # every game read from its saved result
    assert snapshot(read) == snapshot(first)
    # analysed again (another engine run): its result changes, the others are read
    assert write_engine_analysis(any_store, pk, dataclasses.replace(
        analysis, evals=_engine_evals(plies, 90)))
    computed.clear()
    again = api.strength("indexinator", db=any_store, perf="blitz")
    assert computed == [game_id]
    g, color = {g.id: (g, c) for g, c in again.games}[game_id]
    assert g.side(color).acpl != mine[0].side(mine[1]).acpl
    assert snapshot(again) == snapshot(fresh_report(any_store, "indexinator", "blitz"))


def _games_without_evals(store: Store) -> list[tuple[int, str, str]]:
    """(pk, id, moves) of the bundled player's blitz games without stored evals."""
    from tracker.core.codec import decompress_raw

    with store.engine.connect() as conn:
        rows = conn.execute(select(Game.pk, Game.id, Game.raw).where(
            Game.perf == "blitz", ~Game.pk.in_(select(GameAnalysis.game_pk)))).all()
    return [(pk, gid, json.loads(decompress_raw(raw))["moves"]) for pk, gid, raw in rows]


def test_a_level_model_of_another_version_is_computed_afresh(
        any_store: Store, computed: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import_file(ANALYSED, store=any_store, user="reda46")
    before = api.strength("reda46", db=any_store, perf="rapid")
    model = load_level_model("rapid")
    data = json.loads(json.dumps(model.data))
    data["version"] = model.version + 1
    data["regression"]["intercept"] = float(data["regression"]["intercept"]) + 150
    data["set"]["regression"]["intercept"] = float(data["set"]["regression"]["intercept"]) + 150
    refitted = level_model_from_json(data, "rapid")
    monkeypatch.setattr(report, "model_for", lambda perf: refitted)
    computed.clear()
    after = api.strength("reda46", db=any_store, perf="rapid")
    assert sorted(computed) == sorted(g.id for g, _ in before.games)  # every game afresh
    assert {g.side(c).level.model for g, c in after.games  # type: ignore[union-attr]
            } == {f"level-rapid-{model.version + 1}"}
    assert after.recent.level is not None and before.recent.level is not None
    assert after.recent.level.estimate > before.recent.level.estimate
    # the entry of the old model is replaced, not kept beside
    assert saved_rows(any_store) == [("reda46", "rapid", report._options(refitted))]
    computed.clear()
    read = api.strength("reda46", db=any_store, perf="rapid")
    assert computed == []  # read from the new entry
    assert snapshot(read) == snapshot(after)
    assert snapshot(after) == snapshot(fresh_report(any_store, "reda46", "rapid"))


def test_another_engine_calibration_changes_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    model = load_level_model("rapid")
    now = report._options(model)
    assert report._options(model) == now and len(now) == 32
    shipped = dict(engine_calibration.calibrations())
    assert len(shipped) >= 2  # the budgets offered (10,000 and 20,000 nodes), every version's
    cid, cal = next(iter(shipped.items()))
    changed = {**shipped, cid: dataclasses.replace(cal, scale=cal.scale * 1.1)}
    monkeypatch.setattr(engine_calibration, "calibrations", lambda: changed)
    assert report._options(model) != now
    assert report._options(load_level_model("blitz")) != now


def test_a_saved_entry_that_cannot_be_read_is_computed_again(
        any_store: Store, computed: list[str]) -> None:
    import_file(ANALYSED, store=any_store, user="reda46")
    first = api.strength("reda46", db=any_store, perf="rapid")
    with any_store.engine.begin() as conn:
        conn.execute(text("UPDATE cache_entries SET payload = :p WHERE kind = 'strength'"),
                     {"p": b"\xc1junk"})
    computed.clear()
    again = api.strength("reda46", db=any_store, perf="rapid")
    assert sorted(computed) == sorted(g.id for g, _ in first.games)
    assert snapshot(again) == snapshot(first)
    computed.clear()
    api.strength("reda46", db=any_store, perf="rapid")
    assert computed == []  # saved again


#: SAVED_VERSION → the sha256 (16 hex) of what is saved of the 41 rapid games: their
#: fingerprints left out (those follow the stored bytes, not the computation), and so are the
#: levels, scores and FIDE readings (those follow the level model's and the scale models' data,
#: which the entry's key holds: a refitted model is a new key, not a new version); floats to 6
#: decimals (a last bit of another machine's numpy is no change of the computation).
SAVED: dict[int, str] = {1: "df81a080d2770ea2", 2: "df81a080d2770ea2",  # 2: + set scores
                         3: "df81a080d2770ea2",  # 3: a partial game's turn is not read
                         4: "df81a080d2770ea2"}  # 4: a range cut by the grid's end says so


def _code_only(row: list[Any]) -> list[Any]:
    """A saved row without its fingerprint, levels, scores and FIDE readings."""
    return row[1:5] + [side[:6] + side[7:9] for side in row[5:7]]


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def test_a_result_computed_now_is_the_one_saved_under_its_version(tmp_path: Any) -> None:
    import hashlib

    import msgspec
    import zstandard

    with Store(str(tmp_path / "t.db")) as store:
        import_file(ANALYSED, store=store, user="reda46")
        api.strength("reda46", db=store, perf="rapid")
        with store.engine.connect() as conn:
            payload = conn.execute(text("SELECT payload FROM cache_entries "
                                        "WHERE kind = 'strength'")).scalar_one()
    rows = msgspec.msgpack.decode(zstandard.ZstdDecompressor().decompress(bytes(payload)))
    digest = hashlib.sha256(msgspec.msgpack.encode(
        {gid: _rounded(_code_only(row)) for gid, row in sorted(rows.items())})).hexdigest()[:16]
    assert report.SAVED_VERSION in SAVED, f"pin SAVED_VERSION {report.SAVED_VERSION}: {digest}"
    assert digest == SAVED[report.SAVED_VERSION], (
        "what game_strength saves changed without a new SAVED_VERSION "
        "(tracker/report/strength.py): bump it and pin the new digest here")


def test_levels_at_once_are_the_levels_one_by_one() -> None:
    from tracker.analysis.level import fide_levels, level_of_scores, levels_of_scores

    model = load_level_model("blitz")
    sets = [([900.0 + 37.5 * i], 20 + i, i % 3 == 0) for i in range(60)]
    sets += [([1200.0, 1710.5, 1999.25][: 1 + i % 3], 40, False) for i in range(6)]
    one_by_one = [level_of_scores(model, *s) for s in sets]
    assert levels_of_scores(model, sets) == one_by_one
    assert len({lv.estimate for lv in one_by_one}) > 50  # they differ
    memo: dict[tuple[str, int], int | None] = {}
    assert [fide_levels(lv, "blitz", memo) for lv in one_by_one] == [
        fide_levels(lv, "blitz") for lv in one_by_one]
    assert memo  # the readings were kept
    with pytest.raises(ValueError, match="at least one game"):
        levels_of_scores(model, [([], 0, False)])


def test_a_game_whose_stored_text_changes_is_computed_afresh(
        any_store: Store, computed: list[str]) -> None:
    import_file(ANALYSED, store=any_store, user="reda46")
    first = api.strength("reda46", db=any_store, perf="rapid")
    fingerprints = {g.id: g.fingerprint for g in analysed_games(any_store, "reda46", "rapid")}
    assert len(set(fingerprints.values())) == 41
    game_id = first.games[7][0].id
    with any_store.engine.begin() as conn:  # another text of the game (its digest with it)
        conn.execute(text("UPDATE games SET digest = :d WHERE id = :i"),
                     {"d": "0123456789abcdef", "i": game_id})
    now = {g.id: g.fingerprint for g in analysed_games(any_store, "reda46", "rapid")}
    assert {i for i in now if now[i] != fingerprints[i]} == {game_id}
    computed.clear()
    again = api.strength("reda46", db=any_store, perf="rapid")
    assert computed == [game_id]
    assert snapshot(again) == snapshot(first)  # the same text in fact: the same figures


def test_a_read_only_database_gives_the_report_and_saves_nothing(tmp_path: Any) -> None:
    path = tmp_path / "t.db"
    with Store(str(path)) as store:
        import_file(ANALYSED, store=store, user="reda46")
        fresh = api.strength("reda46", db=store, perf="rapid")
        drop_saved(store)
    store = api.open_store(path, read_only=True)
    try:
        assert snapshot(api.strength("reda46", db=store, perf="rapid")) == snapshot(fresh)
        assert saved_rows(store) == []
    finally:
        store.close()
