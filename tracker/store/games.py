"""Games in the store: the batched write with its "never poorer" rule, and the reads.

One column spec, :data:`GAME_COLUMNS` and :data:`SIDE_COLUMNS`, is used by both paths: the
write builds rows in that order, and the reads select the columns named there (the record's
own columns, :data:`RECORD_GAME_COLUMNS`, in :class:`~tracker.core.records.GameRecord` field
order; :data:`REPLAY_COLUMNS` for the replay's plain rows) and read the rows back by the same
names' positions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final

from sqlalchemy import Connection, Select, Table, and_, func, select, update
from sqlalchemy.sql import ColumnElement, FromClause

from tracker.core.codec import compress_raw, decompress_raw, intact_raw, raw_digest
from tracker.core.records import Analysis, GameRecord, Side
from tracker.core.utc import datetime_to_ms, utc_from_ms
from tracker.store.analysis import write_lichess_analyses
from tracker.store.engine import Database, sqlite_select_in_sql, sqlite_upsert_sql
from tracker.store.models import Game, GameSide, ImportRun
from tracker.store.snapshots import bump_write_seq
from tracker.store.snapshots import write_seq as read_write_seq

#: Games written per transaction: an interrupted import keeps every finished batch, never a
#: half-written game, and a batch is small enough to keep memory flat. The API import's size:
#: its games come at network speed, and a batch is what a killed download loses.
BATCH_SIZE: Final = 500
#: Games written per transaction by a file import: each commit costs a fixed share (the write
#: lock, the stored-copy lookup, the WAL's commit frame): 10-17 % of a 100k import's CPU time
#: at 500 games a batch. 5000 games are ~10 MB of records and a quarter of a second
#: of work: memory stays flat, and a killed import loses at most that (the same command
#: finishes it; Ctrl+C still writes the batch in hand).
FILE_BATCH_SIZE: Final = 5000

#: A richer source is never overwritten by a poorer one (PGN has no end time, no provisional
#: flags): re-importing a PGN download over API games changes nothing.
SOURCE_RANK: Final = {"api": 2, "ndjson": 2, "pgn": 1}

#: Ids per ``IN (…)`` lookup: far below SQLite's bound-parameter limit on every version.
_LOOKUP_CHUNK: Final = 500

#: The columns of ``games`` in the order of the rows :func:`write_games` builds: ``pk``, the
#: surrogate key the sides refer to, then the record's columns.
GAME_COLUMNS: Final = (
    "pk", "id", "source", "created_at_ms", "last_move_at_ms", "ended_at_ms", "rated", "variant",
    "speed", "perf", "status", "result", "plies", "clock_initial", "clock_increment",
    "days_per_turn", "initial_fen", "eco", "opening_name", "tournament_id", "raw", "digest",
)
#: The columns of ``game_sides`` in the order of the rows :func:`write_games` builds.
SIDE_COLUMNS: Final = (
    "game_pk", "color", "user_id", "name", "title", "rating", "rating_diff", "provisional",
    "ai_level",
)
#: Columns the store derives (``pk``, ``ended_at_ms``) or reads on demand (``raw``, ``digest``).
_NOT_RECORD_FIELDS: Final = ("pk", "ended_at_ms", "raw", "digest")
#: The game columns that are record fields, in :class:`GameRecord` field order (times ``_ms``).
RECORD_GAME_COLUMNS: Final = tuple(c for c in GAME_COLUMNS if c not in _NOT_RECORD_FIELDS)
#: The side columns that are :class:`Side` fields, in field order (without the key).
RECORD_SIDE_COLUMNS: Final = SIDE_COLUMNS[2:]

#: The columns of :func:`replay_rows`, in order: what a replay reads of a game and its sides,
#: the player's side (``me_``, with its colour) first, then the other side (``opp_``).
REPLAY_COLUMNS: Final = (
    "id", "source", "created_at_ms", "ended_at_ms", "rated", "variant", "status", "result",
    "plies", "me_color",
    "me_user_id", "me_name", "me_rating", "me_rating_diff", "me_provisional", "me_ai_level",
    "opp_user_id", "opp_name", "opp_rating", "opp_rating_diff", "opp_provisional",
    "opp_ai_level",
)


def _check_spec() -> None:
    """The read path rebuilds records positionally: the spec must follow the field order."""
    record = [f.name for f in dataclasses.fields(GameRecord)
              if f.name not in ("white", "black", "raw", "analysis")]
    side = [f.name for f in dataclasses.fields(Side)]
    if [c.removesuffix("_ms") for c in RECORD_GAME_COLUMNS] != record or (
            list(RECORD_SIDE_COLUMNS) != side):
        raise AssertionError("store column spec out of step with GameRecord/Side fields")


_check_spec()

_N_GAME: Final = len(RECORD_GAME_COLUMNS)
_N_SIDE: Final = len(RECORD_SIDE_COLUMNS)
_WHITE: Final = slice(_N_GAME, _N_GAME + _N_SIDE)
_BLACK: Final = slice(_N_GAME + _N_SIDE, _N_GAME + 2 * _N_SIDE)
_RAW: Final = _N_GAME + 2 * _N_SIDE

_SQLITE_GAMES_UPSERT: Final = sqlite_upsert_sql("games", GAME_COLUMNS, ("pk",))
_SQLITE_SIDES_UPSERT: Final = sqlite_upsert_sql("game_sides", SIDE_COLUMNS, ("game_pk", "color"))
#: What the write path reads of a stored copy: the game id, then :class:`StoredCopy`'s fields.
_COPY_COLUMNS: Final = ("id", "pk", "digest", "source", "plies", "result")


@dataclass(frozen=True, slots=True)
class StoredGame:
    """What a re-import needs of a stored game: its raw digest, and (user id, name) per side."""

    digest: str
    white: tuple[str | None, str | None]
    black: tuple[str | None, str | None]


@dataclass(frozen=True, slots=True)
class StoredCopy:
    """What the write path compares of a stored game (digest, source, plies, result), and its
    key (``pk``: a new copy is written over it)."""

    pk: int
    digest: str
    source: str
    plies: int | None
    result: str | None


@dataclass(slots=True)
class WriteCounts:
    """What one :func:`write_games` call did, in games."""

    new: int = 0
    updated: int = 0
    unchanged: int = 0
    #: Games whose Lichess evals were stored (new games with evals, and stored games that
    #: gained them): not a fourth kind of game, a count beside the three.
    evals_added: int = dataclasses.field(default=0, repr=False)

    def add(self, other: WriteCounts) -> None:
        self.new += other.new
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.evals_added += other.evals_added


#: A record as the write path stores it, made without the store (:func:`prepare`), a plain
#: tuple (it crosses from an import's reader process to its writer as cheaply as a tuple
#: pickles: a msgspec.Struct costs 1.3-1.4x, a named tuple 1.7x; benchmarks/bench_structs.py,
#: docs/architecture.md), read by the positions below: what the batch's
#: dedupe and the "never poorer" rule compare (id, raw digest, source, plies, result); the
#: ``games`` row without its key, raw text and digest (:data:`GAME_COLUMNS` from ``id`` to
#: ``tournament_id``: times in ms since epoch UTC); each side's ``game_sides`` row without
#: the game's key (:data:`SIDE_COLUMNS` after ``game_pk``: colour first); the evals to keep
#: apart; the raw text as stored (compressed, :func:`~tracker.core.codec.compress_raw`).
PreparedGame = tuple[str, str, str, int | None, str | None, tuple[Any, ...], tuple[Any, ...],
                     tuple[Any, ...], Analysis | None, bytes]
P_ID: Final = 0
P_DIGEST: Final = 1
P_SOURCE: Final = 2
P_PLIES: Final = 3
P_RESULT: Final = 4
P_GAME: Final = 5
P_WHITE: Final = 6
P_BLACK: Final = 7
P_ANALYSIS: Final = 8
P_RAW: Final = 9


def prepare(rec: GameRecord) -> PreparedGame:
    """The rows of ``rec`` (see :data:`PreparedGame`). Pure: no database, so an import's
    reader can make them beside the writer."""
    created = datetime_to_ms(rec.created_at)
    last = datetime_to_ms(rec.last_move_at) if rec.last_move_at is not None else None
    w, b = rec.white, rec.black
    text = rec.raw.encode("utf-8")
    return (
        rec.id, raw_digest(text), rec.source, rec.plies, rec.result,
        (rec.id, rec.source, created, last, last if last is not None else created, rec.rated,
         rec.variant, rec.speed, rec.perf, rec.status, rec.result, rec.plies,
         rec.clock_initial, rec.clock_increment, rec.days_per_turn, rec.initial_fen, rec.eco,
         rec.opening_name, rec.tournament_id),
        ("white", w.user_id, w.name, w.title, w.rating, w.rating_diff, w.provisional,
         w.ai_level),
        ("black", b.user_id, b.name, b.title, b.rating, b.rating_diff, b.provisional,
         b.ai_level),
        rec.analysis,
        compress_raw(text),
    )


def _poorer(game: PreparedGame, source: str, plies: int | None, result: str | None) -> bool:
    """True when ``game`` has less than the stored copy of the same game (its ``source``,
    ``plies``, ``result``): a poorer source, fewer plies, or no result where the stored copy
    has one. A finished game never loses moves."""
    mine = game[P_PLIES]
    return (
        SOURCE_RANK[game[P_SOURCE]] < SOURCE_RANK.get(source, 0)
        or (plies is not None and mine is not None and mine < plies)
        or (result is not None and game[P_RESULT] is None)
    )


#: ``(run id, fields of the run once this batch's counts are added)``: written in the batch's
#: transaction, so a run's counts never fall behind its stored games (see
#: :meth:`tracker.store.db.Store.counting_run`).
RunCounts = tuple[int, Callable[[WriteCounts], Mapping[str, Any]]]


def write_games(db: Database, records: Iterable[GameRecord], run: RunCounts | None = None
                ) -> WriteCounts:
    """Insert or update one batch of games in one transaction; returns what it did: see
    :func:`write_prepared` of the records made by :func:`prepare`."""
    return write_prepared(db, [prepare(rec) for rec in records], run)


def write_prepared(db: Database, games: Iterable[PreparedGame], run: RunCounts | None = None,
                   written: WrittenGames | None = None) -> WriteCounts:
    """Insert or update one batch of games (each made by :func:`prepare` from its record) in one
    transaction; returns what it did.

    With ``run``, the import run's counts are updated in the same transaction. With
    ``written``, the games written are kept there once the transaction is committed.

    A game twice in one batch is counted twice (``unchanged`` or ``updated`` the second
    time), as it is across batches, so an import's ``read`` always adds up.

    Lichess's evals a record carries are stored beside the game (one ``game_analysis`` row,
    :func:`tracker.store.analysis.write_lichess_analyses`), also for a game otherwise left as
    it was: a re-import with evals adds them to a stored game without them.

    A game already stored with the same raw text is left alone (``unchanged``), and so is
    one that the new copy would make poorer: a richer source (API/NDJSON over PGN), more
    moves or a result are never overwritten by a copy with less (a cut file's last game).
    The stored copies are read and the batch written in one transaction that holds the
    database's write lock (:meth:`~tracker.store.engine.Database.lock_writes`): two imports
    of the same games at once still never store the poorer copy.
    Call it with batches of about :data:`BATCH_SIZE`; each call commits.
    """
    by_id: dict[str, PreparedGame] = {}
    counts = WriteCounts()
    for game in games:
        earlier = by_id.get(game[P_ID])
        if earlier is not None:  # a game twice in one batch: counted, as across batches
            if earlier[P_DIGEST] == game[P_DIGEST] or _poorer(
                    game, earlier[P_SOURCE], earlier[P_PLIES], earlier[P_RESULT]):
                counts.unchanged += 1
                continue
            counts.updated += 1
        by_id[game[P_ID]] = game  # the later, richer or changed copy wins
    if not by_id:
        return counts
    with db.engine.begin() as conn:
        # The comparison with the stored copies and the write: one transaction holding the
        # write lock from its start, so a concurrent import cannot store its copy in between
        # (a PGN copy written over the richer API record it did not see).
        db.lock_writes(conn)
        existing = _stored_copies(db, conn, list(by_id), True)  # check_raw
        next_pk = _largest_pk(conn) + 1
        game_rows, side_rows, analyses = _rows(by_id, existing, next_pk, counts)
        if game_rows:
            db.upsert_rows(conn, _table(Game), GAME_COLUMNS, game_rows, _SQLITE_GAMES_UPSERT)
            db.upsert_rows(conn, _table(GameSide), SIDE_COLUMNS, side_rows,
                           _SQLITE_SIDES_UPSERT)
            bump_write_seq(db, conn)  # saved replay passes are stale from this commit on
        if analyses:
            counts.evals_added = write_lichess_analyses(conn, analyses)
        if run is not None:
            run_id, fields = run
            conn.execute(update(ImportRun).where(ImportRun.id == run_id)
                         .values(**fields(counts)))
    if written is not None and game_rows:
        written.add(game_rows, side_rows)
    return counts


#: Where :class:`WrittenGames` finds a replay row's values (:data:`REPLAY_COLUMNS`, then the
#: perf) in the rows the write builds, by the column specs' names: the game's columns before
#: ``me_color``, each side's after it (``me_x`` is the side's ``x``), and the perf.
_ME_COLOR: Final = REPLAY_COLUMNS.index("me_color")
_ME: Final = slice(_ME_COLOR + 1, REPLAY_COLUMNS.index("opp_user_id"))
_OPP: Final = slice(_ME.stop, len(REPLAY_COLUMNS))
_KEPT_PERF_AT: Final = len(REPLAY_COLUMNS)
_KEPT_GAME: Final = itemgetter(*(GAME_COLUMNS.index(c) for c in REPLAY_COLUMNS[:_ME_COLOR]))
_KEPT_SIDE: Final = itemgetter(*(SIDE_COLUMNS.index(c.removeprefix("me_"))
                                 for c in REPLAY_COLUMNS[_ME]))
_KEPT_PERF: Final = GAME_COLUMNS.index("perf")

#: The most games :class:`WrittenGames` keeps (~40 MB); past it, the passes read them back.
KEPT_GAMES: Final = 120_000


class WrittenGames:
    """The games one import wrote into a database that held none before it, kept as the
    columns a replay pass reads (:data:`REPLAY_COLUMNS`), so that the passes saved right
    after the import (:func:`tracker.report.scale_runs.refresh`) walk them instead of reading them
    all back (100k games: ~0.9 s of SQL, sorted, against ~0.25 s here).

    Usable only while they are the whole truth: :meth:`begin` found no game stored, and the
    store's write counter has moved by this import's batches alone (another writer in
    between, and the rows are read back as before). At most :data:`KEPT_GAMES`: past it,
    nothing is kept.
    """

    def __init__(self) -> None:
        self._rows: dict[str, tuple[Any, ...]] = {}
        self._start: int | None = None
        self._batches = 0

    def begin(self, db: Database) -> None:
        """Keep the games written from now on, if ``db`` holds none (else keep nothing)."""
        with db.engine.connect() as conn:
            empty = conn.execute(select(_table(Game).c.pk).limit(1)).first() is None
        self._start = read_write_seq(db) if empty else None

    def add(self, game_rows: Sequence[tuple[Any, ...]], side_rows: Sequence[tuple[Any, ...]]
            ) -> None:
        """One committed batch: its game rows (:data:`GAME_COLUMNS`) and their sides
        (:data:`SIDE_COLUMNS`, white then black, game by game)."""
        if self._start is None:
            return
        if len(self._rows) + len(game_rows) > KEPT_GAMES:
            self._start = None
            self._rows.clear()
            return
        self._batches += 1  # each batch with games moved the write counter once
        rows, id_at = self._rows, GAME_COLUMNS.index("id")
        for i, g in enumerate(game_rows):
            # the row replay_rows_by_perf reads for the white player
            rows[g[id_at]] = (*_KEPT_GAME(g), "white", *_KEPT_SIDE(side_rows[2 * i]),
                              *_KEPT_SIDE(side_rows[2 * i + 1]), g[_KEPT_PERF])

    def replay_rows_by_perf(self, db: Database, user_id: str
                            ) -> list[tuple[Any, ...]] | None:
        """What :func:`replay_rows_by_perf` would read of ``user_id``'s games now, in its
        order, or ``None`` when that may differ (see the class's docstring)."""
        if self._start is None or read_write_seq(db) != self._start + self._batches:
            return None
        uid = user_id.lower()
        me, opp, color, perf_at = _ME, _OPP, _ME_COLOR, _KEPT_PERF_AT
        by_perf: dict[str | None, list[tuple[Any, ...]]] = {}
        for t in self._rows.values():
            if t[me.start] == uid:
                by_perf.setdefault(t[perf_at], []).append(t)
            if t[opp.start] == uid:  # the black player's row: the sides the other way round
                by_perf.setdefault(t[perf_at], []).append(
                    (*t[:color], "black", *t[opp], *t[me], t[perf_at]))
        # ORDER BY perf, ended_at_ms, id: NULL first, text by code point (SQLite's BINARY);
        # by id, then by end (a stable sort keeps the ids' order within an end): two sorts
        # on one value each, a third of one sort on a tuple of three
        out: list[tuple[Any, ...]] = []
        for perf in sorted(by_perf, key=lambda p: (p is not None, p or "")):
            rows = by_perf[perf]
            rows.sort(key=itemgetter(REPLAY_COLUMNS.index("id")))
            rows.sort(key=itemgetter(REPLAY_COLUMNS.index("ended_at_ms")))
            out += rows
        return out


def _rows(by_id: Mapping[str, PreparedGame], existing: Mapping[str, StoredCopy], next_pk: int,
          counts: WriteCounts) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]],
                     list[tuple[int, Analysis, bool]]]:
    """The game and side rows to write (new keys from ``next_pk``), counted in ``counts``, and
    Lichess's evals to keep apart, one row per game: ``(key, analysis, the game's row
    written)`` (a game left as it was may still bring evals the store lacks)."""
    game_rows: list[tuple[Any, ...]] = []
    side_rows: list[tuple[Any, ...]] = []
    analyses: list[tuple[int, Analysis, bool]] = []
    # In id order: the id index's pages are touched in turn, and the new games' keys
    # (numbered here, under the write lock) ascend with the rows.
    for gid in sorted(by_id):
        game = by_id[gid]
        old = existing.get(gid)
        if old is None:
            counts.new += 1
            pk = next_pk
            next_pk += 1
        elif old.digest == game[P_DIGEST] or _poorer(game, old.source, old.plies, old.result):
            counts.unchanged += 1
            if game[P_ANALYSIS] is not None:
                analyses.append((old.pk, game[P_ANALYSIS], False))
            continue
        else:
            counts.updated += 1
            pk = old.pk
        analysis = game[P_ANALYSIS]
        if analysis is not None:
            analyses.append((pk, analysis, True))
        game_rows.append((pk, *game[P_GAME], game[P_RAW], game[P_DIGEST]))
        side_rows.append((pk, *game[P_WHITE]))
        side_rows.append((pk, *game[P_BLACK]))
    return game_rows, side_rows, analyses


