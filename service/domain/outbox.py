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
    player: Player,
    template: str,
    context: dict[str, Any],
    game_id: int | None = None,
    dedupe_key: str | None = None,
    now: datetime | None = None,
) -> OutboxMail | None:
    """Add one mail to the outbox; a second mail with the same ``dedupe_key`` is not written.

    ``now`` is when the event happened (default: the real time): the mail is dated then, and states the
    time left from then (emails.render).
    """
    if dedupe_key is not None:
        found = session.exec(select(OutboxMail).where(OutboxMail.dedupe_key == dedupe_key)).first()
        if found is not None:
            return None
    mail = OutboxMail(
        game_id=game_id,
        player_id=player.id,
        to_email=player.email,
        template=template,
        context=context,
        message_id=f"<{uuid.uuid4().hex}@{MAIL_DOMAIN}>",
        dedupe_key=dedupe_key,
        created_at=now or utcnow(),
        next_attempt_at=utcnow(),  # due at once, whatever clock the event was timed by
    )
    session.add(mail)
    return mail
