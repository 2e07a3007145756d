"""sign-ins by mail, and games that may be watched

Any address with games here may sign in by a link mailed to it (``sign_ins``: the link, then the browser
session it opened); a game may be made public by its host (``games.public``), and its watch links carry
``games.watch_serial``, which the host moves on to end the links shared so far.

Revision ID: a7d3e9b1c402
Revises: f3a9c6d21b58
Create Date: 2026-11-26 16:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "a7d3e9b1c402"
down_revision: str | None = "f3a9c6d21b58"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sign_ins",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("email", sqlmodel.sql.sqltypes.AutoString(length=320), nullable=False),
        sa.Column("link_secret", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("session_secret", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("sign_ins", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sign_ins_email"), ["email"], unique=False)
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.add_column(sa.Column("public", sa.Boolean(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("watch_serial", sa.Integer(), nullable=False, server_default="0"))
        batch_op.create_index(batch_op.f("ix_games_public"), ["public"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_games_public"))
        batch_op.drop_column("watch_serial")
        batch_op.drop_column("public")
    with op.batch_alter_table("sign_ins", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sign_ins_email"))
    op.drop_table("sign_ins")