def _table(model: type[Game] | type[GameSide]) -> Table:
    table = model.__table__
    assert isinstance(table, Table)
    return table


def _largest_pk(conn: Connection) -> int:
    """The largest game key stored, 0 in an empty database (read under the write lock)."""
    return int(conn.execute(select(func.max(_table(Game).c.pk))).scalar() or 0)


def _stored_copies(db: Database, conn: Connection, ids: Sequence[str],
                   check_raw: bool = False) -> dict[str, StoredCopy]:
    """The stored copies of the games among ``ids`` (key, digest, source, plies, result).

    ``check_raw``: the raw text is read too, and a copy whose text no longer reads back to
    its digest (damaged, hand-edited) gets the digest ``""``: any new copy differs from it, so
    the write path writes the game again (``updated``), repairing it."""
    games = _table(Game)
    columns = (*_COPY_COLUMNS, "raw") if check_raw else _COPY_COLUMNS
    out: dict[str, StoredCopy] = {}
    for i in range(0, len(ids), _LOOKUP_CHUNK):
        chunk = list(ids[i : i + _LOOKUP_CHUNK])
        if db.is_sqlite:  # the driver directly: a third of the time per batch
            rows: Iterable[Any] = conn.exec_driver_sql(
                sqlite_select_in_sql("games", columns, "id", len(chunk)), tuple(chunk))
        else:
            rows = conn.execute(
                select(*(games.c[c] for c in columns)).where(games.c.id.in_(chunk)))
        for gid, pk, digest, source, plies, result, *raw in rows:
            if raw and not intact_raw(raw[0], digest):
                digest = ""
            out[gid] = StoredCopy(pk, digest, source, plies, result)
    return out


