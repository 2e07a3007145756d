"""partial indexes for the sweep's check of games left inviting

``lobby.stuck_inviting`` (every deadline sweep) looks for games still inviting whose every seat has accepted.
Without these, PostgreSQL read every game by id and every seat to find them: 6.5 s a sweep on a million
games (``bench/sweep.py``). With them it reads the inviting games' ids and the unaccepted seats' games only.

Revision ID: 3e9c1a7b5d20
Revises: 5d2f8a61c3e0
Create Date: 2026-11-28 01:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3e9c1a7b5d20"
down_revision: str | None = "5d2f8a61c3e0"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INVITING = sa.text("status = 'inviting'")
UNACCEPTED = sa.text("accepted_at IS NULL")


def upgrade() -> None:
    op.create_index("ix_games_inviting", "games", ["id"], postgresql_where=INVITING, sqlite_where=INVITING)
    op.create_index("ix_seats_unaccepted", "seats", ["game_id"], postgresql_where=UNACCEPTED, sqlite_where=UNACCEPTED)


def downgrade() -> None:
    op.drop_index("ix_seats_unaccepted", table_name="seats")
    op.drop_index("ix_games_inviting", table_name="games")
