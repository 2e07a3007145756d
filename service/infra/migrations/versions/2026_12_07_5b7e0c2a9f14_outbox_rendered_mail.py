"""outbox: the mail's bytes as first sent, and whether an attempt that died may have sent it

A mail is written once, before its first attempt, and its bytes stored (``outbox.rendered``): a mail sent again
after a crash is the same bytes. A claim that takes over the row of a drain that died after writing them marks
it (``outbox.may_have_left``): its outcome is then never ``skipped`` (ARCHITECTURE §6).

Revision ID: 5b7e0c2a9f14
Revises: 5f1c2b9a7e40
Create Date: 2026-12-07 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "5b7e0c2a9f14"
down_revision: str | None = "5f1c2b9a7e40"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("rendered", sa.LargeBinary(), nullable=True))
        batch_op.add_column(sa.Column("may_have_left", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_column("may_have_left")
        batch_op.drop_column("rendered")
