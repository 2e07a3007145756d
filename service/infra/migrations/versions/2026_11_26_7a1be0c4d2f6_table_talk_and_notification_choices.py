"""table talk and notification choices

Each game gets its table-talk messages; each player the mail they want (every event, only their turns and
results, or a daily digest at a local hour), with a game's own choice over the address's default, and a
record of the digests sent (one per address and local day); table-talk mails their own off switch.

Revision ID: 7a1be0c4d2f6
Revises: a7d3e9b1c402
Create Date: 2026-11-26 16:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "7a1be0c4d2f6"
down_revision: str | None = "a7d3e9b1c402"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.add_column(sa.Column("wants_messages", sa.Boolean(), nullable=False, server_default=sa.true()))
        batch_op.add_column(sa.Column("notify", sa.String(length=8), nullable=False, server_default="every"))
        batch_op.add_column(sa.Column("digest_hour", sa.Integer(), nullable=False, server_default="18"))
    op.create_table(
        "notification_choices",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(length=8), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"]),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.PrimaryKeyConstraint("player_id", "game_id"),
    )
    with op.batch_alter_table("notification_choices", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_notification_choices_game_id"), ["game_id"], unique=False)
    op.create_table(
        "digests_sent",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("local_date", sqlmodel.sql.sqltypes.AutoString(length=10), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("messages", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.PrimaryKeyConstraint("player_id", "local_date"),
    )
    op.create_table(
        "table_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("author_name", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("source", sa.String(length=8), nullable=False),
        sa.Column("source_key", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("hidden_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("hidden_by", sqlmodel.sql.sqltypes.AutoString(length=360), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("game_id", "source_key", name="uq_table_messages_game_source"),
    )
    with op.batch_alter_table("table_messages", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_table_messages_game_id"), ["game_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("table_messages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_table_messages_game_id"))
    op.drop_table("table_messages")
    op.drop_table("digests_sent")
    with op.batch_alter_table("notification_choices", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_notification_choices_game_id"))
    op.drop_table("notification_choices")
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.drop_column("digest_hour")
        batch_op.drop_column("notify")
        batch_op.drop_column("wants_messages")
