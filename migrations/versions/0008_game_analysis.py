"""the evals of analysed games: one row per game, its evals packed, with their source

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02

``game_analysis`` keeps, for each analysed game, one eval per ply (centipawns or mate, White's
view), the engine's better move and Lichess's judgment where known, packed and compressed in
``evals`` (see :mod:`tracker.store.analysis`), with where they came from: ``source`` is
``lichess`` (Lichess's server analysis, from an export) or ``engine`` (``tracker analyse``:
``engine``, ``engine_version`` and ``nodes``, the node budget per position). It starts empty:
games imported with evals before it get theirs from their stored text the first time
``tracker analyse`` meets them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "game_analysis",
        sa.Column("game_pk", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("source", sa.String(length=8), nullable=False),
        sa.Column("engine", sa.String(length=64), nullable=True),
        sa.Column("engine_version", sa.String(length=32), nullable=True),
        sa.Column("nodes", sa.BigInteger(), nullable=True),
        sa.Column("plies", sa.Integer(), nullable=False),
        sa.Column("evals", sa.LargeBinary(), nullable=False),
        sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["game_pk"], ["games.pk"],
                                name=op.f("fk_game_analysis_game_pk_games"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("game_pk", name=op.f("pk_game_analysis")),
    )


def downgrade() -> None:
    op.drop_table("game_analysis")
