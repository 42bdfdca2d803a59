"""a sync cursor remembers how far an unfinished import got; text columns hold what is written

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

``sync_cursors.resume_top_ms``: the newest time up to which an unfinished API import stored
the games, where the next sync goes on once it has filled the gap below. Before, the next
sync went on from the newest game in the store, which could come from a file (or be dated in
the future) and so skip the new games on Lichess. ``NULL`` (existing cursors): the next sync
goes on from the gap's top, ``resume_until_ms``, and reads again what the unfinished import had
stored, which costs a download but loses nothing.

Two columns were narrower than what tracker writes into them, which PostgreSQL refuses (SQLite
does not check): ``import_runs.status`` (10) and ``interrupted`` (11), written for a run whose
process was killed, so that ``tracker runs`` and every later import failed; and
``sync_cursors.perf_filter`` (128) and every perf key joined (135). Now 16 and 256. The
downgrade writes a run ``interrupted`` as ``partial`` and drops a cursor of more than 128
characters (the next sync of those perfs reads them all again) before narrowing them back.
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
        batch_op.alter_column("perf_filter", existing_type=sa.String(length=128),
                              type_=sa.String(length=256), existing_nullable=False)
    with op.batch_alter_table("import_runs", schema=None) as batch_op:
        batch_op.alter_column("status", existing_type=sa.String(length=10),
                              type_=sa.String(length=16), existing_nullable=False)


def downgrade() -> None:
    op.execute("UPDATE import_runs SET status = 'partial' WHERE status = 'interrupted'")
    op.execute("DELETE FROM sync_cursors WHERE length(perf_filter) > 128")
    with op.batch_alter_table("import_runs", schema=None) as batch_op:
        batch_op.alter_column("status", existing_type=sa.String(length=16),
                              type_=sa.String(length=10), existing_nullable=False)
    with op.batch_alter_table("sync_cursors", schema=None) as batch_op:
        batch_op.alter_column("perf_filter", existing_type=sa.String(length=256),
                              type_=sa.String(length=128), existing_nullable=False)
        batch_op.drop_column("resume_top_ms")
