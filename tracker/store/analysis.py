"""Analysed games in the store: one ``game_analysis`` row per game, its evals packed.

The evals of a game (one :class:`~tracker.core.evals.PlyEval` per ply) are kept as one
compressed blob (:func:`pack_evals`), never as one row per ply: ~80 plies take ~150 bytes.
Which copy wins: Lichess's own analysis is kept and preferred. An import writes the Lichess
evals a record carries (:func:`write_lichess_analyses`, in the import's transaction); a local
analysis (:func:`write_engine_analysis`) never replaces Lichess's.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import accumulate
from typing import Any, Final

import msgspec
import zstandard
from sqlalchemy import Connection, Table, and_, delete, exists, func, select

from tracker.core.codec import decompress_raw
from tracker.core.evals import JUDGMENTS, PlyEval
from tracker.core.records import Analysis
from tracker.core.utc import now_ms
from tracker.store.engine import Database
from tracker.store.models import Game, GameAnalysis, GameSide

#: The first byte of a packed blob: the layout of what follows (zstd-compressed msgpack).
PACK_VERSION: Final = 1
_JUDGMENT_CODES: Final[dict[str, int]] = {name: i + 1 for i, name in enumerate(JUDGMENTS)}
_IDS_PER_QUERY: Final = 500
_FINGERPRINT: Final = msgspec.msgpack.Encoder()


def pack_evals(evals: Sequence[PlyEval]) -> bytes:
    """``evals`` as bytes: a version byte, then zstd-compressed msgpack of four columns: the
    centipawns as differences from the ply before (a ply without one counts 0), the mates by
    ply, the best moves as 16-bit codes (:func:`_move_code`; ``None`` where no ply has one)
    and the judgments (one byte a ply: 0 none, 1 Inaccuracy, 2 Mistake, 3 Blunder; ``None``
    where no ply has one). About 3.5 bytes a ply for Lichess's evals."""
    deltas: list[int] = []
    last = 0
    for e in evals:
        cp = e.cp if e.cp is not None else 0
        deltas.append(cp - last)
        last = cp
    cp_missing = [i for i, e in enumerate(evals) if e.cp is None and e.mate is None]
    mates = {i: e.mate for i, e in enumerate(evals) if e.mate is not None}
    bests = array("H", (_move_code(e.best) for e in evals))
    judgments = bytes(_JUDGMENT_CODES.get(e.judgment or "", 0) for e in evals)
    body = msgspec.msgpack.encode([
        deltas, mates, cp_missing, bests.tobytes() if any(bests) else None,
        judgments if any(judgments) else None])
    return bytes([PACK_VERSION]) + zstandard.ZstdCompressor(level=19).compress(body)


def unpack_evals(blob: bytes) -> tuple[PlyEval, ...]:
    """The evals :func:`pack_evals` packed. Raises ValueError for a blob of another layout."""
    if not blob or blob[0] != PACK_VERSION:
        raise ValueError("packed evals of an unknown layout")
    deltas, mates, cp_missing, best_codes, judgments = msgspec.msgpack.decode(
        zstandard.ZstdDecompressor().decompress(blob[1:]))
    n = len(deltas)
    cps: list[int | None] = list(accumulate(deltas))
    for i in cp_missing:
        cps[i] = None
    mate_of: list[int | None] = [None] * n
    for i, mate in mates.items():
        mate_of[i] = mate
        cps[i] = None
    if best_codes:
        bests = array("H")
        bests.frombytes(best_codes)
        moves = [_move_of(code) for code in bests]
    else:
        moves = [None] * n
    judged = ([JUDGMENTS[j - 1] if j else None for j in judgments] if judgments
              else [None] * n)
    return tuple(map(PlyEval, cps, mate_of, moves, judged))


_PROMOTIONS: Final = "nbrqk"


