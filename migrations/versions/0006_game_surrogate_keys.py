"""games get an integer surrogate key; the sides refer to it

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

``games.pk`` (INTEGER, the primary key) numbers the games; the Lichess id ``games.id`` stays,
unique, the natural key every lookup by id uses. ``game_sides`` is keyed by
``(game_pk, color)`` and indexed by ``(user_id, game_pk)`` instead of the game's text id: a
bulk import appends to the side table and its indexes instead of writing at random places in
them (1M games: 51 → 28 s of SQLite time). Existing games are numbered in id order. The index
on ``games.ended_at_ms`` goes: no query uses it (a player's games are found through the sides'
index and sorted), and an import kept it up to date for nothing.

The steps work on SQLite (batch mode: each table rebuilt, no parent table dropped while a
side refers to it, so no cascade can fire) and on PostgreSQL (plain ``ALTER TABLE``): the new
key columns added, filled through a temporary ``id → pk`` table (portable SQL, one indexed
lookup per row), then the keys and indexes moved onto them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: The temporary ``id → pk`` table of the upgrade.
_KEYS = "tracker_0006_game_keys"


def _number_games() -> None:
    """Fill ``games.pk`` (in id order) and ``game_sides.game_pk`` from a temporary table."""
    op.create_table(
        _KEYS,
        sa.Column("pk", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("pk", name=op.f(f"pk_{_KEYS}")),
        sa.UniqueConstraint("id", name=op.f(f"uq_{_KEYS}_id")),
    )
    op.execute(f"INSERT INTO {_KEYS} (id) SELECT id FROM games ORDER BY id")
    op.execute(f"UPDATE games SET pk = (SELECT k.pk FROM {_KEYS} k WHERE k.id = games.id)")
    op.execute(f"UPDATE game_sides SET game_pk = "
               f"(SELECT k.pk FROM {_KEYS} k WHERE k.id = game_sides.game_id)")
    op.drop_table(_KEYS)


def upgrade() -> None:
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.add_column(sa.Column("pk", sa.Integer(), nullable=True))
    with op.batch_alter_table("game_sides", schema=None) as batch_op:
        batch_op.add_column(sa.Column("game_pk", sa.Integer(), nullable=True))
    _number_games()
    # The sides first, so that no foreign key refers to games.id when its key moves.
    with op.batch_alter_table("game_sides", schema=None) as batch_op:
        batch_op.drop_index("ix_game_sides_user_id_game_id")
        batch_op.drop_constraint("fk_game_sides_game_id_games", type_="foreignkey")
        batch_op.drop_constraint("pk_game_sides", type_="primary")
        batch_op.drop_column("game_id")
        batch_op.alter_column("game_pk", existing_type=sa.Integer(), nullable=False)
        batch_op.create_primary_key("pk_game_sides", ["game_pk", "color"])
        batch_op.create_index("ix_game_sides_user_id_game_pk", ["user_id", "game_pk"],
                              unique=False)
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_index("ix_games_ended_at_ms")
        batch_op.drop_constraint("pk_games", type_="primary")
        batch_op.alter_column("pk", existing_type=sa.Integer(), nullable=False)
        batch_op.create_primary_key("pk_games", ["pk"])
        batch_op.create_unique_constraint("uq_games_id", ["id"])
    with op.batch_alter_table("game_sides", schema=None) as batch_op:
        batch_op.create_foreign_key("fk_game_sides_game_pk_games", "games", ["game_pk"], ["pk"],
                                    ondelete="CASCADE")


def downgrade() -> None:
    with op.batch_alter_table("game_sides", schema=None) as batch_op:
        batch_op.add_column(sa.Column("game_id", sa.String(length=32), nullable=True))
    op.execute("UPDATE game_sides SET game_id = "
               "(SELECT g.id FROM games g WHERE g.pk = game_sides.game_pk)")
    with op.batch_alter_table("game_sides", schema=None) as batch_op:
        batch_op.drop_index("ix_game_sides_user_id_game_pk")
        batch_op.drop_constraint("fk_game_sides_game_pk_games", type_="foreignkey")
        batch_op.drop_constraint("pk_game_sides", type_="primary")
        batch_op.drop_column("game_pk")
        batch_op.alter_column("game_id", existing_type=sa.String(length=32), nullable=False)
        batch_op.create_primary_key("pk_game_sides", ["game_id", "color"])
        batch_op.create_index("ix_game_sides_user_id_game_id", ["user_id", "game_id"],
                              unique=False)
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_constraint("uq_games_id", type_="unique")
        batch_op.drop_constraint("pk_games", type_="primary")
        batch_op.drop_column("pk")
        batch_op.create_primary_key("pk_games", ["id"])
        batch_op.create_index("ix_games_ended_at_ms", ["ended_at_ms"], unique=False)
    with op.batch_alter_table("game_sides", schema=None) as batch_op:
        batch_op.create_foreign_key("fk_game_sides_game_id_games", "games", ["game_id"], ["id"],
                                    ondelete="CASCADE")
