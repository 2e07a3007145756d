"""chat notices and each game's chat address

Revision ID: ecd5142ed497
Revises: 5e1f0c2a7b93
Create Date: 2026-11-25 11:18:43.645195

A game may name a chat (an apprise URL, ``games.chat_url``) that hears of its turns, results and admin
acts; each notice is a row of ``chat_notices``, written with the change it tells of and sent by its own
task, as the outbox is for mail.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "ecd5142ed497"
down_revision: str | None = "5e1f0c2a7b93"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chat_notices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("title", sqlmodel.sql.sqltypes.AutoString(length=250), nullable=False),
        sa.Column("body", sqlmodel.sql.sqltypes.AutoString(length=4000), nullable=False),
        sa.Column("notify_type", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
        sa.Column("step_key", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column("dedupe_key", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sqlmodel.sql.sqltypes.AutoString(length=1000), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("dedupe_key"),
    )
    with op.batch_alter_table("chat_notices", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_chat_notices_game_id"), ["game_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_chat_notices_next_attempt_at"), ["next_attempt_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_chat_notices_status"), ["status"], unique=False)

    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.add_column(sa.Column("chat_url", sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_column("chat_url")

    with op.batch_alter_table("chat_notices", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_chat_notices_status"))
        batch_op.drop_index(batch_op.f("ix_chat_notices_next_attempt_at"))
        batch_op.drop_index(batch_op.f("ix_chat_notices_game_id"))

    op.drop_table("chat_notices")