def _move_code(uci: str | None) -> int:
    """A UCI move as 1 + from·64 + to + 4096·promotion (0 none, 1 n … 5 k); 0 for none, and
    for what is no move from square to square (a null move ``0000``, a drop): not kept."""
    if not uci or len(uci) > 5:
        return 0
    files, ranks = "abcdefgh", "12345678"
    try:
        frm = files.index(uci[0]) + 8 * ranks.index(uci[1])
        to = files.index(uci[2]) + 8 * ranks.index(uci[3])
        promo = _PROMOTIONS.index(uci[4]) + 1 if len(uci) == 5 else 0
    except (ValueError, IndexError):
        return 0
    return 1 + frm * 64 + to + 4096 * promo


@cache
def _move_of(code: int) -> str | None:
    if not code:
        return None
    code -= 1
    promo, rest = divmod(code, 4096)
    frm, to = divmod(rest, 64)
    squares = "abcdefgh"
    text = f"{squares[frm % 8]}{frm // 8 + 1}{squares[to % 8]}{to // 8 + 1}"
    return text + (_PROMOTIONS[promo - 1] if promo else "")


def _table() -> Table:
    table = GameAnalysis.__table__
    assert isinstance(table, Table)
    return table


def _row(pk: int, analysis: Analysis, created_at_ms: int) -> dict[str, Any]:
    return {"game_pk": pk, "source": analysis.source, "engine": analysis.engine,
            "engine_version": analysis.engine_version, "nodes": analysis.nodes,
            "plies": len(analysis.evals), "evals": pack_evals(analysis.evals),
            "created_at_ms": created_at_ms, "calibration": analysis.calibration}


def analysis_sources(conn: Connection, pks: Sequence[int]) -> dict[int, str]:
    """``{game key: source}`` of the games among ``pks`` that have stored evals."""
    t = _table()
    out: dict[int, str] = {}
    for i in range(0, len(pks), _IDS_PER_QUERY):
        chunk = list(pks[i : i + _IDS_PER_QUERY])
        out.update({pk: src for pk, src in conn.execute(
            select(t.c.game_pk, t.c.source).where(t.c.game_pk.in_(chunk)))})
    return out


def write_lichess_analyses(conn: Connection, analyses: Sequence[tuple[int, Analysis, bool]]
                           ) -> int:
    """Store Lichess's evals, in the caller's transaction: ``(game key, analysis, the game's
    row was written)`` each. A game whose row was written gets its evals written over any
    stored ones; a game left as it was (unchanged, or a poorer copy) gets them only where it
    has none from Lichess. Returns how many rows were written."""
    if not analyses:
        return 0
    stored = analysis_sources(conn, [pk for pk, _, _ in analyses])
    t = _table()
    now = now_ms()
    rows = [_row(pk, a, now) for pk, a, written in analyses
            if written or stored.get(pk) != "lichess"]
    if rows:
        conn.execute(delete(t).where(t.c.game_pk.in_([r["game_pk"] for r in rows])))
        conn.execute(t.insert(), rows)
    return len(rows)


def write_engine_analysis(db: Database, game_pk: int, analysis: Analysis) -> bool:
    """Store a local analysis of one game in its own transaction (a run interrupted later
    keeps it). Never over Lichess's evals: returns False (nothing written) where the game has
    them."""
    t = _table()
    with db.engine.begin() as conn:
        db.lock_writes(conn)
        found = conn.execute(select(t.c.source).where(t.c.game_pk == game_pk)).scalar()
        if found == "lichess":
            return False
        if found is not None:
            conn.execute(delete(t).where(t.c.game_pk == game_pk))
        conn.execute(t.insert(), [_row(game_pk, analysis, now_ms())])
    return True


def write_found_analysis(db: Database, game_pk: int, analysis: Analysis) -> None:
    """Store Lichess's evals found in a game's stored text (a game imported with evals before
    they were kept apart), in their own transaction."""
    with db.engine.begin() as conn:
        db.lock_writes(conn)
        write_lichess_analyses(conn, [(game_pk, analysis, False)])


