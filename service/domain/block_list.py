"""Addresses that asked never to be invited again (DESIGN §9: strangers cannot use us to mail strangers).

Every invitation, and the mail that asks a host to confirm a game, carries a signed "never invite me again"
link (purpose ``block``, naming the address). Following it, and pressing the button on its page, puts the
address here; no game may then name it, as a player or as the host, and the lobby tells the host why.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlmodel import Session, col, select

from service.domain.errors import BadRequest
from service.domain.models import BlockedAddress, utcnow
from service.infra.db import dialect_insert


def block(session: Session, email: str) -> None:
    """Put ``email`` on the list (again is harmless), in the caller's transaction."""
    insert = dialect_insert(session.get_bind().dialect.name, BlockedAddress)
    session.execute(
        insert.values(email=email.lower(), created_at=utcnow()).on_conflict_do_nothing(index_elements=["email"])
    )


def unblock(session: Session, email: str) -> None:
    """Take ``email`` off the list (an operator's act, on the address owner's request)."""
    row = session.get(BlockedAddress, email.lower())
    if row is not None:
        session.delete(row)


def blocked_among(session: Session, emails: Iterable[str]) -> list[str]:
    """Which of ``emails`` are on the list, in the order given."""
    wanted = [e.lower() for e in emails]
    if not wanted:
        return []
    found = set(session.exec(select(BlockedAddress.email).where(col(BlockedAddress.email).in_(wanted))).all())
    return [e for e in wanted if e in found]


def refuse_blocked(session: Session, emails: Iterable[str], *, host: str | None = None) -> None:
    """:class:`BadRequest` naming the addresses on the list, in words for the host who named them."""
    blocked = blocked_among(session, [*emails, *([host] if host else [])])
    if not blocked:
        return
    if host is not None and host.lower() in blocked:
        raise BadRequest(f"{host} asked never to receive mail about games from this service, so it cannot host one.")
    listed = ", ".join(blocked)
    raise BadRequest(
        f"{listed} asked never to be invited to games here: remove "
        f"{'them' if len(blocked) > 1 else 'that address'} from the players."
    )
