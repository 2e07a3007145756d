"""the player's own data: erased addresses, and the retention of mail bodies and inbound mail

"Delete my address" (``service.domain.privacy``) keeps only a digest of the erased address, so that no game
names it again (``erased_addresses``). The retention sweep (``service.domain.retention``) empties the bodies of
mails older than ``SMALLWORLD_MAIL_RETENTION_DAYS`` (``outbox.body_purged_at``; the partial index finds the
rows still to purge among those still kept) and deletes the records of inbound mail as old (by
``inbound_mail.received_at``).

Revision ID: 5f1c2b9a7e40
Revises: 5e1c7a9b3d20
Create Date: 2026-12-07 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "5f1c2b9a7e40"
down_revision: str | None = "5e1c7a9b3d20"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BODY_KEPT = sa.text("body_purged_at IS NULL")


def upgrade() -> None:
    op.create_table(
        "erased_addresses",
        sa.Column("digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("digest"),
    )
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("body_purged_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_outbox_body_kept", "outbox", ["created_at"], postgresql_where=BODY_KEPT, sqlite_where=BODY_KEPT)
    op.create_index(op.f("ix_inbound_mail_received_at"), "inbound_mail", ["received_at"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_inbound_mail_received_at"), table_name="inbound_mail")
    op.drop_index("ix_outbox_body_kept", table_name="outbox")
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_column("body_purged_at")
    op.drop_table("erased_addresses")