@dataclass(frozen=True, slots=True)
class StoredAnalysis:
    """One game's stored evals and their source (see :class:`~tracker.core.records.Analysis`)."""

    analysis: Analysis
    created_at_ms: int


def _analysis(row: Any) -> Analysis:
    return Analysis(unpack_evals(row.evals), row.source, row.engine, row.engine_version,
                    row.nodes, calibration=row.calibration)


def game_analysis(db: Database, game_id: str) -> StoredAnalysis | None:
    """The stored evals of the game ``game_id``, or ``None`` when it has none."""
    t = _table()
    g = Game.__table__.c
    with db.engine.connect() as conn:
        row = conn.execute(select(t).join(Game.__table__, g.pk == t.c.game_pk)
                           .where(g.id == game_id)).first()
    return None if row is None else StoredAnalysis(_analysis(row), row.created_at_ms)


@dataclass(frozen=True, slots=True)
class AnalysedGame:
    """What a strength report reads of one analysed game: the game's columns it needs, both
    sides' user id and Lichess rating at the start, the stored text (for the moves and
    clocks: :attr:`raw`) and the evals (:attr:`analysis`), these two decoded on first use.
    ``provenance``: where the evals came from (an :class:`Analysis` without its evals).
    ``fingerprint``: 16 bytes that change whenever anything read here but the sides changes
    (the stored evals and where they came from, the stored text by its digest, the game's
    columns): a result computed from the game and saved beside its fingerprint is current
    while the fingerprint is the same."""

    pk: int
    id: str
    perf: str | None
    created_at_ms: int
    ended_at_ms: int
    result: str | None
    status: str | None
    clock_initial: int | None
    clock_increment: int | None
    initial_fen: str | None
    variant: str
    source: str
    white: tuple[str | None, str | None, int | None]  # user id, name, rating
    black: tuple[str | None, str | None, int | None]
    provenance: Analysis
    fingerprint: bytes
    packed_raw: bytes = field(repr=False)
    packed_evals: bytes = field(repr=False)
    _decoded: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def raw(self) -> str:
        """The stored text of the game (decompressed)."""
        raw: str | None = self._decoded.get("raw")
        if raw is None:
            raw = self._decoded["raw"] = decompress_raw(self.packed_raw)
        return raw

    @property
    def analysis(self) -> Analysis:
        """The stored evals and where they came from. Raises ValueError for a blob of an
        unknown layout."""
        analysis: Analysis | None = self._decoded.get("analysis")
        if analysis is None:
            analysis = self._decoded["analysis"] = replace(
                self.provenance, evals=unpack_evals(self.packed_evals))
        return analysis


def _analysed_select() -> Any:
    t = _table()
    games = Game.__table__
    white = GameSide.__table__.alias("white")
    black = GameSide.__table__.alias("black")
    g = games.c
    return (
        select(g.pk, g.id, g.perf, g.created_at_ms, g.ended_at_ms, g.result, g.status,
               g.clock_initial,
               g.clock_increment, g.initial_fen, g.variant, g.source,
               white.c.user_id, white.c.name, white.c.rating,
               black.c.user_id, black.c.name, black.c.rating, g.raw,
               t.c.source.label("a_source"), t.c.engine, t.c.engine_version, t.c.nodes,
               t.c.evals, t.c.calibration, g.digest)
        .select_from(t)
        .join(games, g.pk == t.c.game_pk)
        .join(white, and_(white.c.game_pk == g.pk, white.c.color == "white"))
        .join(black, and_(black.c.game_pk == g.pk, black.c.color == "black"))
    )


def _fingerprint(row: Any, evals: bytes) -> bytes:
    """:attr:`AnalysedGame.fingerprint` of a row of :func:`_analysed_select` (the stored text
    by its digest, kept beside it)."""
    return hashlib.blake2b(_FINGERPRINT.encode((
        evals, row.digest, row.perf, row.created_at_ms, row.result, row.status,
        row.clock_initial, row.clock_increment, row.initial_fen, row.variant, row.source,
        row.a_source, row.engine, row.engine_version, row.nodes, row.calibration)),
        digest_size=16).digest()


