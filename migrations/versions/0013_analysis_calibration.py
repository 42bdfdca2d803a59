"""the calibration a local analysis is read through: ``game_analysis.calibration``

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06

A local engine's evals at a small node budget are not on Lichess's scale (another Stockfish,
shallower searches): they are read through a calibration fitted per engine version and budget
(``tracker/analysis/models/engine-calibration-1.json``, :mod:`tracker.analysis.
engine_calibration`). ``calibration`` names the one that applied when the game was analysed
(``None``: Lichess's own evals, or a local analysis no calibration covers, or one made before
this revision). The evals stay stored as the engine gave them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("game_analysis") as batch:
        batch.add_column(sa.Column("calibration", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("game_analysis") as batch:
        batch.drop_column("calibration")
