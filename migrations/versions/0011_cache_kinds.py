"""cache kinds: the saved results get a kind and a version of their own

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06

``replay_snapshots`` held three kinds of saved results told apart by the start of ``options``
(a pass ``p0-…``, a scale's replay ``r-…``, a group summary ``group-…``), each keyed on a hash
of some source files. ``cache_entries`` holds them with a ``kind`` column (``pass``, ``run``,
``group``) and the ``version`` of the code of that kind that computed them (see
:mod:`tracker.store.snapshots`). The rows of the old table are a cache computed by code whose
keys no longer exist, so they are not carried over: each result is computed again on first
use (no game, setting or link is touched). Downgrade: the old table, empty.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "cache_entries",
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("perf", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("options", sa.String(length=32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("write_seq", sa.BigInteger(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", "perf", "kind", "options",
                                name=op.f("pk_cache_entries")),
    )
    op.drop_table("replay_snapshots")


def downgrade() -> None:
    op.create_table(
        "replay_snapshots",
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("perf", sa.String(length=16), nullable=False),
        sa.Column("options", sa.String(length=32), nullable=False),
        sa.Column("write_seq", sa.BigInteger(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", "perf", "options", name=op.f("pk_replay_snapshots")),
    )
    op.drop_table("cache_entries")