def stored_digests(db: Database, ids: Sequence[str]) -> dict[str, str]:
    """``{game id: raw digest}`` of the games among ``ids`` already stored (one cheap
    lookup: a first import asks it for every batch and finds nothing)."""
    with db.engine.connect() as conn:
        return {gid: copy.digest for gid, copy in _stored_copies(db, conn, ids).items()}


def stored_games(db: Database, ids: Sequence[str]) -> dict[str, StoredGame]:
    """The games among ``ids`` already stored: raw digest and both sides' user id and name.

    A re-import uses it to count a game whose raw text is unchanged without parsing it; a
    game whose stored text no longer reads back to its digest (damaged, hand-edited) is left
    out, so the re-import reads and writes it again.
    """
    out: dict[str, StoredGame] = {}
    read = _stored_games_joined if db.is_sqlite else _stored_games_in_two
    with db.engine.connect() as conn:
        for i in range(0, len(ids), _LOOKUP_CHUNK):
            read(conn, list(ids[i : i + _LOOKUP_CHUNK]), out)
    return out


def _stored_games_joined(conn: Connection, ids: list[str], out: dict[str, StoredGame]) -> None:
    """:func:`stored_games` of one chunk in one join (SQLite: a tenth faster than two reads)."""
    games = _table(Game)
    white = _table(GameSide).alias("white")
    black = _table(GameSide).alias("black")
    stmt = (
        select(games.c.id, games.c.digest, games.c.raw, white.c.user_id, white.c.name,
               black.c.user_id, black.c.name)
        .join(white, and_(white.c.game_pk == games.c.pk, white.c.color == "white"))
        .join(black, and_(black.c.game_pk == games.c.pk, black.c.color == "black"))
        .where(games.c.id.in_(ids))
    )
    for gid, digest, raw, wid, wname, bid, bname in conn.execute(stmt):
        if intact_raw(raw, digest):
            out[gid] = StoredGame(digest, (wid, wname), (bid, bname))


