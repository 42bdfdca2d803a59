"""replay settings for the FIDE scale: the scale, the scale of the start rating, the chapter

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

Three more per-player replay settings (``None`` = the product default): ``scale``
(``lichess``, a scale model's key, or ``all``), ``start_scale`` (``fide`` or ``lichess``: the
scale the start rating is given on) and ``chapter`` (``standard`` or ``rapid-blitz``; ``None``
= by perf). See ``docs/rules.md`` §10-§11.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.add_column(sa.Column("scale", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("start_scale", sa.String(length=8), nullable=True))
        batch_op.add_column(sa.Column("chapter", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.drop_column("chapter")
        batch_op.drop_column("start_scale")
        batch_op.drop_column("scale")
