"""game results, player records, resigned seats

Revision ID: 7683952bbbdf
Revises: 6b1d0e4a9c27
Create Date: 2026-11-26 15:46:51.226865

The end of a game is the worker's tally (ARCHITECTURE §9): it writes each seat's line of the final table
(``game_results``, unique per game and seat) and each address's rating and record (``player_records``).
A seat may be resigned (``seats.resigned_at``). The new game status ``ending`` needs no migration (statuses
are plain strings).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "7683952bbbdf"
down_revision: str | None = "6b1d0e4a9c27"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "game_results",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("coins", sa.Integer(), nullable=False),
        sa.Column("tokens_on_board", sa.Integer(), nullable=False),
        sa.Column("tie_break", sa.Boolean(), nullable=False),
        sa.Column("resigned", sa.Boolean(), nullable=False),
        sa.Column("deadlines", sa.Integer(), nullable=False),
        sa.Column("deadlines_missed", sa.Integer(), nullable=False),
        sa.Column("rating_mu_before", sa.Float(), nullable=False),
        sa.Column("rating_sigma_before", sa.Float(), nullable=False),
        sa.Column("rating_mu", sa.Float(), nullable=False),
        sa.Column("rating_sigma", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("game_id", "seat", name="uq_game_results_game_seat"),
    )
    with op.batch_alter_table("game_results", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_game_results_game_id"), ["game_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_game_results_player_id"), ["player_id"], unique=False)

    op.create_table(
        "player_records",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("rating_mu", sa.Float(), nullable=False),
        sa.Column("rating_sigma", sa.Float(), nullable=False),
        sa.Column("games_finished", sa.Integer(), nullable=False),
        sa.Column("deadlines", sa.Integer(), nullable=False),
        sa.Column("deadlines_missed", sa.Integer(), nullable=False),
        sa.Column("resigned", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("player_id"),
    )
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("resigned_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_column("resigned_at")

    op.drop_table("player_records")
    with op.batch_alter_table("game_results", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_game_results_player_id"))
        batch_op.drop_index(batch_op.f("ix_game_results_game_id"))

    op.drop_table("game_results")
