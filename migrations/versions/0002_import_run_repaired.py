"""import runs count repaired games by reason

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

A game imported after a repair (e.g. a PGN game that is not UTF-8, read as cp1252) is counted
by reason in ``import_runs.repaired``, beside the games skipped by reason in ``skipped``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("import_runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("repaired", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("import_runs", schema=None) as batch_op:
        batch_op.drop_column("repaired")
