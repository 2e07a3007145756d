"""seats by the time they were accepted, for the sweep's look at games left inviting

Every deadline sweep looked for games still inviting whose every seat had accepted by reading every inviting
game and every seat not yet accepted (21 ms a sweep on a million games, ``bench/sweep.py``). A sweep now
looks only among the seats accepted since the previous sweep (``lobby.left_inviting``), which this index
finds without reading the others; a full look runs once an hour.

Revision ID: 8b4d2e6f1a93
Revises: 3e9c1a7b5d20
Create Date: 2026-11-28 02:40:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "8b4d2e6f1a93"
down_revision: str | None = "3e9c1a7b5d20"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_seats_accepted_at", "seats", ["accepted_at"])


def downgrade() -> None:
    op.drop_index("ix_seats_accepted_at", table_name="seats")
