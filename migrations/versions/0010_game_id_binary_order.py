"""game ids compared byte by byte on PostgreSQL too: one order of games everywhere

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06

``games.id`` takes the binary collation ``"C"`` on PostgreSQL, where it had the database's
(e.g. ``en_US.utf8`` or an ICU collation, which sorts ``BBBBBBBB`` before ``aaaaaaaa``). The
games of a replay are read in ``ORDER BY ended_at_ms, id``, and the rows an import keeps in
memory for the passes saved after it are sorted by id in Python (code points, as SQLite's
BINARY): with another collation, two games ending in the same millisecond came in another
order, and the saved replay differed from a fresh one. SQLite compares bytes already: nothing
changes there. The unique index on the column is rebuilt by PostgreSQL with it, and the
replay passes saved on PostgreSQL (read in the old order) are dropped: computed again when
next asked for.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column("games", "id", existing_type=sa.String(length=32),
                        type_=sa.String(length=32, collation="C"), existing_nullable=False)
        op.execute("DELETE FROM replay_snapshots")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute('ALTER TABLE games ALTER COLUMN id TYPE VARCHAR(32) COLLATE "default"')
