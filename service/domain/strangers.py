"""Who is a stranger to a host (ARCHITECTURE §9: the service must not be a way to mail strangers).

A host makes the service mail other addresses: invitations when the host confirms a game, and, when the host
gives a seat to someone else, an invitation to the newcomer and a "the seat changed hands" mail to the player
who had it. Each such mail to a *stranger* counts against the daily limits on mail to strangers, per host and
per client (``RATELIMIT_STRANGERS_PER_HOST``, ``RATELIMIT_STRANGERS_PER_CLIENT``;
``service.web.rate_limits.MailQuotas``).

An address is no stranger to a host when it played with that host before: in another game, its seat was
accepted, and the host hosted that game or held a seat in it. The host's own address is no stranger either.
A seat given away keeps no trace of who had it, so a player replaced out of a game did not play in it.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from service.domain.models import Game, Player, Seat


def strangers_to(session: Session, host_email: str, emails: Iterable[str | None], game_id: int) -> list[str]:
    """The addresses of ``emails`` (lower-cased, each once, in order) that never played with ``host_email``
    in a game other than ``game_id``."""
    host = host_email.lower()
    asked = list(dict.fromkeys(email.lower() for email in emails if email and email.lower() != host))
    if not asked:
        return []
    host_seat, host_player = aliased(Seat), aliased(Player)
    host_seated = (
        sa.exists()
        .where(col(host_seat.game_id) == col(Game.id), col(host_seat.player_id) == col(host_player.id))
        .where(sa.func.lower(host_player.email) == host)
    )
    played = (
        select(sa.func.lower(Player.email))
        .join(Seat, col(Seat.player_id) == col(Player.id))
        .join(Game, col(Game.id) == col(Seat.game_id))
        .where(
            sa.func.lower(Player.email).in_(asked),
            col(Seat.accepted_at).is_not(None),
            col(Seat.game_id) != game_id,
            sa.or_(sa.func.lower(Game.host_email) == host, host_seated),
        )
        .distinct()
    )
    known = set(session.exec(played).all())
    return [email for email in asked if email not in known]
