"""Writing mails to the outbox table, in the caller's transaction (DESIGN §6)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlmodel import Session, select

from ..models import OutboxMail, Player, utcnow

MAIL_DOMAIN = "smallworld.invalid"


def queue_mail(
    session: Session,
    *,
    player: Player | None = None,
    to_email: str | None = None,
    template: str,
    context: dict[str, Any],
    game_id: int | None = None,
    dedupe_key: str | None = None,
    now: datetime | None = None,
) -> OutboxMail | None:
    """Add one mail to the outbox; a second mail with the same ``dedupe_key`` is not written.

    ``now`` is when the event happened (default: the real time): the mail is dated then, and states the
    time left from then (emails.render). A mail to someone who is not a player (a site admin's sign-in
    link) names its address in ``to_email`` instead of a ``player``.
    """
    if (player is None) == (to_email is None):
        raise ValueError("a mail goes to a player or to an address, exactly one of them")
    address = player.email if player is not None else str(to_email)
    if dedupe_key is not None:
        found = session.exec(select(OutboxMail).where(OutboxMail.dedupe_key == dedupe_key)).first()
        if found is not None:
            return None
    mail = OutboxMail(
        game_id=game_id,
        player_id=player.id if player is not None else None,
        to_email=address,
        template=template,
        context=context,
        message_id=f"<{uuid.uuid4().hex}@{MAIL_DOMAIN}>",
        dedupe_key=dedupe_key,
        created_at=now or utcnow(),
        next_attempt_at=utcnow(),  # due at once, whatever clock the event was timed by
    )
    session.add(mail)
    return mail
