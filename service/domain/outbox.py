"""Writing mails to the outbox table, in the caller's transaction (ARCHITECTURE §6).

A mail is a typed message (``emails.messages``): :func:`queue_mail` stores its template name, its fields
as JSON (the row's ``context``) and its dedupe key, and delivery rebuilds the message from them.
"""

from __future__ import annotations

import functools
import uuid
from datetime import datetime
from email.utils import parseaddr
from typing import Any

import sqlalchemy as sa
from flask import current_app, has_app_context
from sqlmodel import Session

from emails.messages import GameMessage, Message
from service.domain import block_list
from service.domain.models import MailStatus, OutboxMail, Player, utcnow
from service.domain.rows import PlayerRow
from service.infra.db import dialect_insert
from service.infra.mail_wakeup import MAIL_WRITTEN

#: The domain of Message-IDs made outside the service (a script on a bare session): reserved, never real.
MAIL_DOMAIN = "smallworld.invalid"


_OUTBOX: sa.Table = OutboxMail.__table__  # type: ignore[attr-defined]


@functools.cache
def _inserts(dialect: str) -> tuple[sa.Insert, sa.Insert]:
    """The outbox row's INSERT on ``dialect``, built once (a step's mails run it): without and with ``ON
    CONFLICT (dedupe_key) DO NOTHING``, each returning the new row's id (none when the key was there)."""
    insert = dialect_insert(dialect, _OUTBOX)
    return (
        insert.returning(_OUTBOX.c.id),
        insert.on_conflict_do_nothing(index_elements=["dedupe_key"]).returning(_OUTBOX.c.id),
    )


def mail_domain(sender: str | None = None) -> str:
    """The domain our Message-IDs (and mail threads) are made under: the sender's (``sender``, by default
    the app's ``SMALLWORLD_MAIL_FROM``), as RFC 5322 §3.6.4 advises, so that they are unique to this
    service and spam filters see them match the From domain."""
    if sender is None and has_app_context():
        sender = current_app.config.get("MAIL_FROM")
    _, address = parseaddr(sender or "")
    return address.rsplit("@", 1)[1].lower() if "@" in address else MAIL_DOMAIN


def queue_mail(
    session: Session, to: Player | PlayerRow | str, message: Message, *, now: datetime | None = None
) -> bool:
    """Add ``message`` to the outbox, for a player or (a site admin's sign-in link) an address; a second
    mail with the same dedupe key (the same event) is not written. Returns whether the mail was written.

    ``now`` is when the event happened (default: the real time): the mail is dated then, and states the
    time left from then (emails.render). A message about a game files the row under that game.
    """
    return insert_mail_row(
        session,
        player=None if isinstance(to, str) else to,
        to_email=to if isinstance(to, str) else None,
        template=message.template,
        context=message.context(),
        game_id=message.game_id if isinstance(message, GameMessage) else None,
        dedupe_key=message.dedupe_key,
        now=now,
        # A turn mail or a reminder is about one step of its game: delivery drops it once that step is over.
        step_key=getattr(message, "step_key", None),
    )


def insert_mail_row(
    session: Session,
    *,
    player: Player | PlayerRow | None = None,
    to_email: str | None = None,
    template: str,
    context: dict[str, Any],
    game_id: int | None = None,
    dedupe_key: str | None = None,
    now: datetime | None = None,
    step_key: str | None = None,
) -> bool:
    """Add one outbox row as given; a second row with the same ``dedupe_key`` is not written.

    The service writes typed messages (:func:`queue_mail`); this writes any row, also one no message would
    make (delivery fails such a row, with the reason). Returns whether the row was written. One statement
    either way (``INSERT … ON CONFLICT (dedupe_key) DO NOTHING``): no read first, and two transactions
    racing to write the same event's mail cannot both write it, nor fail on the unique key.

    No row is written to an erased address (``block_list.is_erased``). A mail to someone who is not a player
    names its address in ``to_email`` instead of a ``player``;
    ``now`` is when the event happened (default: the real time), the mail's date. ``step_key`` names the
    step of the game a mail is about (``Game.step_key``): delivery drops it once the game moved past it.
    """
    if (player is None) == (to_email is None):
        raise ValueError("a mail goes to a player or to an address, exactly one of them")
    address = player.email if player is not None else str(to_email)
    if block_list.is_erased(address):
        return False  # an erased address (service.domain.privacy): no mail goes to it again
    values = {
        "game_id": game_id,
        "player_id": player.id if player is not None else None,
        "to_email": address,
        "template": template,
        "context": context,
        "message_id": f"<{uuid.uuid4().hex}@{mail_domain()}>",
        "dedupe_key": dedupe_key,
        "step_key": step_key,
        "status": MailStatus.PENDING,
        "attempts": 0,
        "created_at": now or utcnow(),
        "next_attempt_at": utcnow(),  # due at once, whatever clock the event was timed by
    }
    insert = _inserts(session.get_bind().dialect.name)[dedupe_key is not None]
    if session.autoflush:  # as the ORM's own statements do: rows this one refers to are written first
        session.flush()
    written = session.connection().execute(insert, values).first() is not None
    if written:
        session.info[MAIL_WRITTEN] = True
    return written
