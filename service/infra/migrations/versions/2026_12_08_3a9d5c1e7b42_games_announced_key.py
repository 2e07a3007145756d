"""games: the step last announced

A step's announcement (its turn mails, chat notice, bot wake-up) is made by a job after the step's commit
(``service.domain.announce``); ``announced_key`` is the step it was last made for, None while the awaited step
(``step_key``) is not announced yet, and the deadline sweep looks for those games through a partial index.
Every game is taken as announced as it stands (``announced_key = step_key``): the service before this one
announced each step in the step's own transaction, so nothing is announced twice after the upgrade.

Revision ID: 3a9d5c1e7b42
Revises: 8c2f4d6a1e35
Create Date: 2026-12-08 00:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3a9d5c1e7b42"
down_revision: str | None = "8c2f4d6a1e35"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UNANNOUNCED = sa.text("announced_key IS NULL AND step_key IS NOT NULL")


def upgrade() -> None:
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.add_column(sa.Column("announced_key", sa.String(length=32), nullable=True))
    op.execute("UPDATE games SET announced_key = step_key")
    op.create_index(
        "ix_games_unannounced",
        "games",
        ["id"],
        unique=False,
        postgresql_where=_UNANNOUNCED,
        sqlite_where=_UNANNOUNCED,
    )


def downgrade() -> None:
    op.drop_index("ix_games_unannounced", table_name="games")
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_column("announced_key")
