"""Addresses that asked never to be invited again (ARCHITECTURE §9: strangers cannot use us to mail strangers).

Every invitation, and the mail that asks a host to confirm a game, carries a signed "never invite me again"
link (purpose ``block``, naming the address). Following it, and pressing the button on its page, puts the
address here; no game may then name it, as a player or as the host, and the lobby tells the host why.

An address whose owner had it erased ("Delete my address", ``service.domain.privacy``) is treated alike, but
kept only as a digest (:func:`address_digest`, table ``erased_addresses``), never in clear; within the service
its player row is renamed to an address under :data:`ERASED_DOMAIN`, to which no mail is ever written
(``service.domain.outbox``). Allowing invitations again by an old mail's "never invite me again" link lifts
both (the owner's own way back: only that address was ever mailed the link).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from sqlmodel import Session, col, select

from service.domain.errors import BadRequest
from service.domain.models import BlockedAddress, ErasedAddress, utcnow
from service.infra.db import dialect_insert

#: The domain of an erased player's stand-in address (``former-player-<id>@erased.invalid``): reserved by RFC
#: 2606, so it can never be mailed, and recognised by the outbox, which writes no mail to it.
ERASED_DOMAIN = "erased.invalid"


def is_erased(email: str) -> bool:
    """Whether ``email`` is an erased player's stand-in (:data:`ERASED_DOMAIN`): nothing may be mailed to it."""
    return email.lower().endswith("@" + ERASED_DOMAIN)


def address_digest(email: str) -> str:
    """What is kept of an erased address: a one-way digest, enough to recognise the address when a host names
    it again, not to tell anyone what it was.

    >>> address_digest("Ann@Example.org") == address_digest("ann@example.org ")
    True
    """
    return hashlib.sha256(b"smallworld-erased-address:" + email.strip().lower().encode("utf-8")).hexdigest()


def forget(session: Session, email: str) -> None:
    """Keep ``email`` off every game from now on as an erased address (its digest only), in the caller's
    transaction; if it was on the list in clear, it leaves it (the digest does that job now)."""
    insert = dialect_insert(session.get_bind().dialect.name, ErasedAddress)
    session.execute(
        insert.values(digest=address_digest(email), created_at=utcnow()).on_conflict_do_nothing(
            index_elements=["digest"]
        )
    )
    row = session.get(BlockedAddress, email.strip().lower())
    if row is not None:
        session.delete(row)


def block(session: Session, email: str) -> None:
    """Put ``email`` on the list (again is harmless), in the caller's transaction."""
    insert = dialect_insert(session.get_bind().dialect.name, BlockedAddress)
    session.execute(
        insert.values(email=email.lower(), created_at=utcnow()).on_conflict_do_nothing(index_elements=["email"])
    )


def unblock(session: Session, email: str) -> None:
    """Take ``email`` off the list (its owner's act, by their link, or an operator's on their request), and off
    the erased addresses: its owner may play again."""
    row = session.get(BlockedAddress, email.lower())
    if row is not None:
        session.delete(row)
    erased = session.get(ErasedAddress, address_digest(email))
    if erased is not None:
        session.delete(erased)


def blocked_among(session: Session, emails: Iterable[str]) -> list[str]:
    """Which of ``emails`` are on the list, or erased, in the order given."""
    wanted = [e.lower() for e in emails]
    if not wanted:
        return []
    found = set(session.exec(select(BlockedAddress.email).where(col(BlockedAddress.email).in_(wanted))).all())
    digests = {address_digest(e): e for e in wanted}
    erased = session.exec(select(ErasedAddress.digest).where(col(ErasedAddress.digest).in_(digests))).all()
    found.update(digests[digest] for digest in erased)
    return [e for e in wanted if e in found or is_erased(e)]


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
