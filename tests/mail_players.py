"""Players who play by mail only: they read what the service sends to a real SMTP server (aiosmtpd,
``tests/smtp.py``) and answer by replying, to the inbound listener over SMTP (smtplib) or to
``POST /inbound/mail``.

:class:`MailTable` runs the service's side as its worker would (the outbox drained to the SMTP server)
and keeps, per seat, the mails it received; :func:`reply_to` writes a reply as a mail client does (quoted
text, a signature, ``In-Reply-To``).
"""

from __future__ import annotations

import re
import smtplib
from collections.abc import Iterable
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any

from flask import Flask
from sqlmodel import select

from emails.delivery import backend_from_config
from service.domain import delivery, tally
from service.domain.models import Game, InboundMail
from service.infra.db import get_session
from tests.api.conftest import bearer, create_game, token_of
from tests.smtp import Received, SMTPServer

INBOUND_SECRET = "inbound-secret-for-the-tests-0123456789"
INBOUND_DOMAIN = "play.smallworld.example"
BASE = "https://smallworld.example"


def mail_settings(smtp: SMTPServer, **extra: Any) -> dict[str, Any]:
    """The app settings of a game played by mail: mail out to ``smtp``, replies to our inbound domain."""
    return {
        "BASE_URL": BASE,
        "INBOUND_SECRET": INBOUND_SECRET,
        "INBOUND_DOMAIN": INBOUND_DOMAIN,
        "MAIL_FROM": "Small World <smallworld@smallworld.example>",
        **smtp.settings,
        **extra,
    }


class MailTable:
    """A game whose players act only by mail."""

    def __init__(self, app: Flask, smtp: SMTPServer, players: int) -> None:
        self.app = app
        self.smtp = smtp
        self.emails = [f"p{i}@example.org" for i in range(players)]
        self.api = app.test_client()
        self.game_id = 0
        self.seen = 0
        self.invitations: dict[int, Received] = {}

    def create(self, *, accept: bool = True, **settings: Any) -> int:
        """Create the game; each player accepts by their link unless ``accept`` is false (the invitations are
        then kept in :attr:`invitations`, by seat)."""
        body = {
            "name": "By mail",
            "players": [{"name": f"Player {i}", "email": e} for i, e in enumerate(self.emails)],
            "settings": settings,
        }
        created = create_game(self.api, body)
        assert created.status_code == 201, created.get_json()
        self.game_id = created.get_json()["id"]
        for mail in self.deliver():
            if "invited" in mail.headline.lower():
                self.invitations[self.seat_of(mail)] = mail
                if not accept:
                    continue
                link = next(line for line in mail.text.splitlines() if "/invite/" in line).strip()
                accepted = self.api.post("/api/invitations/accept", headers=bearer(token_of(link)))
                assert accepted.status_code == 200, accepted.get_json()
        return self.game_id

    def deliver(self) -> list[Received]:
        """Send what the outbox holds, as the mail worker does; the mails the SMTP server got since."""
        with self.app.app_context():
            delivery.deliver_due_mail(
                get_session(),
                backend_from_config(self.app.config),
                self.app.extensions["smallworld.links"],
                delivery.MailSettings.from_config(self.app.config),
            )
        received = self.smtp.mailbox.all()
        new = received[self.seen :]
        self.seen = len(received)
        return new

    def tally(self) -> None:
        """Tally a game that is ending, as the worker's task does (``worker/tasks/tally.py``)."""
        with self.app.app_context():
            tally.tally_game(get_session(), self.game_id)

    def game(self) -> Game:
        with self.app.app_context():
            game = get_session().get(Game, self.game_id)
            assert game is not None
            return game

    def inbound(self) -> list[InboundMail]:
        with self.app.app_context():
            return list(get_session().exec(select(InboundMail).order_by(InboundMail.id)).all())  # type: ignore[arg-type]

    def seat_of(self, mail: Received) -> int:
        return self.emails.index(mail.rcpt_tos[0])


