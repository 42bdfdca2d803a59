"""groups of players: groups, their members, and the club scale models fitted on them

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

``groups`` names a group (unique name, created ms UTC); ``group_members`` lists its players by
lowercase Lichess id (tracked or not yet imported) with an optional FIDE id to link;
``club_models`` keeps a scale model fitted on the members with a real FIDE rating, one per
perf, with its data and date (JSON payload). See :mod:`tracker.store.groups`.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "groups",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_groups")),
        sa.UniqueConstraint("name", name=op.f("uq_groups_name")),
    )
    op.create_table(
        "group_members",
        sa.Column("group_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("username", sa.String(length=128), nullable=False),
        sa.Column("fide_id", sa.BigInteger(), nullable=True),
        sa.Column("added_at_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["group_id"], ["groups.id"], name=op.f("fk_group_members_group_id_groups"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("group_id", "user_id", name=op.f("pk_group_members")),
    )
    op.create_table(
        "club_models",
        sa.Column("group_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("perf", sa.String(length=16), nullable=False),
        sa.Column("fitted_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["group_id"], ["groups.id"], name=op.f("fk_club_models_group_id_groups"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("group_id", "perf", name=op.f("pk_club_models")),
    )


def downgrade() -> None:
    op.drop_table("club_models")
    op.drop_table("group_members")
    op.drop_table("groups")
