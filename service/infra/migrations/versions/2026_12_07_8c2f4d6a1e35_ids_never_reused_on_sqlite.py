"""sign_ins and inbound_mail: on SQLite, the id of a deleted row is never given to a new one

Rows of both are deleted (an erased address, the retention sweep), and mails name them by id in their dedupe key
(the sign-in mail, the answer to a mail). Without ``AUTOINCREMENT`` SQLite gives a new row the largest id plus
one, so deleting the newest row handed its id to the next: its mail was taken for the deleted row's and never
sent. PostgreSQL's sequences never hand an id out twice: nothing changes there.

Revision ID: 8c2f4d6a1e35
Revises: 5b7e0c2a9f14
Create Date: 2026-12-07 23:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "8c2f4d6a1e35"
down_revision: str | None = "5b7e0c2a9f14"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("sign_ins", "inbound_mail")


def upgrade() -> None:
    _recreate(autoincrement=True)


def downgrade() -> None:
    _recreate(autoincrement=False)


def _recreate(*, autoincrement: bool) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for table in TABLES:
        # The table is made anew with the same columns, indexes and rows (alembic's batch mode on SQLite).
        with op.batch_alter_table(table, recreate="always", table_kwargs={"sqlite_autoincrement": autoincrement}):
            pass
