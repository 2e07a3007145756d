"""the state at the start of each seat's turn, a cache for "Since your last turn"

``turn_starts`` keeps, per game, the state at the start of each seat's latest two turns (written by the step
that began the turn, dropped when the game ends), so a turn mail replays the log from the reader's previous
turn instead of from the seed. Games without rows are told by the replay from the seed, as before.

Revision ID: 5d2f8a61c3e0
Revises: 7683952bbbdf
Create Date: 2026-11-27 23:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "5d2f8a61c3e0"
down_revision: str | None = "7683952bbbdf"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "turn_starts",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"]),
        sa.PrimaryKeyConstraint("game_id", "version"),
    )


def downgrade() -> None:
    op.drop_table("turn_starts")
