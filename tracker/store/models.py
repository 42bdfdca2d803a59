"""SQLAlchemy ORM tables: the schema of a tracker database.

Times are integers, **milliseconds since the epoch, UTC** (``*_ms`` columns): portable between
SQLite and PostgreSQL, sortable, and free of time-zone guessing. Ratings are rating points.
The schema is upgraded by the Alembic migrations in ``migrations/``, which are the truth for
existing databases; a new database is created from this metadata in one step, stamped at the
newest migration (:func:`tracker.store.engine.migrate`), so it must match what the migrations
make exactly, column order included: tests compare both ways on SQLite and PostgreSQL.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Final

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

#: Constraint names fixed by convention so that migrations name them the same on every backend.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


#: A game id's column type: ``VARCHAR(32)``, with the binary ("C") collation on PostgreSQL,
#: whose default collation (``en_US.utf8``, ICU) sorts ``BBBBBBBB`` before ``aaaaaaaa``.
GAME_ID_TYPE: Final = String(32).with_variant(String(32, collation="C"), "postgresql")

class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Game(Base):
    """One game: its Lichess id (or a content id for PGN games without one) is the natural key,
    unique; ``pk`` is the surrogate key the sides refer to (migration 0005)."""

    __tablename__ = "games"

    #: Compared byte by byte on every database (PostgreSQL: the "C" collation, migration
    #: 0010), as SQLite and Python compare it: ``ORDER BY ended_at_ms, id`` is one order, so a
    #: replay of rows kept in memory equals one read back (two games ending in the same
    #: millisecond, ``aaaaaaaa`` and ``BBBBBBBB``, in the same order everywhere).
    id: Mapped[str] = mapped_column(GAME_ID_TYPE, unique=True)
    source: Mapped[str] = mapped_column(String(8))  # api | ndjson | pgn
    created_at_ms: Mapped[int] = mapped_column(BigInteger)
    last_move_at_ms: Mapped[int | None] = mapped_column(BigInteger)
    #: ``last_move_at_ms`` where known, else ``created_at_ms``: picks the rating period. Not
    #: indexed (since 0006): every read of games in time order is a player's, found through
    #: the sides' ``(user_id, game_pk)`` index and sorted, so an index here only cost imports.
    ended_at_ms: Mapped[int] = mapped_column(BigInteger)
    rated: Mapped[bool | None] = mapped_column(Boolean)
    variant: Mapped[str] = mapped_column(String(16))
    speed: Mapped[str | None] = mapped_column(String(16))
    perf: Mapped[str | None] = mapped_column(String(16))
    status: Mapped[str | None] = mapped_column(String(32))
    result: Mapped[str | None] = mapped_column(String(8))
    plies: Mapped[int | None] = mapped_column(Integer)
    clock_initial: Mapped[int | None] = mapped_column(Integer)
    clock_increment: Mapped[int | None] = mapped_column(Integer)
    days_per_turn: Mapped[int | None] = mapped_column(Integer)
    initial_fen: Mapped[str | None] = mapped_column(Text)
    eco: Mapped[str | None] = mapped_column(String(8))
    opening_name: Mapped[str | None] = mapped_column(Text)
    tournament_id: Mapped[str | None] = mapped_column(String(64))
    #: The source text of the game (NDJSON line or PGN), UTF-8, zstd-compressed (zlib in older
    #: databases; :func:`tracker.core.codec.decompress_raw` reads both).
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    #: A digest of the raw text: an unchanged re-import is detected without decompressing.
    digest: Mapped[str] = mapped_column(String(16))
    #: Numbered by the store as games are first stored (the batch's largest plus one), never
    #: reused or changed: the side table and its indexes, keyed by it, are appended to by a
    #: bulk import instead of written at random places (1M games: 51 → 28 s of SQLite time).
    #: The last column, where migration 0006 added it (a new database is made from this
    #: metadata, so its column order must be the migrations').
    pk: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)

    sides: Mapped[list[GameSide]] = relationship(
        back_populates="game", cascade="all, delete-orphan", order_by="GameSide.color.desc()"
    )


class GameSide(Base):
    """One player of one game (``color`` is ``white`` or ``black``)."""

    __tablename__ = "game_sides"
    #: The key is ``(game_pk, color)`` in that order (a game's two sides side by side), named
    #: here because ``game_pk`` is the last column.
    __table_args__ = (PrimaryKeyConstraint("game_pk", "color"),
                      Index("ix_game_sides_user_id_game_pk", "user_id", "game_pk"))

    color: Mapped[str] = mapped_column(String(5))
    user_id: Mapped[str | None] = mapped_column(String(64))  # lowercase Lichess id
    name: Mapped[str | None] = mapped_column(String(128))
    title: Mapped[str | None] = mapped_column(String(8))
    rating: Mapped[int | None] = mapped_column(Integer)  # at game start
    rating_diff: Mapped[int | None] = mapped_column(Integer)
    provisional: Mapped[bool] = mapped_column(Boolean, default=False)
    ai_level: Mapped[int | None] = mapped_column(Integer)
    #: The game (the key is ``(game_pk, color)``): the last column, where migration 0006
    #: added it.
    game_pk: Mapped[int] = mapped_column(
        Integer, ForeignKey("games.pk", ondelete="CASCADE"), autoincrement=False
    )

    game: Mapped[Game] = relationship(back_populates="sides")


class GameAnalysis(Base):
    """The evals of one analysed game (migration 0008; read and written by
    :mod:`tracker.store.analysis`): one row per game, never one per ply.

    ``source`` is ``lichess`` (Lichess's server analysis, from an export) or ``engine`` (a
    local analysis by ``engine`` ``engine_version`` at ``nodes`` nodes per position). ``evals``
    holds ``plies`` evals packed and compressed (:func:`tracker.store.analysis.pack_evals`).
    """

    __tablename__ = "game_analysis"

    game_pk: Mapped[int] = mapped_column(
        Integer, ForeignKey("games.pk", ondelete="CASCADE"), primary_key=True,
        autoincrement=False,
    )
    source: Mapped[str] = mapped_column(String(8))  # lichess | engine
    engine: Mapped[str | None] = mapped_column(String(64))
    engine_version: Mapped[str | None] = mapped_column(String(32))
    nodes: Mapped[int | None] = mapped_column(BigInteger)
    plies: Mapped[int] = mapped_column(Integer)
    evals: Mapped[bytes] = mapped_column(LargeBinary)
    #: When the row was written, ms since the epoch UTC.
    created_at_ms: Mapped[int] = mapped_column(BigInteger)
    #: The calibration a local analysis is read through (migration 0013;
    #: :mod:`tracker.analysis.engine_calibration`), ``None`` for Lichess's evals or where none
    #: covers the engine and budget.
    calibration: Mapped[str | None] = mapped_column(String(64))


class AnalysisClaim(Base):
    """A game claimed by a worker of ``tracker analyse --worker`` (migration 0012; read and
    written by :mod:`tracker.store.claims`): the worker's id and the end of its lease (ms since
    the epoch, the database's clock). Deleted with the game's evals written; claimed again
    once the lease has ended."""

    __tablename__ = "analysis_claims"

    game_pk: Mapped[int] = mapped_column(
        Integer, ForeignKey("games.pk", ondelete="CASCADE"), primary_key=True,
        autoincrement=False,
    )
    worker: Mapped[str] = mapped_column(String(64))
    expires_at_ms: Mapped[int] = mapped_column(BigInteger)


class Player(Base):
    """A tracked player and their replay settings (``None`` = the product default)."""

    __tablename__ = "players"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # lowercase Lichess id
    username: Mapped[str] = mapped_column(String(128))  # as Lichess spells it
    added_at_ms: Mapped[int] = mapped_column(BigInteger)
    start_rating: Mapped[int | None] = mapped_column(Integer)
    birth_year: Mapped[int | None] = mapped_column(Integer)
    rules: Mapped[str | None] = mapped_column(String(16))
    expected: Mapped[str | None] = mapped_column(String(8))
    count_provisional: Mapped[bool | None] = mapped_column(Boolean)
    #: ``lichess``, a scale model's key or ``all`` (migration 0004).
    scale: Mapped[str | None] = mapped_column(String(32))
    #: The scale of ``start_rating``: ``fide`` or ``lichess``.
    start_scale: Mapped[str | None] = mapped_column(String(8))
    #: ``standard`` or ``rapid-blitz``; ``None`` = by perf.
    chapter: Mapped[str | None] = mapped_column(String(16))


class SyncCursor(Base):
    """Where the last API import of a player stopped, per perf filter (``""`` = all perfs)."""

    __tablename__ = "sync_cursors"

    player_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    #: The perf keys, sorted, joined by commas: 135 characters with every perf (0007: 256).
    perf_filter: Mapped[str] = mapped_column(String(256), primary_key=True, default="")
    #: ``createdAt`` of the newest game fully imported, ms since epoch UTC.
    newest_created_at_ms: Mapped[int | None] = mapped_column(BigInteger)
    #: ``createdAt`` of the oldest game received by an unfinished full import: where to resume.
    resume_until_ms: Mapped[int | None] = mapped_column(BigInteger)
    last_sync_at_ms: Mapped[int | None] = mapped_column(BigInteger)
    #: The newest time up to which that unfinished import stored the games (migration 0007,
    #: the last column): where the next sync goes on once the gap is filled. ``NULL``: from
    #: ``resume_until_ms``.
    resume_top_ms: Mapped[int | None] = mapped_column(BigInteger)


class ImportRun(Base):
    """One import (file or API): what it read, stored and skipped, and how it ended."""

    __tablename__ = "import_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(String(8))  # api | file
    target: Mapped[str] = mapped_column(Text)  # username or file path(s)
    player_id: Mapped[str | None] = mapped_column(String(64))
    started_at_ms: Mapped[int] = mapped_column(BigInteger)
    finished_at_ms: Mapped[int | None] = mapped_column(BigInteger)
    #: One of :data:`tracker.store.runs.RUN_STATUSES` (0007: 16 wide, for ``interrupted``).
    status: Mapped[str] = mapped_column(String(16))
    read: Mapped[int] = mapped_column(Integer, default=0)
    new: Mapped[int] = mapped_column(Integer, default=0)
    updated: Mapped[int] = mapped_column(Integer, default=0)
    unchanged: Mapped[int] = mapped_column(Integer, default=0)
    skipped: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # reason -> count
    message: Mapped[str | None] = mapped_column(Text)
    #: reason -> count of games imported after a repair (e.g. "not UTF-8, read as cp1252")
    repaired: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=dict)


class RatingHistoryPoint(Base):
    """The player's Lichess rating after a UTC day (``/api/user/{u}/rating-history``)."""

    __tablename__ = "rating_history"

    player_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    perf: Mapped[str] = mapped_column(String(32), primary_key=True)
    day: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    rating: Mapped[int] = mapped_column(Integer)


