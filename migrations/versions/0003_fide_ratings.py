"""the real FIDE rating: FIDE profiles, their monthly rating lists, player links

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

``fide_players`` holds a FIDE profile per FIDE id (as last fetched from Lichess's
``/api/fide/player/{id}``), ``fide_ratings`` the published monthly lists (``kind`` standard |
rapid | blitz, ``month`` ``YYYY-MM``, rating points), ``fide_links`` the FIDE id of a tracked
player. See :mod:`tracker.store.fide`.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "fide_players",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("federation", sa.String(length=8), nullable=True),
        sa.Column("birth_year", sa.Integer(), nullable=True),
        sa.Column("title", sa.String(length=8), nullable=True),
        sa.Column("standard", sa.Integer(), nullable=True),
        sa.Column("rapid", sa.Integer(), nullable=True),
        sa.Column("blitz", sa.Integer(), nullable=True),
        sa.Column("fetched_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fide_players")),
    )
    op.create_table(
        "fide_ratings",
        sa.Column("fide_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("month", sa.String(length=7), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["fide_id"],
            ["fide_players.id"],
            name=op.f("fk_fide_ratings_fide_id_fide_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("fide_id", "kind", "month", name=op.f("pk_fide_ratings")),
    )
    op.create_table(
        "fide_links",
        sa.Column("player_id", sa.String(length=64), nullable=False),
        sa.Column("fide_id", sa.BigInteger(), nullable=False),
        sa.Column("linked_at_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["fide_id"],
            ["fide_players.id"],
            name=op.f("fk_fide_links_fide_id_fide_players"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_fide_links_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_fide_links")),
    )
    with op.batch_alter_table("fide_links", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_fide_links_fide_id"), ["fide_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("fide_links", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_fide_links_fide_id"))
    op.drop_table("fide_links")
    op.drop_table("fide_ratings")
    op.drop_table("fide_players")