def _stored_games_in_two(conn: Connection, ids: list[str], out: dict[str, StoredGame]) -> None:
    """:func:`stored_games` of one chunk in two reads, each by an index whatever the planner
    knows of the tables: the games by id, then their sides by key. (As one join, PostgreSQL
    right after a bulk import, before its statistics caught up, scanned every side for every
    chunk: 100k games re-imported in 32 s instead of 8.)"""
    games = _table(Game)
    sides = _table(GameSide)
    found = {pk: (gid, digest) for pk, gid, digest, raw in conn.execute(
        select(games.c.pk, games.c.id, games.c.digest, games.c.raw).where(games.c.id.in_(ids)))
        if intact_raw(raw, digest)}
    if not found:
        return
    players: dict[tuple[int, str], tuple[str | None, str | None]] = {
        (pk, color): (uid, name) for pk, color, uid, name in conn.execute(
            select(sides.c.game_pk, sides.c.color, sides.c.user_id, sides.c.name)
            .where(sides.c.game_pk.in_(list(found))))}
    for pk, (gid, digest) in found.items():
        white, black = players.get((pk, "white")), players.get((pk, "black"))
        if white is not None and black is not None:  # as the join: a game with both sides
            out[gid] = StoredGame(digest, white, black)


def _column(name: str, game: FromClause, sides: Sequence[tuple[str, FromClause]]
            ) -> ColumnElement[Any]:
    """The column a select names ``name``: ``x`` of the side whose prefix it starts with
    (``white_x``, ``me_x``), else the game's column ``name``."""
    for prefix, side in sides:
        if name.startswith(prefix):
            return side.c[name.removeprefix(prefix)]
    return game.c[name]