# -- the real FIDE rating (migration 0003; read and written by tracker.store.fide) ----------


class FidePlayerRow(Base):
    """A FIDE profile (``/api/fide/player/{id}``) as last fetched."""

    __tablename__ = "fide_players"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(200))
    federation: Mapped[str | None] = mapped_column(String(8))
    birth_year: Mapped[int | None] = mapped_column(Integer)
    title: Mapped[str | None] = mapped_column(String(8))
    #: Current published ratings, FIDE rating points.
    standard: Mapped[int | None] = mapped_column(Integer)
    rapid: Mapped[int | None] = mapped_column(Integer)
    blitz: Mapped[int | None] = mapped_column(Integer)
    #: When the profile and its lists were last fetched, ms since the epoch UTC.
    fetched_at_ms: Mapped[int] = mapped_column(BigInteger)


class FideRatingRow(Base):
    """One published month of one FIDE rating list (``kind``: standard | rapid | blitz)."""

    __tablename__ = "fide_ratings"

    fide_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("fide_players.id", ondelete="CASCADE"), primary_key=True,
        autoincrement=False,
    )
    kind: Mapped[str] = mapped_column(String(8), primary_key=True)
    #: The list's month, ``"YYYY-MM"`` (sorts as text).
    month: Mapped[str] = mapped_column(String(7), primary_key=True)
    #: FIDE rating points in force from that month.
    rating: Mapped[int] = mapped_column(Integer)


