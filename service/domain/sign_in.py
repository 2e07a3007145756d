"""Signing in by mail, and "mail me my links" (ARCHITECTURE §9: an address is an identity, no passwords).

An address asks for a sign-in link on the home page; the service mails it one link, and nothing else, which
works once and for ``SIGN_IN_MAX_AGE`` (30 minutes). Its page asks for a button press before it signs in,
since mail scanners open the links in mails. Signed in, the browser's session sees every game of the address
(``service.domain.my_games``) until it signs out or ``SESSION_MAX_AGE`` passes.

Strangers cannot use this to mail strangers: a sign-in link, or an address's links to a game, goes only to
an address the service has mailed already (the host of a game, or a player of a confirmed game), never to
an address on the block list, and the pages answer the same words whatever the address (so they tell nobody
which addresses play here). The limits per client and per address are the web's (``service.web.rate_limits``).

A row of ``sign_ins`` is one sign-in: the mailed link names it and carries its ``link_secret``; using the link
stamps ``used_at`` (one guarded UPDATE, so two uses racing each other sign in once) and makes the
``session_secret`` that the session cookie keeps. Every signed-in page checks it again, so signing out ends
that session for good (``ended_at``), and "sign out everywhere" ends every session of the address.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlmodel import Session, col, select

from emails.messages import SeatLink, SignInLink, YourLinks
from service.domain import block_list, bounces
from service.domain.errors import Forbidden
from service.domain.links import SIGN_IN, SIGN_IN_MAX_AGE, LinkError, LinkMaker, serial_of
from service.domain.models import Game, GameStatus, Player, Seat, SignIn, SiteAdmin, utcnow
from service.domain.outbox import queue_mail

#: A row whose link :func:`use_up` uses up.
Used = TypeVar("Used", SignIn, SiteAdmin)

#: How long a signed-in browser stays signed in without signing in again.
SESSION_MAX_AGE = timedelta(days=30)
#: At most one "mail me my links" mail per address and game in this many seconds, however often it is asked.
YOUR_LINKS_INTERVAL = 60

NOT_VALID = "This sign-in link is not valid: it may have been cut short or changed. Ask for a new one."
EXPIRED = f"This sign-in link has expired: they work for {SIGN_IN_MAX_AGE // 60} minutes. Ask for a new one."
USED = (
    "This sign-in link was used already: each works once. If it was you, you are signed in in the browser you "
    "used it in; otherwise ask for a new one."
)
ENDED = "This sign-in link no longer works: you signed out everywhere since. Ask for a new one."

#: Games whose players were mailed: an unconfirmed game mailed nobody but its host.
_MAILED_PLAYERS = (
    GameStatus.INVITING,
    GameStatus.ACTIVE,
    GameStatus.PAUSED,
    GameStatus.ENDING,
    GameStatus.FINISHED,
)


def normalise_email(email: str) -> str:
    return email.strip().lower()


def known_address(session: Session, email: str) -> bool:
    """Whether the service has mailed ``email`` before: it hosts a game (its confirmation was mailed to it),
    or holds a seat in a game whose invitations went out. Nothing is ever mailed to any other address."""
    email = normalise_email(email)
    hosts = session.exec(select(Game.id).where(Game.host_email == email).limit(1)).first()
    if hosts is not None:
        return True
    plays = session.exec(
        select(Seat.id)
        .join(Player, col(Player.id) == col(Seat.player_id))
        .join(Game, col(Game.id) == col(Seat.game_id))
        .where(Player.email == email, col(Game.status).in_(_MAILED_PLAYERS))
        .limit(1)
    ).first()
    return plays is not None


def may_mail(session: Session, email: str) -> bool:
    """Known (:func:`known_address`) and not on the block list."""
    return known_address(session, email) and not block_list.blocked_among(session, [email])


def request_sign_in(session: Session, email: str, links: LinkMaker, now: datetime | None = None) -> bool:
    """Mail a sign-in link to ``email`` if the service may mail it (:func:`may_mail`). Returns whether it
    did: the caller must not show it (the page answers the same either way)."""
    now = now or utcnow()
    email = normalise_email(email)
    if not may_mail(session, email):
        return False
    row = SignIn(email=email, link_secret=secrets.token_urlsafe(24), created_at=now)
    session.add(row)
    session.flush()
    assert row.id is not None
    url = links.sign_in_url(row.id, row.link_secret, serial=links_serial(session, email))
    mail = SignInLink(sign_in_url=url, valid_minutes=SIGN_IN_MAX_AGE // 60, sign_in_id=row.id)
    queue_mail(session, email, mail, now=now)
    session.commit()
    return True


def from_sign_in_token(session: Session, links: LinkMaker, token: str, now: datetime | None = None) -> SignIn:
    """The sign-in a link is for, still unused; :class:`Forbidden` (saying why) if tampered, expired, used
    or ended. Only reads: :func:`sign_in` uses the link up."""
    now = now or utcnow()
    try:
        payload = links.signer.verify(SIGN_IN, token)
    except LinkError:
        raise Forbidden(NOT_VALID) from None
    row_id = payload.get("i")
    row = session.get(SignIn, row_id) if isinstance(row_id, int) else None
    if row is None or not secrets.compare_digest(str(payload.get("k", "")), row.link_secret):
        raise Forbidden(NOT_VALID)
    if row.used_at is not None:
        raise Forbidden(USED)
    if row.ended_at is not None or serial_of(payload) != links_serial(session, row.email):
        raise Forbidden(ENDED)
    if now - row.created_at > timedelta(seconds=SIGN_IN_MAX_AGE):
        raise Forbidden(EXPIRED)
    return row


def sign_in(session: Session, links: LinkMaker, token: str, now: datetime | None = None) -> SignIn:
    """Use a sign-in link up: its row, now with the session's secret; :class:`Forbidden` as
    :func:`from_sign_in_token` says, and for a link used meanwhile."""
    now = now or utcnow()
    row = from_sign_in_token(session, links, token, now)
    unused = (col(SignIn.id) == row.id, col(SignIn.used_at).is_(None), col(SignIn.ended_at).is_(None))
    stamp = sa.update(SignIn).where(*unused).values(used_at=now, session_secret=secrets.token_urlsafe(24))
    used = use_up(session, row, stamp, USED)
    # Its owner read the link we mailed: the address takes mail again (service.domain.bounces).
    if bounces.clear(session, used.email):
        session.commit()
    return used


def use_up(session: Session, row: Used, update: sa.Update, refusal: str) -> Used:
    """Use a mailed link up once: ``update`` (an UPDATE of ``row`` guarded by what makes its link unused) is
    committed, and ``row`` read again; :class:`Forbidden` with ``refusal`` when it changed nothing, as when
    another use of the same link came first. Two uses racing each other sign in once. A site admin's
    sign-in link works the same way (``site_admins.sign_in``)."""
    used = session.exec(update.execution_options(synchronize_session=False))
    if used.rowcount != 1:
        session.rollback()
        raise Forbidden(refusal)
    session.commit()
    session.refresh(row)
    return row


def remembered(row: SignIn) -> dict[str, Any]:
    """What a browser session keeps of a sign-in."""
    return {"id": row.id, "k": row.session_secret}


def from_session(session: Session, kept: Any, now: datetime | None = None) -> SignIn | None:
    """The sign-in a browser session names, if it is still on: not signed out, not too old, secret matching."""
    if not isinstance(kept, dict) or not isinstance(kept.get("id"), int) or not isinstance(kept.get("k"), str):
        return None
    row = session.get(SignIn, kept["id"])
    if row is None or row.session_secret is None or row.ended_at is not None or row.used_at is None:
        return None
    if not secrets.compare_digest(kept["k"], row.session_secret):
        return None
    if (now or utcnow()) - row.used_at > SESSION_MAX_AGE:
        return None
    return row


def sign_out(session: Session, sign_in_id: int, now: datetime | None = None) -> None:
    """End one session: its cookie no longer opens anything, in any browser."""
    session.exec(
        sa.update(SignIn)
        .where(col(SignIn.id) == sign_in_id, col(SignIn.ended_at).is_(None))
        .values(ended_at=now or utcnow())
        .execution_options(synchronize_session=False)
    )
    session.commit()


def sign_out_everywhere(session: Session, email: str, now: datetime | None = None) -> int:
    """End every session of ``email`` and every sign-in link of it still unused, and move its
    ``links_serial`` on: every link of the address made until now (turn and invitation links in mails
    already sent, the seats browsers opened through them or through My games, its calendar feed and page of
    mail choices) stops working (``service.domain.links.with_serial``). The mails written from now on carry
    the new serial, so the next turn mail's link works; a mail written before and still on its way (seconds,
    or a retry after a refused delivery) carries the old one: My games, after signing in again, has them all.
    Returns how many sessions and sign-in links ended."""
    email = normalise_email(email)
    ended = session.exec(
        sa.update(SignIn)
        .where(col(SignIn.email) == email, col(SignIn.ended_at).is_(None))
        .values(ended_at=now or utcnow())
        .execution_options(synchronize_session=False)
    )
    session.exec(
        sa.update(Player)
        .where(col(Player.email) == email)
        .values(links_serial=col(Player.links_serial) + 1)
        .execution_options(synchronize_session=False)
    )
    session.commit()
    return int(ended.rowcount or 0)


def links_serial(session: Session, email: str) -> int:
    """The ``links_serial`` of ``email`` (0 for an address that is no player's: a host who does not play)."""
    serial = session.exec(select(Player.links_serial).where(Player.email == normalise_email(email))).first()
    return serial or 0


def mail_links(session: Session, game_id: int, email: str, links: LinkMaker, now: datetime | None = None) -> bool:
    """Mail ``email`` its own links to game ``game_id`` (each seat's turn link, or its invitation while not
    accepted), if it holds a seat there whose invitation went out and it is not on the block list. Returns
    whether a mail was written: the caller must not show it (the page answers the same either way)."""
    now = now or utcnow()
    email = normalise_email(email)
    rows = session.exec(
        select(Seat, Player, Game)
        .join(Player, col(Player.id) == col(Seat.player_id))
        .join(Game, col(Game.id) == col(Seat.game_id))
        .where(
            Seat.game_id == game_id,
            Player.email == email,
            Seat.removed == sa.false(),
            col(Game.status).in_(_MAILED_PLAYERS),
        )
        .order_by(col(Seat.seat))
    ).all()
    if not rows or block_list.blocked_among(session, [email]):
        return False
    _, player, game = rows[0]
    seats: list[SeatLink] = [
        {
            "name": seat.display_name,
            "url": links.turn_url(game_id, seat.seat, seat.secret, serial=player.links_serial)
            if seat.accepted_at is not None
            else links.invite_url(game_id, seat.seat, seat.secret, serial=player.links_serial),
            "accepted": seat.accepted_at is not None,
        }
        for seat, _, _ in rows
    ]
    mail = YourLinks(
        game_id=game_id,
        game_name=game.name,
        seats=seats,
        player_id=player.id or 0,
        window=int(now.timestamp()) // YOUR_LINKS_INTERVAL,
    )
    written = queue_mail(session, player, mail, now=now)
    session.commit()
    return written