def _analysed(row: Any) -> AnalysedGame:
    raw, evals = bytes(row.raw), bytes(row.evals)
    return AnalysedGame(
        row.pk, row.id, row.perf, row.created_at_ms, row.ended_at_ms, row.result, row.status,
        row.clock_initial, row.clock_increment, row.initial_fen, row.variant, row.source,
        (row[12], row[13], row[14]), (row[15], row[16], row[17]),
        Analysis((), row.a_source, row.engine, row.engine_version, row.nodes,
                 calibration=row.calibration), _fingerprint(row, evals), raw, evals)


def analysed_games(db: Database, user_id: str, perf: str) -> Iterator[AnalysedGame]:
    """The player's analysed games of ``perf``, newest first (end time, then id)."""
    g = Game.__table__.c
    me = GameSide.__table__.alias("me")
    stmt = (_analysed_select()
            .join(me, and_(me.c.game_pk == g.pk, me.c.user_id == user_id.lower()))
            .where(g.perf == perf)
            .order_by(g.ended_at_ms.desc(), g.id.desc()))
    with db.engine.connect() as conn:
        for row in conn.execute(stmt):
            yield _analysed(row)


def analysed_players(db: Database, user_ids: Collection[str], perf: str) -> set[str]:
    """Which of ``user_ids`` (lower-case ids) have at least one analysed game of ``perf``: one
    query for a whole group."""
    if not user_ids:
        return set()
    g, s = Game.__table__.c, GameSide.__table__.c
    stmt = (select(s.user_id).distinct()
            .join(Game.__table__, g.pk == s.game_pk)
            .where(s.user_id.in_(list(user_ids)), g.perf == perf,
                   exists().where(GameAnalysis.__table__.c.game_pk == g.pk)))
    with db.engine.connect() as conn:
        return {row[0] for row in conn.execute(stmt)}


def analysed_game(db: Database, game_id: str) -> AnalysedGame | None:
    """One analysed game by id, or ``None`` (no such game, or no evals stored)."""
    stmt = _analysed_select().where(Game.__table__.c.id == game_id)
    with db.engine.connect() as conn:
        row = conn.execute(stmt).first()
    return None if row is None else _analysed(row)


@dataclass(frozen=True, slots=True)
class GameToAnalyse:
    """A game without stored evals: its key and id, its stored text and how to read it."""

    pk: int
    id: str
    source: str
    variant: str
    initial_fen: str | None
    raw: str


#: The variants a local analysis covers: standard chess, also from a set-up position.
ANALYSABLE_VARIANTS: Final = ("standard", "fromPosition")


def players_games(user_ids: str | Sequence[str], perf: str | None = None, *,
                  since_ms: int | None = None) -> Any:
    """``SELECT games.pk`` of the games (of ``perf``, started at or after ``since_ms``) of
    standard chess with moves where one of ``user_ids`` (one id or several) plays a side: each
    game once, a game between two of them too. Unordered; stored evals not looked at."""
    ids = [user_ids.lower()] if isinstance(user_ids, str) else [u.lower() for u in user_ids]
    g = Game.__table__.c
    s = GameSide.__table__.c
    sides = select(s.game_pk).where(s.user_id.in_(ids))  # the user-id index, then the games
    stmt = (select(g.pk)
            .where(g.pk.in_(sides), g.variant.in_(ANALYSABLE_VARIANTS), g.plies > 0))
    if perf is not None:
        stmt = stmt.where(g.perf == perf)
    if since_ms is not None:
        stmt = stmt.where(g.created_at_ms >= since_ms)
    return stmt


