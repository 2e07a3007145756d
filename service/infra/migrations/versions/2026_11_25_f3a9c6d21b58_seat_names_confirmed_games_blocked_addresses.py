"""seat names, confirmed games, blocked addresses, single-use sign-in links

A seat gets its own display name (filled from its player's, which stays as the address's default); a game
the time its host confirmed it, and an index on its host's address; site admins a sign-in serial; and the
addresses that asked never to be invited again get a table.

Revision ID: f3a9c6d21b58
Revises: ecd5142ed497
Create Date: 2026-11-25 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "f3a9c6d21b58"
down_revision: str | None = "ecd5142ed497"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "blocked_addresses",
        sa.Column("email", sqlmodel.sql.sqltypes.AutoString(length=320), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("email"),
    )
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("display_name", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False, server_default="")
        )
    # Every seat so far showed its player's name: it keeps it, now as its own.
    op.execute(
        "UPDATE seats SET display_name = (SELECT players.display_name FROM players WHERE players.id = seats.player_id)"
    )
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.add_column(sa.Column("confirmed_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(batch_op.f("ix_games_host_email"), ["host_email"], unique=False)
    # Games made before confirmation existed count as confirmed when they were made.
    op.execute("UPDATE games SET confirmed_at = created_at")
    with op.batch_alter_table("site_admins", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sign_in_serial", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("site_admins", schema=None) as batch_op:
        batch_op.drop_column("sign_in_serial")
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_games_host_email"))
        batch_op.drop_column("confirmed_at")
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_column("display_name")
    op.drop_table("blocked_addresses")
