"""players: the serials that end an address's links

``links_serial`` moves on when an address signs out everywhere, ``calendar_serial`` when it makes a new
calendar link: every link of the address carries the serials it was made with (``service.domain.links``), so
the older ones stop working.

Revision ID: 5e1c7a9b3d20
Revises: d4a8c3e61f27
Create Date: 2026-12-07 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "5e1c7a9b3d20"
down_revision: str | None = "d4a8c3e61f27"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.add_column(sa.Column("links_serial", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("calendar_serial", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("players", schema=None) as batch_op:
        batch_op.drop_column("calendar_serial")
        batch_op.drop_column("links_serial")
