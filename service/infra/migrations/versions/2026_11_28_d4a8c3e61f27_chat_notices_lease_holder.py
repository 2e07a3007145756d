"""chat notices: the drain holding a notice's lease

A drain names itself in the notices it claims, as mail's drains do in the outbox: a claim takes a notice whose
lease lapsed only from a drain that is gone (``service.domain.leases``).

Revision ID: d4a8c3e61f27
Revises: c7e2a9d4f1b6
Create Date: 2026-11-28 14:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "d4a8c3e61f27"
down_revision: str | None = "c7e2a9d4f1b6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("chat_notices", schema=None) as batch_op:
        batch_op.add_column(sa.Column("claimed_by", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chat_notices", schema=None) as batch_op:
        batch_op.drop_column("claimed_by")
