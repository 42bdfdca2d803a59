"""a sync cursor remembers how far an unfinished import got

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

``sync_cursors.resume_top_ms``: the newest time up to which an unfinished API import stored
the games, where the next sync goes on once it has filled the gap below. Before, the next
sync went on from the newest game in the store, which could come from a file (or be dated in
the future) and so skip the new games on Lichess. ``NULL`` (existing cursors): the next sync
goes on from the gap's top, ``resume_until_ms``, and reads again what the unfinished import had
stored, which costs a download but loses nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sync_cursors", schema=None) as batch_op:
        batch_op.add_column(sa.Column("resume_top_ms", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sync_cursors", schema=None) as batch_op:
        batch_op.drop_column("resume_top_ms")