class FideLinkRow(Base):
    """A tracked player's FIDE id."""

    __tablename__ = "fide_links"

    player_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    fide_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("fide_players.id", ondelete="CASCADE"), index=True
    )
    linked_at_ms: Mapped[int] = mapped_column(BigInteger)


# -- the write counter and the saved results (migrations 0005, 0011; tracker.store.snapshots) --


class StoreState(Base):
    """One row (``id`` 1): counters of the database as a whole."""

    __tablename__ = "store_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    #: Bumped in the transaction of every batch that stores or changes a game: anything
    #: derived from the games and saved with this number is current while it is unchanged.
    write_seq: Mapped[int] = mapped_column(BigInteger, default=0)


class CacheEntry(Base):
    """A result computed from one player's games of one perf, saved (an opaque ``payload``
    that :mod:`tracker.report` writes and reads) with the ``write_seq`` of the games it was
    computed from: the replay's pass over the games (``kind`` ``pass``), its replay on a scale
    (``run``), a group member's summary (``group``). ``options``: what it depends on besides
    the games; ``version``: the version of the code of its kind that computed it (a result of
    another version is never read). Migration 0011."""

    __tablename__ = "cache_entries"

    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    perf: Mapped[str] = mapped_column(String(16), primary_key=True)
    kind: Mapped[str] = mapped_column(String(8), primary_key=True)
    options: Mapped[str] = mapped_column(String(32), primary_key=True)
    version: Mapped[int] = mapped_column(Integer)
    write_seq: Mapped[int] = mapped_column(BigInteger)
    payload: Mapped[bytes] = mapped_column(LargeBinary)


# -- groups of players and their club scale models (migration 0009; tracker.store.groups) ---


class GroupRow(Base):
    """A named group of players (a club, a coach's students)."""

    __tablename__ = "groups"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    #: When the group was created, ms since the epoch UTC.
    created_at_ms: Mapped[int] = mapped_column(BigInteger)


class GroupMemberRow(Base):
    """A member of a group: a Lichess username (tracked or not yet imported) and, optionally,
    the FIDE id to link to it at the next sync."""

    __tablename__ = "group_members"

    group_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True,
        autoincrement=False,
    )
    #: Lowercase Lichess id.
    user_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    #: As given (Lichess's spelling once imported).
    username: Mapped[str] = mapped_column(String(128))
    fide_id: Mapped[int | None] = mapped_column(BigInteger)
    added_at_ms: Mapped[int] = mapped_column(BigInteger)


class ClubModelRow(Base):
    """A scale model fitted on a group's members with a real FIDE rating, one per perf: the
    fitted line, its figures and the data it was fitted on (``payload``, JSON), and when."""

    __tablename__ = "club_models"

    group_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True,
        autoincrement=False,
    )
    perf: Mapped[str] = mapped_column(String(16), primary_key=True)
    fitted_at_ms: Mapped[int] = mapped_column(BigInteger)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