def _player_games_select(user_id: str, columns: Sequence[str]) -> Any:
    """``SELECT columns`` of a player's games with both sides joined, in end-time order.

    A column named ``white_x``/``black_x`` is the side's ``x``; any other, the game's.
    """
    games = _table(Game)
    white = _table(GameSide).alias("white")
    black = _table(GameSide).alias("black")
    me = _table(GameSide).alias("me")
    g = games.c
    return (
        select(*(_column(c, games, (("white_", white), ("black_", black))) for c in columns))
        .join(me, and_(me.c.game_pk == g.pk, me.c.user_id == user_id.lower()))
        .join(white, and_(white.c.game_pk == g.pk, white.c.color == "white"))
        .join(black, and_(black.c.game_pk == g.pk, black.c.color == "black"))
        .order_by(g.ended_at_ms, g.id)
    )


def _side(values: Sequence[Any]) -> Side:
    uid, name, title, rating, diff, provisional, ai = values
    return Side(uid, name, title, rating, diff,
                provisional if provisional.__class__ is bool else bool(provisional), ai)


def player_games(
    db: Database, user_id: str, perf: str | None = None, *, with_raw: bool = False
) -> Iterator[GameRecord]:
    """A player's games (optionally of one perf), in end-time order (``ended_at_ms``, then id).

    Records are rebuilt from the columns; ``raw`` is filled only with ``with_raw=True``.
    """
    columns = [*RECORD_GAME_COLUMNS, *(f"white_{c}" for c in RECORD_SIDE_COLUMNS),
               *(f"black_{c}" for c in RECORD_SIDE_COLUMNS)]
    if with_raw:
        columns.append("raw")
    stmt = _player_games_select(user_id, columns)
    if perf is not None:
        stmt = stmt.where(_table(Game).c.perf == perf)
    # Core rows on a plain connection, not an ORM session: the ORM's row processing was half
    # of a 100k-game replay report.
    with db.engine.connect() as conn:
        for row in conn.execute(stmt):
            gid, source, created, last, *rest = row[:_N_GAME]
            record = GameRecord(
                gid, source, utc_from_ms(created), _side(row[_WHITE]), _side(row[_BLACK]),
                utc_from_ms(last) if last is not None else None, *rest,
            )
            if with_raw:
                record = dataclasses.replace(record, raw=decompress_raw(row[_RAW]))
            yield record


