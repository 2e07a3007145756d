"""inbound mail, and addresses that bounce

Every mail that comes in (orders by reply, bounces, automatic answers) gets a row, unique by its
Message-ID and the address it came to; a player's address may be marked as bouncing.

Revision ID: 6b1d0e4a9c27
Revises: b4c8e1f07a93
Create Date: 2026-11-26 16:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "6b1d0e4a9c27"
down_revision: str | None = "b4c8e1f07a93"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "inbound_mail",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("message_key", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("via", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
        sa.Column("kind", sa.String(length=12), nullable=False),
        sa.Column("sender", sqlmodel.sql.sqltypes.AutoString(length=320), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("player_id", sa.Integer(), nullable=True),
        sa.Column("outcome", sqlmodel.sql.sqltypes.AutoString(length=1000), nullable=False),
        sa.Column("answered", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"]),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("message_key"),
    )
    with op.batch_alter_table("inbound_mail", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_inbound_mail_game_id"), ["game_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_inbound_mail_player_id"), ["player_id"], unique=False)
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.add_column(sa.Column("bouncing_since", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("bounce_reason", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.drop_column("bounce_reason")
        batch_op.drop_column("bouncing_since")
    with op.batch_alter_table("inbound_mail", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_inbound_mail_player_id"))
        batch_op.drop_index(batch_op.f("ix_inbound_mail_game_id"))
    op.drop_table("inbound_mail")