def games_to_analyse(db: Database, user_id: str | Sequence[str], perf: str | None = None, *,
                     since_ms: int | None = None, last: int | None = None
                     ) -> tuple[list[GameToAnalyse], int]:
    """The games of the player ``user_id`` (or of any of several players: a group's members,
    each game once) (of ``perf``; started at or after ``since_ms``; among the ``last`` most
    recent) of standard chess with moves and no stored evals, newest first; and how many of
    the games asked for already have evals."""
    t = _table()
    g = Game.__table__.c
    base = (players_games(user_id, perf, since_ms=since_ms)
            .order_by(g.ended_at_ms.desc(), g.id.desc()))
    if last is not None:
        base = base.limit(last)
    asked = base.subquery()
    done_stmt = select(func.count()).select_from(asked).where(
        exists().where(t.c.game_pk == asked.c.pk))
    todo_stmt = (select(g.pk, g.id, g.source, g.variant, g.initial_fen, g.raw)
                 .join(asked, asked.c.pk == g.pk)
                 .where(~exists().where(t.c.game_pk == g.pk))
                 .order_by(g.ended_at_ms.desc(), g.id.desc()))
    with db.engine.connect() as conn:
        done = int(conn.execute(done_stmt).scalar() or 0)
        todo = [GameToAnalyse(pk, gid, src, variant, fen, decompress_raw(raw))
                for pk, gid, src, variant, fen, raw in conn.execute(todo_stmt)]
    return todo, done


def games_by_key(conn: Connection, pks: Sequence[int]) -> list[GameToAnalyse]:
    """The games ``pks`` (those that exist), newest first, as :func:`games_to_analyse` gives
    them."""
    g = Game.__table__.c
    stmt = (select(g.pk, g.id, g.source, g.variant, g.initial_fen, g.raw)
            .where(g.pk.in_(list(pks))).order_by(g.ended_at_ms.desc(), g.id.desc()))
    return [GameToAnalyse(pk, gid, src, variant, fen, decompress_raw(raw))
            for pk, gid, src, variant, fen, raw in conn.execute(stmt)]


def insert_analysis(conn: Connection, game_pk: int, analysis: Analysis) -> None:
    """Insert one game's evals in the caller's transaction (the game has none stored)."""
    conn.execute(_table().insert(), [_row(game_pk, analysis, now_ms())])


def count_analysed(db: Database, user_id: str, perf: str | None = None) -> dict[str, int]:
    """``{source: games}`` of the player's analysed games (of ``perf``)."""
    t = _table()
    g = Game.__table__.c
    me = GameSide.__table__.alias("me")
    stmt = (select(t.c.source, func.count()).select_from(t)
            .join(Game.__table__, g.pk == t.c.game_pk)
            .join(me, and_(me.c.game_pk == g.pk, me.c.user_id == user_id.lower()))
            .group_by(t.c.source))
    if perf is not None:
        stmt = stmt.where(g.perf == perf)
    with db.engine.connect() as conn:
        return {src: int(n) for src, n in conn.execute(stmt)}


def stored_analyses(db: Database, pks: Iterable[int]) -> dict[int, Analysis]:
    """``{game key: analysis}`` for the games among ``pks`` that have stored evals."""
    t = _table()
    keys = list(pks)
    out: dict[int, Analysis] = {}
    with db.engine.connect() as conn:
        for i in range(0, len(keys), _IDS_PER_QUERY):
            for row in conn.execute(select(t).where(t.c.game_pk.in_(keys[i:i + 500]))):
                out[row.game_pk] = _analysis(row)
    return out


def analysed_perfs(db: Database, user_id: str) -> dict[str, int]:
    """``{perf: analysed games}`` of the player, most analysed first."""
    t = _table()
    g = Game.__table__.c
    me = GameSide.__table__.alias("me")
    stmt = (select(g.perf, func.count()).select_from(t)
            .join(Game.__table__, g.pk == t.c.game_pk)
            .join(me, and_(me.c.game_pk == g.pk, me.c.user_id == user_id.lower()))
            .where(g.perf.is_not(None))
            .group_by(g.perf))
    with db.engine.connect() as conn:
        rows = [(perf, int(n)) for perf, n in conn.execute(stmt)]
    return dict(sorted(rows, key=lambda r: (-r[1], r[0])))
