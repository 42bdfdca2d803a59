"""the replay's saved pass: a write counter and one saved pass per player, perf and options

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

``store_state.write_seq`` is bumped by every batch that stores or changes a game;
``replay_snapshots`` keeps the replay report's pass over a player's games of a perf with the
``write_seq`` it was computed at, so the first report after an import reads one row instead of
every game (issue #14; ``docs/performance.md``). Both start empty: a pass is computed and saved
the first time it is needed.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "store_state",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("write_seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_store_state")),
    )
    op.execute(sa.text("INSERT INTO store_state (id, write_seq) VALUES (1, 0)"))
    op.create_table(
        "replay_snapshots",
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("perf", sa.String(length=16), nullable=False),
        sa.Column("options", sa.String(length=32), nullable=False),
        sa.Column("write_seq", sa.BigInteger(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", "perf", "options", name=op.f("pk_replay_snapshots")),
    )


def downgrade() -> None:
    op.drop_table("replay_snapshots")
    op.drop_table("store_state")
