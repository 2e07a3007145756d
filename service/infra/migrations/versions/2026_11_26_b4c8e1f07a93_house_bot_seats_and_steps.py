"""the house bot: who controls a seat, and the steps it played

``seats.controller`` says who plays a seat: ``person`` (its player, by their link) or ``bot`` (the house
bot, in the worker); ``actions.by_bot`` marks the steps the house bot played, for the history.

Revision ID: b4c8e1f07a93
Revises: 7a1be0c4d2f6
Create Date: 2026-11-26 16:15:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "b4c8e1f07a93"
down_revision: str | None = "7a1be0c4d2f6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("controller", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False, server_default="person")
        )
    with op.batch_alter_table("actions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("by_bot", sa.Boolean(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("actions", schema=None) as batch_op:
        batch_op.drop_column("by_bot")
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_column("controller")
