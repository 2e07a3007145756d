"""outbox rows name their event in their message

Revision ID: 40a86b5ef542
Revises: 309f8dc1f0fc
Create Date: 2026-11-25 10:39:14.767460

An outbox row's context is now a typed message (``emails.messages``), which holds what its dedupe key is
made of, and delivery rebuilds the message before rendering it: a field missing fails the mail. Rows
written before held only what their templates read; the rest was in the dedupe key alone. This adds it to
the rows that may still be delivered (pending, or failed and resendable by an admin), from the row's
``game_id`` and its dedupe key. Data only: the schema does not change.
"""

import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "40a86b5ef542"
down_revision: str | None = "309f8dc1f0fc"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OUTBOX = sa.table(
    "outbox",
    sa.column("id", sa.Integer()),
    sa.column("game_id", sa.Integer()),
    sa.column("template", sa.String()),
    sa.column("context", sa.JSON()),
    sa.column("dedupe_key", sa.String()),
    sa.column("status", sa.String()),
)

#: The dedupe keys of the earlier release, by template, with the fields they name (as the messages do).
#: A step key holds colons ("3:1:-"), an ISO time too: the patterns are anchored at both ends.
_KEYS: dict[str, list[re.Pattern[str]]] = {
    "invitation": [
        re.compile(r"game:\d+:invite:(?P<seat>\d+)"),
        re.compile(r"game:\d+:replace:(?P<seat>\d+):(?P<seat_secret>.+)"),
    ],
    "admin_login": [re.compile(r"site-admin:(?P<account_id>\d+):sign-in:(?P<window>\d+)")],
    "reminder": [re.compile(r"game:\d+:reminder:.+:\d+:(?P<seat>\d+)")],
    "auto_passed": [re.compile(r"game:\d+:auto-pass:(?P<version>\d+)")],
    "host_alert": [re.compile(r"game:\d+:alert:(?P<seat>\d+):\d+")],
    "admin_change": [
        re.compile(r"game:\d+:admin:(?P<version>\d+):(?P<player_id>\d+)"),
        re.compile(r"game:\d+:outage:.+:(?P<seat>\d+)"),
    ],
}


def completed(template: str, context: dict[str, Any], game_id: int | None, dedupe_key: str | None) -> dict[str, Any]:
    """``context`` with the fields its row's game and dedupe key name, where it lacks them."""
    added: dict[str, Any] = {}
    if game_id is not None and template != "admin_login":
        added["game_id"] = game_id
    for pattern in _KEYS.get(template, []):
        match = pattern.fullmatch(dedupe_key or "")
        if match:
            added.update(
                {name: value if name == "seat_secret" else int(value) for name, value in match.groupdict().items()}
            )
            break
    return {**added, **context}


def upgrade() -> None:
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(_OUTBOX.c.id, _OUTBOX.c.template, _OUTBOX.c.context, _OUTBOX.c.game_id, _OUTBOX.c.dedupe_key).where(
            _OUTBOX.c.status.in_(["pending", "failed"])
        )
    ).all()
    for row in rows:
        context = dict(row.context or {})
        new = completed(row.template, context, row.game_id, row.dedupe_key)
        if new != context:
            connection.execute(sa.update(_OUTBOX).where(_OUTBOX.c.id == row.id).values(context=new))


def downgrade() -> None:
    # The earlier release renders a context with more fields than its templates read: nothing to undo.
    pass
