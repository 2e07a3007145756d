"""outbox: the drain holding a row's lease, and the step of the game a mail is about

Revision ID: 5e1f0c2a7b93
Revises: 40a86b5ef542
Create Date: 2026-11-25 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "5e1f0c2a7b93"
down_revision: str | None = "40a86b5ef542"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("claimed_by", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True))
        batch_op.add_column(sa.Column("step_key", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_column("step_key")
        batch_op.drop_column("claimed_by")
