"""The SMTP (or LMTP) listener that takes mail in (ARCHITECTURE §10), which ``smallworld inbound`` runs.

``smallworld serve`` starts it as one of its processes, on ``SMALLWORLD_INBOUND_HOST`` (127.0.0.1) and
``SMALLWORLD_INBOUND_PORT`` (2525); at scale it runs alone, behind a real MTA that hands it the mail for the
inbound domain (Postfix: ``transport_maps`` to ``smtp:[127.0.0.1]:2525``, or ``lmtp:`` with ``--lmtp``).
It is no relay: it takes mail only for the inbound domain and the sender's own address (where bounces
come), refusing every other recipient at ``RCPT TO``. Each mail goes to the same domain operation as
``POST /inbound/mail`` (``service.domain.inbound.receive``), in a worker thread with its own database
session; the reply is 250 whatever the mail said (a bad mail is recorded, never retried), 552 for a mail
over the size limit, 451 (try again later) while the database is out of reach. A mail refused unread for
one of the inbound path's other limits (``inbound.Refusal``, recorded) gets ``REFUSALS``' answer: 554 for
too many MIME parts (for good), 450 while its seat had its mails for the hour, 451 over the CPU budget.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.lmtp import LMTP
from aiosmtpd.smtp import SMTP
from flask import Flask, current_app

from service.domain import inbound as inbound_mail
from service.domain.links import current_links, current_reply_addresses
from service.domain.outbox import mail_domain
from service.infra.db import get_session
from service.infra.logfmt import log

logger = logging.getLogger(__name__)

#: The SMTP answer to a mail refused unread (RFC 5321 §4.2, enhanced status codes of RFC 3463).
REFUSALS = {
    inbound_mail.Refusal.SHAPE: "554 5.6.0 Refused: {detail}",
    inbound_mail.Refusal.RATE: "450 4.7.1 Too many mails for this address this hour, try again later: {detail}",
    inbound_mail.Refusal.BUDGET: "451 4.3.0 The mail took too long to read, try again later: {detail}",
}


class InboundHandler:
    """aiosmtpd's handler: checks each recipient, hands each mail to :func:`inbound.receive`."""

    def __init__(self, app: Flask, *, via: str = "smtp") -> None:
        self.app = app
        self.via = via
        self.domains = {str(app.config["INBOUND_DOMAIN"]).lower(), mail_domain(app.config["MAIL_FROM"])}
        #: Mails read so far (for tests and logs).
        self.received = 0

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: Any) -> str:
        domain = address.rpartition("@")[2].lower()
        if domain not in self.domains:
            return "550 5.7.1 Relaying denied: this server takes mail for its own domain only"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        raw = envelope.original_content or envelope.content
        raw = raw if isinstance(raw, bytes) else str(raw).encode("utf-8", "surrogateescape")
        loop = asyncio.get_running_loop()
        reply = await loop.run_in_executor(None, self.receive, raw, list(envelope.rcpt_tos), envelope.mail_from)
        if self.via == "lmtp":
            # LMTP answers DATA once per recipient (RFC 2033 §4.2); each recipient's mail is read alike.
            return "\r\n".join([reply] * max(1, len(envelope.rcpt_tos)))
        return reply

    def receive(self, raw: bytes, recipients: list[str], mail_from: str | None) -> str:
        with self.app.app_context():
            try:
                outcomes = inbound_mail.receive(
                    get_session(),
                    raw,
                    links=current_links(),
                    replies=current_reply_addresses(),
                    settings=inbound_mail.InboundSettings.from_config(current_app.config),
                    via=self.via,
                    recipients=recipients,
                    envelope_sender=mail_from or "",
                )
            except inbound_mail.TooLarge as error:
                return f"552 5.3.4 {error}"
            except inbound_mail.Unavailable:
                return "451 4.3.0 Temporarily unable to take mail: try again later"
            except Exception as error:  # never drop the connection over one mail: recorded, answered 250
                log(logger, logging.ERROR, "inbound.handler_failed", error=repr(error)[:300])
                return "250 2.0.0 Accepted"
        refusals = [outcome.refusal for outcome in outcomes if outcome.refusal is not None]
        if refusals and len(refusals) == len(outcomes):
            # One mail, one answer: refused when no recipient's copy was read.
            detail = " ".join(outcomes[0].detail.split())[:200]
            return REFUSALS[refusals[0]].format(detail=detail)
        self.received += 1
        kinds = ",".join(str(outcome.kind) for outcome in outcomes)
        return f"250 2.0.0 Accepted ({kinds})"


class InboundController(Controller):
    """aiosmtpd's controller (a thread with its own event loop), speaking SMTP or LMTP."""

    def __init__(self, handler: InboundHandler, *, hostname: str, port: int, lmtp: bool, max_bytes: int) -> None:
        self.lmtp = lmtp
        super().__init__(handler, hostname=hostname, port=port, data_size_limit=max_bytes, ident="Small World by Mail")

    def factory(self) -> SMTP:
        server_class = LMTP if self.lmtp else SMTP
        return server_class(self.handler, **self.SMTP_kwargs)


def listener(app: Flask, *, host: str | None = None, port: int | None = None, lmtp: bool = False) -> InboundController:
    """A listener for ``app``'s inbound mail (not started)."""
    return InboundController(
        InboundHandler(app, via="lmtp" if lmtp else "smtp"),
        hostname=host or str(app.config["INBOUND_HOST"]),
        port=int(port if port is not None else app.config["INBOUND_PORT"]),
        lmtp=lmtp,
        max_bytes=int(app.config["INBOUND_MAX_BYTES"]),
    )
