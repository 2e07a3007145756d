"""the outbox's pending rows by game and recipient, for delivering a reader's mails of a game in order

A game's mails to one reader go out in the order they were written (``service.domain.delivery``): a claim
leaves a row while an earlier row of the same game to the same address is still pending and not claimed
with it. This index finds those earlier rows among the pending ones only, not among every mail the game
ever sent.

Revision ID: c7e2a9d4f1b6
Revises: 8b4d2e6f1a93
Create Date: 2026-11-28 05:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c7e2a9d4f1b6"
down_revision: str | None = "8b4d2e6f1a93"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PENDING = sa.text("status = 'pending'")


def upgrade() -> None:
    op.create_index(
        "ix_outbox_pending_by_reader",
        "outbox",
        ["game_id", "to_email", "id"],
        postgresql_where=PENDING,
        sqlite_where=PENDING,
    )


def downgrade() -> None:
    op.drop_index("ix_outbox_pending_by_reader", table_name="outbox")
