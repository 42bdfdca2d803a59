"""claims on games being analysed by workers sharing one database (``tracker analyse --worker``)

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06

``analysis_claims`` holds, for each game a worker is analysing, the worker's id (host,
process, a random part) and when its lease ends (ms since the epoch, by the database's clock).
A worker claims games with ``SELECT … FOR UPDATE SKIP LOCKED`` on their ``games`` rows, renews its
leases while it works, and deletes the claim in the transaction that stores the game's evals;
a claim whose lease has ended (its worker died) is claimed again. A game whose moves cannot
be read keeps a claim that never ends (worker ``skipped: …``). See
:mod:`tracker.store.claims`.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "analysis_claims",
        sa.Column("game_pk", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("worker", sa.String(length=64), nullable=False),
        sa.Column("expires_at_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["game_pk"], ["games.pk"],
                                name=op.f("fk_analysis_claims_game_pk_games"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("game_pk", name=op.f("pk_analysis_claims")),
    )


def downgrade() -> None:
    op.drop_table("analysis_claims")
