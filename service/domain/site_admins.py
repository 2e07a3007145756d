"""Site admins (ARCHITECTURE §1, item 4): accounts made with ``smallworld admin create``, signed in by emailed link.

A sign-in link carries the account, its secret and its sign-in serial (purpose ``login``, good for
``LOGIN_MAX_AGE``, 15 minutes). It works once: signing in moves the account's serial on
(:func:`sign_in`, one guarded UPDATE, so two uses racing each other sign in once), which also ends every
other link made before. Its page asks for a button press before it signs in, since mail scanners open the
links in mails. The browser session keeps the account and its secret, and every admin page checks them
against the account again, so rotating the secret (:func:`sign_out_everywhere`) ends every session and kills
every sign-in link already mailed.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from emails.messages import AdminLogin
from service.domain.errors import Forbidden, NotFound
from service.domain.links import LOGIN, LOGIN_MAX_AGE, LinkError, LinkMaker
from service.domain.models import OutboxMail, SiteAdmin, utcnow
from service.domain.outbox import queue_mail
from service.domain.sign_in import use_up

#: One sign-in mail per account in this many seconds, however often the form is sent: anybody who knows
#: an admin's address can send it, and must not be able to fill their inbox.
SIGN_IN_MAIL_INTERVAL = 120

NOT_VALID = "This sign-in link is not valid: it may have been cut short or changed. Ask for a new one."
EXPIRED = f"This sign-in link has expired: they work for {LOGIN_MAX_AGE // 60} minutes. Ask for a new one."
REVOKED = "This sign-in link is no longer valid: the account was signed out everywhere. Ask for a new one."
USED = (
    "This sign-in link was used already: each works once (and a sign-in ends the links mailed before it). "
    "Ask for a new one."
)


def normalise_email(email: str) -> str:
    return email.strip().lower()


def find(session: Session, email: str) -> SiteAdmin | None:
    return session.exec(select(SiteAdmin).where(SiteAdmin.email == normalise_email(email))).first()


def request_sign_in(session: Session, email: str, links: LinkMaker, now: datetime | None = None) -> bool:
    """Mail a sign-in link to ``email`` if it is a site admin's. Returns whether it is one: the caller must
    not show it (the sign-in page answers the same either way)."""
    now = now or utcnow()
    account = find(session, email)
    if account is None or account.id is None:
        return False
    # One mail every SIGN_IN_MAIL_INTERVAL seconds at most, whoever sends the form: counted from the last mail,
    # not by windows of the clock (two asks a second apart across a window's edge mailed twice).
    since = now - timedelta(seconds=SIGN_IN_MAIL_INTERVAL)
    recent = session.exec(
        select(OutboxMail.id).where(
            OutboxMail.to_email == account.email,
            OutboxMail.template == AdminLogin.template,
            col(OutboxMail.created_at) > since,
        )
    ).first()
    if recent is not None:
        session.rollback()  # read only: end the transaction
        return True
    window = int(now.timestamp()) // SIGN_IN_MAIL_INTERVAL
    sign_in = AdminLogin(
        login_url=links.login_url(account.id, account.secret, account.sign_in_serial),
        valid_minutes=LOGIN_MAX_AGE // 60,
        account_id=account.id,
        window=window,
    )
    queue_mail(session, account.email, sign_in, now=now)
    session.commit()
    return True


def from_sign_in_token(session: Session, links: LinkMaker, token: str) -> SiteAdmin:
    """The account a sign-in link is for; :class:`Forbidden` if it is tampered, expired, revoked or used.

    Only reads: :func:`sign_in` uses the link up."""
    try:
        payload = links.signer.verify(LOGIN, token)
    except LinkError:
        raise Forbidden(NOT_VALID) from None
    try:
        links.signer.verify(LOGIN, token, max_age=LOGIN_MAX_AGE)
    except LinkError:
        raise Forbidden(EXPIRED) from None
    account_id = payload.get("a")
    account = session.get(SiteAdmin, account_id) if isinstance(account_id, int) else None
    if account is None:
        raise Forbidden(NOT_VALID)
    if not secrets.compare_digest(str(payload.get("k", "")), account.secret):
        raise Forbidden(REVOKED)
    if payload.get("n") != account.sign_in_serial:
        raise Forbidden(USED)
    return account


def sign_in(session: Session, links: LinkMaker, token: str) -> SiteAdmin:
    """Use a sign-in link up: the account it is for, once (:class:`Forbidden` as
    :func:`from_sign_in_token` says, and for a link used meanwhile)."""
    account = from_sign_in_token(session, links, token)
    serial = account.sign_in_serial
    unused = (col(SiteAdmin.id) == account.id, col(SiteAdmin.sign_in_serial) == serial)
    return use_up(session, account, sa.update(SiteAdmin).where(*unused).values(sign_in_serial=serial + 1), USED)


def remembered(account: SiteAdmin) -> dict[str, Any]:
    """What a browser session keeps of a signed-in site admin."""
    return {"id": account.id, "secret": account.secret}


def from_session(session: Session, kept: Any) -> SiteAdmin | None:
    """The account a browser session names, if its secret still matches (else it was signed out)."""
    if not isinstance(kept, dict) or not isinstance(kept.get("id"), int):
        return None
    account = session.get(SiteAdmin, kept["id"])
    if account is None or not secrets.compare_digest(str(kept.get("secret", "")), account.secret):
        return None
    return account


def sign_out_everywhere(session: Session, account_id: int) -> SiteAdmin:
    """Rotate the account's secret: every session and every sign-in link of it stops working."""
    account = session.get(SiteAdmin, account_id)
    if account is None:
        raise NotFound("There is no such site admin")
    account.secret = secrets.token_urlsafe(24)
    session.add(account)
    session.commit()
    return account