def reply_to(
    mail: Received,
    text: str,
    *,
    sender: str | None = None,
    headers: Iterable[tuple[str, str]] = (),
    signature: str = "Ann\nSent from my phone",
) -> EmailMessage:
    """A reply to ``mail`` as a mail client writes it: to its ``Reply-To``, ``text`` on top, then the
    signature, then the mail answered, quoted."""
    original = mail.message
    reply = EmailMessage()
    reply["From"] = sender or mail.rcpt_tos[0]
    reply["To"] = str(original["Reply-To"] or original["From"])
    reply["Subject"] = "Re: " + str(original["Subject"])
    reply["Message-ID"] = make_msgid(domain="example.org")
    reply["In-Reply-To"] = str(original["Message-ID"])
    for name, value in headers:
        reply[name] = value
    quoted = "\n".join("> " + line for line in mail.text.splitlines())
    reply.set_content(f"{text}\n\n-- \n{signature}\n\nOn Tue, 3 Mar 2026, Small World wrote:\n{quoted}\n")
    return reply


def send_smtp(port: int, message: EmailMessage, *, mail_from: str | None = None) -> None:
    """Hand ``message`` to the inbound listener with a real SMTP client (``mail_from``: the envelope's)."""
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        sender = mail_from if mail_from is not None else str(message["From"])
        client.send_message(message, from_addr=sender, to_addrs=[str(message["To"])])


def send_smtp_bytes(port: int, raw: bytes, to: str, *, mail_from: str = "") -> None:
    """Hand a mail as bytes to the inbound listener (an empty ``mail_from``: a bounce's null sender)."""
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        client.sendmail(mail_from, [to], raw)


def post_mail(app: Flask, message: EmailMessage | bytes) -> Any:
    raw = message if isinstance(message, bytes) else message.as_bytes()
    return app.test_client().post(
        "/inbound/mail",
        data=raw,
        content_type="message/rfc822",
        headers={"Authorization": f"Bearer {INBOUND_SECRET}"},
    )


def dsn(
    to: str,
    failed: str,
    *,
    returned: str | None = None,
    diagnostic: str = "550 5.1.1 No such user",
    status: str = "5.1.1",
    sender: str = "Mail Delivery System <MAILER-DAEMON@mx.example.org>",
) -> bytes:
    """A delivery status notification (RFC 3464), as an MTA writes it, saying the mail to ``failed`` could
    not be delivered; with the returned mail's headers (``text/rfc822-headers``) naming ``returned`` as its
    ``Message-ID``, when given."""
    boundary = "dsn-boundary-42"
    headers = (
        (
            f"--{boundary}\r\nContent-Type: text/rfc822-headers\r\n\r\n"
            f"From: Small World <smallworld@smallworld.example>\r\nTo: {failed}\r\n"
            f"Subject: Your turn\r\nMessage-ID: {returned}\r\n"
        )
        if returned
        else ""
    )
    return (
        f"From: {sender}\r\n"
        f"To: {to}\r\n"
        f"Subject: Undelivered Mail Returned to Sender\r\n"
        f"Message-ID: {make_msgid(domain='mx.example.org')}\r\n"
        f"Auto-Submitted: auto-replied\r\n"
        f"MIME-Version: 1.0\r\n"
        f'Content-Type: multipart/report; report-type=delivery-status; boundary="{boundary}"\r\n\r\n'
        f"--{boundary}\r\nContent-Type: text/plain\r\n\r\n"
        f"This is the mail system: your message could not be delivered. {diagnostic}\r\n"
        f"--{boundary}\r\nContent-Type: message/delivery-status\r\n\r\n"
        f"Reporting-MTA: dns; mx.example.org\r\n\r\n"
        f"Final-Recipient: rfc822; {failed}\r\nAction: failed\r\nStatus: {status}\r\n"
        f"Diagnostic-Code: smtp; {diagnostic}\r\n"
        f"{headers}"
        f"--{boundary}--\r\n"
    ).encode()


def sign_in_again(table: MailTable, email: str) -> None:
    """``email``'s owner signs in on the site, by the link mailed to them (``/sign-in``), as a browser does."""
    web = table.app.test_client()
    web.post("/sign-in", data={"email": email, "csrf_token": _csrf(web, "/sign-in")})
    [mail] = [m for m in table.deliver() if m.rcpt_tos == (email,) and "sign-in link" in m.headline]
    found = re.search(r"/sign-in/([\w.-]+)", mail.text)
    assert found, mail.text
    path = f"/sign-in/{found[1]}"
    assert web.post(path, data={"csrf_token": _csrf(web, path)}).status_code == 303


def _csrf(web: Any, path: str) -> str:
    page = web.get(path).get_data(as_text=True)
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    return found[1] if found else ""