def replay_rows(db: Database, user_id: str, perf: str) -> Iterator[tuple[Any, ...]]:
    """The player's games of ``perf`` as plain tuples of :data:`REPLAY_COLUMNS`, in the order
    of :func:`player_games` (one row per side the player played, as there): only what a
    replay reads, for a report over 100k games without building 100k records, read a chunk at
    a time (a million games are never all held). The player's side comes with its colour and
    the other side is the game's other row: two lookups a game instead of three. Booleans are
    as the driver gives them (0/1 from SQLite)."""
    for chunk in db.plain_chunks(_replay_select(user_id).where(_table(Game).c.perf == perf)):
        yield from chunk


def replay_rows_by_perf(db: Database, user_id: str) -> Iterator[tuple[Any, ...]]:
    """:func:`replay_rows` of every perf the player has games in, in one read: each row has
    the perf after the :data:`REPLAY_COLUMNS`, and the rows come perf by perf (by perf key),
    each perf's in the order of :func:`replay_rows`."""
    g = _table(Game).c
    stmt = _replay_select(user_id).add_columns(g.perf).order_by(None).order_by(
        g.perf, g.ended_at_ms, g.id)
    for chunk in db.plain_chunks(stmt):
        yield from chunk


def _replay_select(user_id: str) -> Select[Any]:
    """The ``SELECT`` of :func:`replay_rows` for one player, every perf."""
    games = _table(Game)
    me = _table(GameSide).alias("me")
    opp = _table(GameSide).alias("opp")
    g = games.c
    return (
        select(*(_column(c, games, (("me_", me), ("opp_", opp))) for c in REPLAY_COLUMNS))
        .select_from(me)
        .join(games, g.pk == me.c.game_pk)
        .join(opp, and_(opp.c.game_pk == me.c.game_pk, opp.c.color != me.c.color))
        .where(me.c.user_id == user_id.lower())
        .order_by(g.ended_at_ms, g.id)
    )


def count_games(db: Database) -> int:
    """All games in the database."""
    with db.session() as s:
        return s.execute(select(func.count()).select_from(Game)).scalar_one()


def game_source(db: Database, game_id: str) -> tuple[str, str | None, str, str] | None:
    """One game's source text, for showing its moves: ``(raw, initial_fen, variant, source)``,
    or ``None`` when no game has that id."""
    with db.engine.connect() as conn:
        row = conn.execute(
            select(Game.raw, Game.initial_fen, Game.variant, Game.source)
            .where(Game.id == game_id)
        ).first()
    if row is None:
        return None
    return decompress_raw(row[0]), row[1], row[2], row[3]
