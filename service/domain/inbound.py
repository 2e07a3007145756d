"""Mail that comes in (ARCHITECTURE §10): orders by reply, replies to table talk, bounces and automatic answers.

Two ways in, one code path: the SMTP/LMTP listener (``service.cli.inbound``) and ``POST
/inbound/mail`` (``service.web.inbound_mail``) both hand the raw message to :func:`receive`, which
commits what it does and never raises for a bad mail: each outcome is a row of ``inbound_mail``.

- A reply is matched by the address it was sent to: the signed per-seat, per-step ``Reply-To`` of the
  mail it answers (``service.domain.links.ReplyAddresses``), never by its ``From``. A mail to no valid reply
  address is a reply to an invitation when its ``In-Reply-To``/``References`` name one sent (a "yes" from the
  invited address takes the seat), mail for the operator when it came to ``postmaster@``/``abuse@`` (forwarded
  to ``SMALLWORLD_OPERATOR_EMAIL``), and otherwise not read: its sender is told so, and how to play, within
  the answers an hour to one address (an answer to a forged sender is backscatter: so few, and never to
  automatic mail).
- The same mail delivered twice (an MTA's retry; both ways in) is read once: its ``Message-ID`` and the
  address it came to are unique in ``inbound_mail``.
- Automatic mail is never read as orders and never answered (no mail loops): RFC 3834 ``Auto-Submitted``
  (anything but ``no``), ``Precedence: bulk``/``junk``/``list``/``auto_reply``, ``X-Autoreply`` and its
  kin, an empty envelope sender, reports (``multipart/report``: delivery status notifications, read
  receipts). A delivery report is read only when it comes to the signed bounce address of a mail we sent
  (each outbox row's own envelope sender, ``service.domain.bounces``): one that says delivery failed for
  good marks the address as bouncing and tells the hosts of its running games (``BounceAlert``), in fixed
  words from its status code (``emails.messages.bounce_reason``): never the report's own text. Any other
  report (anyone can write one) is logged and marks nobody.
- The reply's own text is read wherever its writer put it, above or below the quote (:func:`reply_text`:
  quoted lines, attributions and our "reply above this line" marker cut in a linear pass, then the signature
  and any quote header left by mail-parser-reply), its first lines as orders (``rules.orders``, a greeting
  line skipped), each applied in turn through the same domain operation as the turn
  page (``play.submit_action``); reading stops at the first order that fails, and at the end of the step
  the reply address names (a defender's redeployment ended, the turn passed: the rest was written for
  that step, not for the next, even one that awaits the same seat). The answer (``OrdersAnswer``) says
  what was done, what failed and why, which orders were left when the step ended, what may be done from
  there, and shows the board. A reply to a step that is over changes nothing and says so.
- Answers are limited per address and hour (``SMALLWORLD_INBOUND_ANSWERS_PER_HOUR``); orders beyond the
  limit are still carried out.
- What one mail may cost is bounded (ARCHITECTURE §9: mail from strangers; every limit is in
  :class:`InboundSettings`): its size; before anything is parsed, its MIME parts and containers counted on
  the raw bytes, and the mails its seat had this hour (only its header block is parsed for that); then the
  parts and nesting as parsed; the characters and lines of a reply given to the reply parser (whose time
  grows with the square of a reply's lines); and the CPU time of the whole reading. A mail over a limit is
  recorded as ``refused`` (:class:`Refusal` says why, and whether the refusal is for good), never a 500.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import html
import itertools
import logging
import re
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from email.message import EmailMessage, Message
from email.parser import HeaderParser
from email.utils import getaddresses, parseaddr
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from mailparser_reply import EmailReplyParser
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, col, select

import rules
from emails.messages import (
    FORWARDED_CHARS,
    BounceAlert,
    Invitation,
    InvitationAnswer,
    InvitationOutcome,
    NotRead,
    OperatorForward,
    OrdersAnswer,
    StepOver,
    bounce_reason,
)
from rules import orders as grammar
from service.domain import bounces, lobby, play, table_talk
from service.domain.errors import DomainError
from service.domain.games import seats_of
from service.domain.links import LinkMaker, ReplyAddresses, ReplyToken
from service.domain.models import (
    Game,
    GameStatus,
    InboundKind,
    InboundMail,
    MessageSource,
    OutboxMail,
    Player,
    Seat,
    SeatController,
    utcnow,
)
from service.domain.outbox import mail_domain, queue_mail
from service.domain.turn_mail import board_summary, orders_of, seat_names
from service.infra.logfmt import log

logger = logging.getLogger(__name__)

#: The languages whose quote headers and signatures the reply parser knows.
REPLY_LANGUAGES = ["en", "de", "fr", "es", "it", "nl", "pl", "sv", "da", "cs", "ja", "ko", "zh"]
#: Steps one order may take at most (``end``: end the conquests, place the tokens, end the turn).
MAX_STEPS_PER_ORDER = 8
#: Headers a hosted inbound hook or an MTA may name the recipient in, when no envelope is given.
RECIPIENT_HEADERS = ("Delivered-To", "X-Original-To", "Envelope-To", "X-Envelope-To", "To", "Cc")


@dataclass(frozen=True)
class InboundSettings:
    """Every limit of the inbound path (``SMALLWORLD_INBOUND_*``): what one mail may cost to read.

    The figures behind the defaults are ``bench/inbound_parse.py``'s (bench/README.md).
    """

    #: A larger mail is refused unread (SMTP 552, HTTP 413).
    max_bytes: int = 1_000_000
    #: Answer mails to one address per hour; orders beyond them are still carried out, unanswered.
    answers_per_hour: int = 30
    #: Mails read for one seat per hour, orders and table talk alike (a table-talk address never expires);
    #: more are refused before their body is parsed, for now (SMTP 450, HTTP 429).
    mails_per_seat_per_hour: int = 60
    #: MIME parts in one mail, and how deep containers nest. A reply has a handful of each (a text, its
    #: HTML, a picture or two; a forwarded mail or two); a mail with more is refused for good (SMTP 554,
    #: HTTP 422), by an upper bound counted on the raw bytes before parsing (the parser reads every part:
    #: 20,000 flat parts cost seconds), then exactly once parsed.
    max_parts: int = 100
    max_depth: int = 10
    #: The reply's text read (the reply parser's time grows with the square of its lines and of a line's
    #: length): orders are 40 short lines at most (``rules.orders.MAX_ORDERS``), a table-talk message 2,000
    #: characters (``emails.table_talk.LONGEST``), and the quote header that ends a reply comes right after
    #: them; the rest of a mail is the quoted mail it answers. Cut at the end of a line.
    reply_chars: int = 4_000
    reply_lines: int = 200
    #: The text read before that, quote included, by a pass that is linear in it (``own_lines``): a reply written
    #: below the quote (bottom-posted) comes after the mail it answers, whose HTML is about 10 KB with our
    #: styles inlined. Cut at the end of a line.
    quote_chars: int = 100_000
    #: Lines longer than this are kept out of the reply parser (none is a quote header or a signature) and
    #: put back in the reply as they were: the parser's time is quadratic in a line's length.
    long_line: int = 200
    #: Addresses read from the envelope or the recipient headers, at most.
    max_recipients: int = 20
    #: CPU seconds the reading of one mail may take (the parsing, the reply parser, the orders); checked
    #: between its stages, each bounded by the limits above. Over it, the mail is refused for now
    #: (SMTP 451, HTTP 503): on a loaded machine it may pass later.
    cpu_seconds: float = 1.0
    #: Where mail to ``postmaster@`` and ``abuse@`` the inbound domain is forwarded (``SMALLWORLD_OPERATOR_EMAIL``);
    #: None: it is recorded only.
    operator_email: str | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> InboundSettings:
        return cls(
            max_bytes=int(config["INBOUND_MAX_BYTES"]),
            answers_per_hour=int(config["INBOUND_ANSWERS_PER_HOUR"]),
            mails_per_seat_per_hour=int(config["INBOUND_MAILS_PER_SEAT_PER_HOUR"]),
            max_parts=int(config["INBOUND_MAX_PARTS"]),
            max_depth=int(config["INBOUND_MAX_DEPTH"]),
            reply_chars=int(config["INBOUND_REPLY_CHARS"]),
            reply_lines=int(config["INBOUND_REPLY_LINES"]),
            quote_chars=int(config["INBOUND_QUOTE_CHARS"]),
            cpu_seconds=float(config["INBOUND_CPU_SECONDS"]),
            operator_email=str(config.get("OPERATOR_EMAIL") or "").strip() or None,
        )


class Refusal(StrEnum):
    """Why a mail was refused unread (recorded as ``refused``); the listener and the endpoint answer each in
    their own protocol's terms."""

    #: More MIME parts or deeper nesting than :class:`InboundSettings` allows: the mail itself is at fault.
    SHAPE = "shape"
    #: Its seat had its mails for this hour: it may be handed in again later.
    RATE = "rate"
    #: Reading it took more CPU than :attr:`InboundSettings.cpu_seconds`: it may pass later.
    BUDGET = "budget"

    @property
    def permanent(self) -> bool:
        """Whether handing the same mail in again is useless (SMTP 5xx) rather than worth a retry (4xx)."""
        return self is Refusal.SHAPE


class Refused(Exception):
    """A mail over one of :class:`InboundSettings`' limits (raised inside :func:`receive`, recorded there)."""

    def __init__(self, refusal: Refusal, why: str) -> None:
        super().__init__(why)
        self.refusal = refusal
        self.why = why


@dataclass
class CpuBudget:
    """The CPU time a mail's reading may take (this thread's, so other mails read at once do not count)."""

    seconds: float
    started: float = field(default_factory=time.thread_time)

    def check(self, stage: str) -> None:
        """Raise :class:`Refused` if the reading has taken more than its budget by the end of ``stage``."""
        spent = time.thread_time() - self.started
        if spent > self.seconds:
            why = f"reading it took {spent:.3f} s of CPU by the end of {stage}, over the {self.seconds:g} s allowed"
            raise Refused(Refusal.BUDGET, why)


@dataclass
class Outcome:
    """What became of one mail (for one reply address it came to)."""

    kind: InboundKind
    detail: str
    inbound_id: int | None = None
    answered: bool = False
    #: The same mail was read before: nothing done again.
    duplicate: bool = False
    #: Why it was refused unread (``kind`` is ``refused``).
    refusal: Refusal | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": str(self.kind),
            "detail": self.detail,
            "answered": self.answered,
            "duplicate": self.duplicate,
            "refused": str(self.refusal) if self.refusal else None,
        }


@dataclass(frozen=True)
class _Mail:
    """One mail being read: how it was handed in (``via``, the envelope's recipients and sender when known, and
    when), the CPU its reading may take, and, once its header block is read, what each record of it names it
    by: its identity (its ``Message-ID``, else its bytes' hash) and its sender."""

    via: str
    now: datetime
    budget: CpuBudget
    recipients: Sequence[str] = ()
    envelope_sender: str | None = None
    identity: str = ""
    sender: str = ""
    #: What an answer to it replies to (``emails.messages.Replying``): its ``Message-ID``, its ``References``
    #: and its subject, each as a header may hold it (:func:`thread_of`).
    message_id: str | None = None
    references: tuple[str, ...] = ()
    subject: str = ""


class TooLarge(ValueError):
    """A mail over ``InboundSettings.max_bytes``."""


class Unavailable(RuntimeError):
    """The database is out of reach: the mail must be handed in again later (SMTP 451, HTTP 503)."""


def receive(
    session: Session,
    raw: bytes,
    *,
    links: LinkMaker,
    replies: ReplyAddresses,
    settings: InboundSettings,
    via: str,
    recipients: Sequence[str] = (),
    envelope_sender: str | None = None,
    now: datetime | None = None,
) -> list[Outcome]:
    """Read one mail and do what it asks; commit; return what became of it, per reply address.

    ``recipients``: the envelope's (SMTP ``RCPT TO``); without them, the recipient headers are read.
    ``envelope_sender``: SMTP ``MAIL FROM`` (empty for bounces and automatic mail), when known.
    Raises only :class:`TooLarge` and :class:`Unavailable`; anything else a mail causes is recorded (a mail
    over another limit as ``refused``, with its :class:`Refusal`).
    """
    if len(raw) > settings.max_bytes:
        raise TooLarge(f"The mail is larger than {settings.max_bytes} bytes")
    now = now or utcnow()
    mail = _Mail(via, now, CpuBudget(settings.cpu_seconds), recipients, envelope_sender)
    try:
        return _receive(session, raw, mail, links, replies, settings)
    except Refused as refused:
        session.rollback()
        log(logger, logging.WARNING, "inbound.refused", via=via, refusal=str(refused.refusal), why=refused.why[:200])
        return [_refuse(session, raw, "", mail, refused.refusal, refused.why)]
    except OperationalError as error:
        session.rollback()
        raise Unavailable("The database is out of reach; hand the mail in again later") from error
    except Exception as error:  # one bad mail never stops the others, nor becomes a 500
        session.rollback()
        log(logger, logging.ERROR, "inbound.failed", via=via, error=repr(error)[:300])
        logger.exception("inbound mail failed")
        why = f"could not be read: {type(error).__name__}"
        try:  # recorded for the admins, under the mail's own bytes (a retry of it is read again)
            identity = "failed:" + hashlib.sha256(raw).hexdigest() + ":" + now.isoformat()
            return [_note(session, replace(mail, identity=identity), "", InboundKind.MALFORMED, why)]
        except Exception:
            session.rollback()
            return [Outcome(InboundKind.MALFORMED, why)]


def _receive(
    session: Session, raw: bytes, mail: _Mail, links: LinkMaker, replies: ReplyAddresses, settings: InboundSettings
) -> list[Outcome]:
    # Before the body is parsed: its shape on the raw bytes, then its header block alone (what kind of mail,
    # for which seats, and whether they had their mails this hour).
    too_many = mime_shape_refusal(raw, settings)
    if too_many:
        raise Refused(Refusal.SHAPE, too_many)
    head = parse_head(raw)
    message_id = _header(head, "Message-ID")[:998]
    mail = replace(mail, identity=message_id or hashlib.sha256(raw).hexdigest(), sender=_sender(head))
    mail = replace(mail, **thread_of(head))

    # A delivery report, or any mail to a bounce address (the non-standard bounces too): never read as orders.
    to_bounces = _bounce_recipients(head, mail.recipients, replies.domain, settings)
    if to_bounces or is_delivery_report(head):
        report = parse_message(raw, settings, mail.budget)
        addresses = bounces.BounceAddresses(tuple(replies.signer.keys), replies.domain)
        return [_bounce(session, mail, report, to_bounces, addresses, links)]
    role = _role_address(head, mail.recipients, replies.domain, settings)
    if role is not None:
        # Before the automatic mail is set aside: an abuse report (RFC 5965) is one, and is for the operator.
        return [_forward(session, raw, mail, role, links, settings, replies.domain)]
    automatic = automatic_reason(head, mail.envelope_sender)
    if automatic:
        return [_note(session, mail, "", InboundKind.AUTO_REPLY, automatic)]

    tokens = _tokens(head, mail.recipients, replies, settings)
    if not tokens:
        invitation = _invitation_answered(session, head)
        if invitation is not None:
            return [_invitation_reply(session, raw, mail, invitation, links, settings)]
        to = next(iter(_recipients(head, mail.recipients, settings)), "")
        return [_not_read(session, mail, to, "no reply address of ours", links, settings, replies.domain)]
    outcomes: list[Outcome] = []
    readable: list[tuple[str, ReplyToken, Seat, bool]] = []
    for address, token in tokens:
        seat_row = session.exec(select(Seat).where(Seat.game_id == token.game_id, Seat.seat == token.seat)).first()
        player = session.get(Player, seat_row.player_id) if seat_row is not None else None
        if (
            seat_row is None
            or player is None
            or seat_row.removed
            or not replies.verify(token, seat_row.secret, serial=player.links_serial)
        ):
            # Forged, cut short, signed for a seat that changed hands since, or before its player signed out
            # everywhere (``links.with_serial``): not ours to answer.
            why = "the reply address is not valid (or its seat changed hands, or its address signed out everywhere)"
            answer = not outcomes  # one answer for the mail, however many such addresses it came to
            outcomes.append(
                _not_read(session, mail, address, why, links, settings, replies.domain, expired=True, answer=answer)
            )
            continue
        read = _mails_this_hour(session, seat_row, mail.now)
        if read >= settings.mails_per_seat_per_hour:
            why = f"its seat had {read} mails read this hour, the most allowed: hand it in again later"
            log(logger, logging.WARNING, "inbound.seat_limited", game=token.game_id, seat=token.seat, read=read)
            outcomes.append(_refuse(session, raw, address, mail, Refusal.RATE, why, seat=seat_row))
            continue
        readable.append((address, token, seat_row, _may_answer(session, seat_row, settings, mail.now)))
    if not readable:
        return outcomes
    message = parse_message(raw, settings, mail.budget)
    text = reply_text(message, settings, mail.budget)
    for address, token, seat_row, may_answer in readable:
        outcomes.append(_reply(session, mail, text, address, token, seat_row, may_answer, links))
    return outcomes


def parse_head(raw: bytes) -> Message:
    """The mail's header block alone, read as UTF-8, values as written (no header is decoded or parsed
    further): what is read of a mail before its seat's limits are known.

    >>> parse_head("From: Jörg <jörg@example.org>\\r\\nTo: a@example.org\\r\\n\\r\\nbody".encode())["From"]
    'Jörg <jörg@example.org>'
    """
    end = _HEAD_END.search(raw)
    block = raw[: end.end()] if end is not None else raw
    return HeaderParser().parsestr(block.decode("utf-8", "replace"), headersonly=True)


_HEAD_END = re.compile(rb"\r?\n\r?\n")


def parse_message(raw: bytes, settings: InboundSettings | None = None, budget: CpuBudget | None = None) -> EmailMessage:
    """The mail, parsed leniently (``email`` records defects instead of failing); :class:`Refused` if its
    parts or their nesting are over ``settings``' limits, or the parsing over the budget."""
    settings = settings or InboundSettings()
    parsed: EmailMessage = email.message_from_bytes(raw, policy=email.policy.default)
    if budget is not None:
        budget.check("the parsing")
    parts, depth = mime_shape(parsed, settings.max_parts)
    if parts > settings.max_parts or depth > settings.max_depth:
        why = f"{parts} MIME parts nested {depth} deep; at most {settings.max_parts} parts, {settings.max_depth} deep"
        raise Refused(Refusal.SHAPE, why)
    return parsed


# -- what one mail may cost ----------------------------------------------------------------------------------
_CONTAINER = re.compile(rb"(?im)^content-type:[ \t\r\n]*(?:multipart|message)/")
_BOUNDARY = re.compile(rb'(?i)\bboundary\*?[0-9]*\*?[ \t]*=[ \t]*(?:"([^"\r\n]{1,200})"|([^\s;"]{1,200}))')


def mime_shape_refusal(raw: bytes, settings: InboundSettings) -> str | None:
    """Why ``raw`` has too many MIME parts, by an upper bound counted on its bytes without parsing it, or
    None. Containers: every ``Content-Type: multipart/`` or ``message/`` line; parts: every line that opens
    a part of a boundary declared anywhere in the mail (a boundary declared in pieces, RFC 2231, is matched
    by its first piece: a prefix of the whole).

    >>> mail = b'Content-Type: multipart/mixed; boundary="b"\\n\\n' + b"--b\\n\\nhi\\n" * 3 + b"--b--\\n"
    >>> mime_shape_refusal(mail, InboundSettings(max_parts=3)) is None
    True
    >>> mime_shape_refusal(mail, InboundSettings(max_parts=2))
    'more than 2 MIME parts'
    """
    if _more_than(_CONTAINER.finditer(raw), settings.max_parts):
        return f"more than {settings.max_parts} MIME containers"
    boundaries: set[bytes] = set()
    for found in _BOUNDARY.finditer(raw):
        boundaries.add(found.group(1) or found.group(2))
        if len(boundaries) > settings.max_parts:
            return f"more than {settings.max_parts} MIME boundaries"
    if not boundaries:
        return None
    alternatives = b"|".join(re.escape(b) for b in sorted(boundaries, key=len, reverse=True))
    if _more_than(re.finditer(rb"(?m)^--(?:" + alternatives + rb")(?!--)", raw), settings.max_parts):
        return f"more than {settings.max_parts} MIME parts"
    return None


def _more_than(found: Iterable[object], most: int) -> bool:
    """Whether ``found`` has more than ``most`` items (read no further than that)."""
    return sum(1 for _ in itertools.islice(found, most + 1)) > most


def mime_shape(message: Message, most: int) -> tuple[int, int]:
    """The MIME parts under a parsed mail's top (counting stops past ``most``) and how many containers deep
    the deepest lies: a plain mail is ``(0, 0)``, a text with its HTML ``(2, 1)``.

    >>> from email.message import EmailMessage
    >>> mail = EmailMessage(); mail.set_content("hi"); mail.add_alternative("<p>hi</p>", subtype="html")
    >>> mime_shape(mail, 100)
    (2, 1)
    """
    parts = depth = 0
    pending: list[tuple[Message, int]] = [(message, 0)]
    while pending and parts <= most:
        part, level = pending.pop()
        depth = max(depth, level)
        payload = part.get_payload() if part.is_multipart() else None
        if isinstance(payload, list):
            children = [child for child in payload if isinstance(child, Message)]
            parts += len(children)
            pending.extend((child, level + 1) for child in children)
    return parts, depth


def _mails_this_hour(session: Session, seat: Seat, now: datetime) -> int:
    """Mails read for the seat in the hour before ``now`` (refused ones do not count)."""
    return session.exec(
        select(sa.func.count())
        .select_from(InboundMail)
        .where(
            col(InboundMail.game_id) == seat.game_id,
            col(InboundMail.seat) == seat.seat,
            col(InboundMail.kind) != InboundKind.REFUSED,
            col(InboundMail.received_at) >= now - timedelta(hours=1),
        )
    ).one()


def _may_answer(session: Session, seat: Seat, settings: InboundSettings, now: datetime) -> bool:
    """Whether the seat's address may have one more answer this hour (``answers_per_hour``)."""
    answered = session.exec(
        select(sa.func.count())
        .select_from(InboundMail)
        .where(
            col(InboundMail.player_id) == seat.player_id,
            col(InboundMail.answered) == sa.true(),
            col(InboundMail.received_at) >= now - timedelta(hours=1),
        )
    ).one()
    if answered >= settings.answers_per_hour:
        log(logger, logging.WARNING, "inbound.answer_limited", game=seat.game_id, seat=seat.seat, answered=answered)
        return False
    return True


def _header(message: Message, name: str, longest: int = 4_000) -> str:
    """A header's value as written, its first ``longest`` characters (a header may be as long as the mail)."""
    value = message.get(name)
    return str(value or "")[:longest].strip()


# -- what kind of mail ---------------------------------------------------------------------------------------
_AUTOMATIC_HEADERS = ("X-Autoreply", "X-Autorespond", "X-Autoresponder", "X-Auto-Reply", "X-Autogenerated")
_PRECEDENCE = {"bulk", "junk", "list", "auto_reply", "auto-reply"}


def automatic_reason(message: Message, envelope_sender: str | None = None) -> str | None:
    """Why ``message`` is an automatic mail and not a person's answer (RFC 3834 and common practice), or
    None. Such a mail is never read as orders and never answered.

    >>> from email.message import EmailMessage
    >>> mail = EmailMessage(); mail["Auto-Submitted"] = "auto-replied"
    >>> automatic_reason(mail)
    'Auto-Submitted: auto-replied'
    >>> automatic_reason(EmailMessage()) is None
    True
    """
    submitted = _header(message, "Auto-Submitted").lower()
    if submitted and submitted.split(";")[0].strip() != "no":
        return f"Auto-Submitted: {submitted[:60]}"
    precedence = _header(message, "Precedence").lower()
    if precedence in _PRECEDENCE:
        return f"Precedence: {precedence}"
    for name in _AUTOMATIC_HEADERS:
        if message.get(name) is not None:
            return f"{name} header"
    if message.get_content_type() == "multipart/report":
        return f"a report ({message.get_param('report-type') or 'unknown type'})"
    if _header(message, "X-Auto-Response-Suppress").lower() in ("all", "oof"):
        return "an automatic answer (X-Auto-Response-Suppress)"
    if envelope_sender is not None and envelope_sender.strip("<> ") == "":
        return "an empty envelope sender (a bounce or an automatic mail)"
    local = parseaddr(_header(message, "From"))[1].split("@")[0].lower()
    if local in ("mailer-daemon", "postmaster"):
        return f"sent by {local}"
    return None


def is_delivery_report(message: Message) -> bool:
    """Whether ``message`` (its header block is enough) is a delivery status notification (RFC 3464)."""
    if message.get_content_type() != "multipart/report":
        return False
    return str(message.get_param("report-type") or "").lower() == "delivery-status"


def bounced_addresses(message: Message) -> list[tuple[str, str]] | None:
    """The addresses a delivery status notification (RFC 3464) says delivery failed for, with the reason in
    fixed words from its status code (``bounce_reason``; its ``Diagnostic-Code`` is never read: anyone can
    write a report): ``None`` if ``message`` is not a DSN (an empty list: a DSN that reports no failure,
    e.g. "delayed")."""
    if not is_delivery_report(message):
        return None
    failed: list[tuple[str, str]] = []
    for part in message.walk():
        if part.get_content_type() != "message/delivery-status":
            continue
        for block in _status_blocks(part):
            action = str(block.get("Action", "") or "").strip().lower()
            status = str(block.get("Status", "") or "").strip()
            if action != "failed" and not status.startswith("5"):
                continue
            recipient = str(block.get("Final-Recipient", "") or block.get("Original-Recipient", "") or "")
            address = recipient.split(";", 1)[-1].strip().strip("<>").lower()
            if "@" in address:
                failed.append((address[:320], bounce_reason(status[:40])))
    return failed


def _status_blocks(part: Message) -> list[Message]:
    """The per-message and per-recipient field blocks of a ``message/delivery-status`` part."""
    payload = part.get_payload()
    if isinstance(payload, list):
        return [block for block in payload if isinstance(block, Message)]
    # Some parsers leave it as text: blocks of header fields separated by blank lines.
    text = payload if isinstance(payload, str) else ""
    return [email.message_from_string(chunk + "\n") for chunk in re.split(r"\r?\n\s*\r?\n", text) if chunk.strip()]


# -- the reply address ---------------------------------------------------------------------------------------
def _recipients(message: Message, recipients: Sequence[str], settings: InboundSettings) -> list[str]:
    """The addresses the mail came to: the envelope's, else its headers'; the first ``settings.max_recipients``."""
    if recipients:
        return [address.strip("<> ") for address in recipients[: settings.max_recipients]]
    values = [str(v)[:4_000] for name in RECIPIENT_HEADERS for v in (message.get_all(name) or [])[:10]]
    return [address for _, address in getaddresses(values) if address][: settings.max_recipients]


def _tokens(
    message: Message, recipients: Sequence[str], replies: ReplyAddresses, settings: InboundSettings
) -> list[tuple[str, ReplyToken]]:
    """The reply addresses of ours the mail came to (the envelope's, else its headers'), once each; of the
    first ``settings.max_recipients`` addresses."""
    candidates = _recipients(message, recipients, settings)
    found: dict[str, tuple[str, ReplyToken]] = {}
    for address in candidates:
        token = replies.read(address)
        if token is not None:
            found.setdefault(address.strip("<> ").lower(), (address.strip("<> ").lower(), token))
    return list(found.values())


_MESSAGE_ID = re.compile(r"<[^<>\s\x00-\x1f\x7f]{1,250}>")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


def thread_of(message: Message) -> dict[str, Any]:
    """What an answer to ``message`` replies to: its ``Message-ID`` (None when it has none of the RFC 5322
    shape), its last 20 ``References`` of that shape, and its subject on one line (200 characters at most).

    >>> from email.message import EmailMessage
    >>> mail = EmailMessage(); mail["Message-ID"] = "<b@x>"; mail["References"] = "<root@x> junk <a@x>"
    >>> mail["Subject"] = "Re: Your turn"
    >>> thread_of(mail)
    {'message_id': '<b@x>', 'references': ('<root@x>', '<a@x>'), 'subject': 'Re: Your turn'}
    """
    found = _MESSAGE_ID.search(_header(message, "Message-ID", 1_000))
    references = _MESSAGE_ID.findall(_header(message, "References", 8_000))[-20:]
    subject = " ".join(_CONTROLS.sub(" ", _decoded(_header(message, "Subject", 1_000))).split())[:200]
    return {"message_id": found.group() if found else None, "references": tuple(references), "subject": subject}


def _decoded(value: str) -> str:
    """A header's value with its encoded words (RFC 2047: ``=?utf-8?q?…?=``) decoded; as written if broken.

    >>> _decoded("Re: =?utf-8?q?Caf=C3=A9_night?=")
    'Re: Café night'
    """
    try:
        return str(make_header(decode_header(value)))
    except (LookupError, ValueError, UnicodeError, HeaderParseError):
        return value


def _sender(message: Message) -> str:
    return parseaddr(_header(message, "From"))[1][:320]


# -- a reply -------------------------------------------------------------------------------------------------
@dataclass
class _Answer:
    answered: str
    done: list[str] = field(default_factory=list)
    failed: str | None = None
    reason: str | None = None
    not_tried: list[str] = field(default_factory=list)
    stopped_at: str | None = None
    grammar: list[str] = field(default_factory=list)
    #: The step the reply answered ended before all of it was carried out: ``"redeployment"`` (a defender's)
    #: or ``"turn"``; the order carried on no further, as written (it went on into the next step), and the
    #: orders not applied.
    step_over: StepOver | None = None
    cut: str | None = None
    left: list[str] = field(default_factory=list)


def _reply(
    session: Session,
    mail: _Mail,
    text: str,
    address: str,
    token: ReplyToken,
    seat_row: Seat,
    may_answer: bool,
    links: LinkMaker,
) -> Outcome:
    game = session.get(Game, token.game_id)
    player = session.get(Player, seat_row.player_id)
    assert game is not None and player is not None
    if token.step_key is None:
        return _talk(session, mail, text, address, game, seat_row, player)
    read = grammar.parse(text)
    mail.budget.check("the reading of the orders")
    claimed = _claim(session, mail, address, InboundKind.ORDERS, game, seat_row.seat, player)
    if claimed is None:
        return Outcome(InboundKind.ORDERS, "this mail was read before: nothing done again", duplicate=True)
    row, row_id = claimed, claimed.id or 0

    if game.status != GameStatus.ACTIVE:
        answer = _Answer("not_running")
        kind = InboundKind.LATE
    elif seat_row.controller == SeatController.BOT:
        # The house bot plays the seat (ARCHITECTURE §10): its person takes it back from their page, not by mail.
        answer = _Answer("bot_seat")
        kind = InboundKind.LATE
    elif game.step_key != token.step_key:
        answer = _Answer("late")
        kind = InboundKind.LATE
    elif not read.orders:
        answer = _Answer("no_orders", stopped_at=read.stopped_at, grammar=grammar.grammar())
        kind = InboundKind.ORDERS
    else:
        answer = _carry_out(session, game.id or 0, seat_row.seat, token.step_key, read, links, mail.now)
        answer.stopped_at = read.stopped_at
        kind = InboundKind.ORDERS
    game = session.get(Game, token.game_id)
    assert game is not None
    session.refresh(game)
    summary = _summary(answer)
    answered = may_answer and _answer(session, game, seat_row, player, row_id, answer, mail)
    row = session.get(InboundMail, row_id) or row
    # A bouncing mark stays (service.domain.bounces): a reply through the seat's address says nothing of whether
    # mail to the player's own address arrives; signing in, by the link mailed to it, does.
    row.kind = kind
    row.outcome = summary[:1000]
    row.answered = answered
    session.add(row)
    session.commit()
    log(logger, logging.INFO, "inbound.reply", game=game.id, seat=seat_row.seat, kind=str(kind), outcome=summary[:200])
    return _outcome(row, kind, summary, answered=answered)


def reply_text(message: EmailMessage, settings: InboundSettings | None = None, budget: CpuBudget | None = None) -> str:
    """The reply's own text: its plain-text part (or its HTML as text), without the quoted mail it answers
    and without the signature, wherever the writer put it: above the quote (top-posted), below it
    (bottom-posted), or both.

    Two passes. The first (:func:`own_lines`) is linear in the text (its first ``settings.quote_chars``
    characters): it drops the lines quoted with ``>``
    and the attribution line above each quote ("On … wrote:", in the forms of the common clients, wrapped
    or not), the client's "Sent from my …" lines, and everything from our own "reply above this line"
    marker or an Outlook quote separator down (the mail quoted without ``>``). The second is the reply parser
    (mail-parser-reply), which cuts what is left at a quote header or a signature it knows; its time grows
    with the square of the lines and of a line's length (bench/inbound_parse.py), so it is given only the
    first ``settings.reply_chars`` characters and ``reply_lines`` lines of the writer's own lines, and lines
    longer than ``long_line`` go round it. A bottom-posted reply costs the same: its quote is dropped by the
    linear pass before the bounded one.
    """
    settings = settings or InboundSettings()
    lines = own_lines(_plain_text(message, settings).splitlines(), settings)
    if budget is not None:
        budget.check("the decoding of the text")
    # A long line is no quote header nor signature: the parser sees a mark (private-use characters, taken
    # out of the text first) and the line is put back in its place afterwards.
    long_lines: dict[str, str] = {}
    shown = []
    for number, line in enumerate(lines):
        line = line.replace("\ue000", "").replace("\ue001", "")
        if len(line) > settings.long_line:
            mark = f"\ue000{number}\ue001"
            long_lines[mark] = line
            line = mark
        shown.append(line)
    text = "\n".join(shown)
    try:
        parsed = _reply_parser().read(text=text)
        body = parsed.replies[0].body if parsed.replies else text
    except Exception:  # the parser's own trouble with a strange mail: read the text as it is
        body = text
    if budget is not None:
        budget.check("the reply parser")
    if long_lines:
        body = re.sub("\ue000[0-9]+\ue001", lambda mark: long_lines.get(mark.group(), ""), body)
    return "\n".join(line for line in body.splitlines() if not line.lstrip().startswith(">"))


#: The line on top of every mail that may be answered (``emails/templates/_reply_marker.txt`` and the HTML
#: layout): in a reply, an unquoted copy of it is where the mail answered begins.
REPLY_MARKER = "Please type your reply above this line"
_MARKER_LINE = re.compile(r"(?i)^\W*" + re.escape(REPLY_MARKER) + r"\W*$")
#: Where Outlook's quote of the mail answered begins, quoted without ``>`` (its "Original Message"
#: separator in the languages the service reads, or the rule of underscores above its header block).
_OUTLOOK_SEPARATOR = re.compile(
    r"(?i)^(?:-{4,} ?(?:original message|message d'origine|ursprüngliche nachricht|mensaje original|"
    r"messaggio originale|oorspronkelijk bericht) ?-{4,}|_{20,})$"
)
#: Attributions, for the look-back above a quote: those the reply parser misses (Spanish ones: its pattern
#: wants two spaces before "escribió"; German Gmail app's "… schrieb am …:") and the others' one-line forms.
#: Each is anchored at its first word, so that the shortest joined lines that read as one are dropped, and
#: no line of the writer's above them.
_ATTRIBUTION = re.compile(
    r"(?i)^(?:el\s.+\sescribió|on\s.+\swrote|le\s.+\sa\s+écrit|am\s.+\sschrieb\s.*|.+\sschrieb am\s.+)\s*:$"
)
#: A mail client's own line under a reply ("Sent from my iPhone", "Get Outlook for Android"), in the
#: languages the service reads.
_SENT_FROM = re.compile(
    r"(?i)^(?:sent from my\b|get outlook for\b|envoyé de mon\b|envoyé depuis\b|obtenir outlook pour\b|"
    r"von meinem\b.*\bgesendet$|gesendet von\b|outlook für\b.*\bherunterladen$|enviado desde\b|"
    r"obtener outlook para\b|sent with fairemail\b|sent from my android device with k-9 mail\b)"
)


def own_lines(lines: Sequence[str], settings: InboundSettings | None = None) -> list[str]:
    """The lines the writer of a reply wrote themselves, in one pass over ``lines`` (the whole text: its
    length is bounded by the mail's size): without the lines quoted with ``>``, the attribution above each
    quote (one line, or up to three when the client wrapped it: Gmail's "Le mar. 3 mars 2026 à 10:12, … a" then
    "écrit :"), the "Sent from my …" lines, and what follows an unquoted "reply above this line" marker or an
    Outlook quote separator. Collects at most ``settings.reply_lines`` lines and ``reply_chars`` characters.

    >>> own_lines(["conquer 3", "", "On Tue, 3 Mar 2026, Small World", "wrote:", "", "> Your turn", "> ..."])
    ['conquer 3', '']
    >>> own_lines(["Le 3 mars 2026 à 10:12, Small World a écrit :", "> Hello", "", "end", "", "Envoyé de mon iPhone"])
    ['', 'end', '']
    """
    settings = settings or InboundSettings()
    kept: list[str] = []
    chars = quotes = 0
    quoting = False
    for raw in lines:
        line = raw.strip()
        if line.startswith(">"):
            if not quoting and quotes < settings.reply_lines:  # a reply has a few quotes: a bound on the look-backs
                _drop_attribution(kept, settings)
                quotes += 1
            quoting = True
            continue
        quoting = False
        if _MARKER_LINE.match(line) or _OUTLOOK_SEPARATOR.match(line):
            break
        if _SENT_FROM.match(line):
            if kept and kept[-1].strip() == "--":  # the signature's separator goes with it
                kept.pop()
            continue
        kept.append(raw.rstrip())
        chars += len(raw) + 1
        if len(kept) >= settings.reply_lines or chars >= settings.reply_chars:
            break
    return kept


def _drop_attribution(kept: list[str], settings: InboundSettings) -> None:
    """Drop from the end of ``kept`` the attribution a quote starts under (blank lines may stand between):
    the last line, or the last two or three joined (Gmail wraps a long one: the sender's address may stand on
    a line of its own), when they read as one in a client's form."""
    end = len(kept)
    while end and not kept[end - 1].strip():
        end -= 1
    last = [line.strip() for line in kept[max(0, end - 3) : end]]
    if not last or any(len(line) > settings.long_line for line in last):
        return
    for count in (1, 2, 3):
        if count > len(last):
            return
        joined = " ".join(last[-count:])
        if _ATTRIBUTION.match(joined) or _reply_parser_header().match(joined):
            del kept[end - count :]
            return


def _reply_parser_header() -> re.Pattern[str]:
    """The reply parser's own pattern of quote headers, in every language it is given."""
    pattern = getattr(_PARSERS, "header", None)
    if pattern is None:
        pattern = _PARSERS.header = _reply_parser().read(text="").HEADER_REGEX
    return pattern


_PARSERS = threading.local()


def _reply_parser() -> EmailReplyParser:
    """This thread's reply parser (making one compiles its patterns: a few milliseconds)."""
    parser = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = EmailReplyParser(languages=REPLY_LANGUAGES)
    return parser


def _plain_text(message: EmailMessage, settings: InboundSettings) -> str:
    """The text of the mail's plain-text part (else its HTML's, a blockquote's place kept as a ``>`` line), its
    first ``settings.quote_chars`` characters cut at the end of a line, read in linear time."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = str(part.get_content())
    except (LookupError, ValueError, AssertionError):  # an unknown charset or a broken encoding
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if len(content) > settings.quote_chars:
        content = content[: settings.quote_chars]
        content = content[: content.rfind("\n") + 1] if "\n" in content else content
    if part.get_content_type() == "text/html":
        content = _without_elements(content, ("script", "style", "title", "head"), instead="")
        content = _without_elements(content, ("blockquote",), instead="\n>\n")
        content = re.sub(r"(?i)<br\s*/?>|</p>|</div>|</li>|<hr\b[^>]*>", "\n", content)
        content = html.unescape(re.sub(r"<[^<>]*>", "", content))  # stops at the next "<": linear
    return content


def _without_elements(content: str, names: Sequence[str], *, instead: str = "") -> str:
    """``content`` (HTML) with the elements named and what they hold (nested ones too) replaced by
    ``instead``, in one pass over their tags (a regular expression with a lazy ``.*?`` would be quadratic on
    many opening tags). One left open runs to the end.

    >>> _without_elements("a<style>x</style>b<blockquote>quoted", ("style", "blockquote"))
    'ab'
    >>> _without_elements("a<blockquote>x<blockquote>y</blockquote>z</blockquote>b", ("blockquote",), instead="|")
    'a|b'
    """
    # An opening tag is matched by its name alone, a closing one whole: no part of the pattern runs on to a
    # ``>`` that may never come (quadratic on many unclosed tags).
    alternatives = "|".join(names)
    tags = re.compile(rf"(?i)<(?:({alternatives})\b|/({alternatives})\s*>)")
    kept, at, open_name, depth = [], 0, "", 0
    for tag in tags.finditer(content):
        closing, name = tag.group(2) is not None, (tag.group(1) or tag.group(2)).lower()
        if not depth:
            if not closing:
                kept.append(content[at : tag.start()])
                kept.append(instead)
                open_name, depth = name, 1
            continue
        if name == open_name:
            depth += -1 if closing else 1
            if not depth:
                at = tag.end()
    kept.append(content[at:] if not depth else "")
    return "".join(kept)


def _carry_out(
    session: Session, game_id: int, seat: int, step: str, read: grammar.Orders, links: LinkMaker, now: datetime
) -> _Answer:
    """Apply the orders in turn through ``play.submit_action``, for the step ``step`` only (ARCHITECTURE §10: a
    reply address names one step); stop at the first that fails, or as soon as that step is over."""
    answer = _Answer("orders")
    names: list[str] = []
    for index, order in enumerate(read.orders):
        if order.problem:
            answer.failed, answer.reason = order.text, order.problem
            answer.not_tried = [o.text for o in read.orders[index + 1 :]]
            return answer
        done_before = len(answer.done)
        for intent in grammar.intents(order):
            for _ in range(MAX_STEPS_PER_ORDER):
                game = session.get(Game, game_id)
                assert game is not None
                session.refresh(game)
                state = play.load_state(game)
                if game.step_key != step:
                    # The step answered is over (a defender's redeployment ended, the turn passed): the rest of
                    # the reply was written for it, not for the next step, even one that awaits the same seat.
                    _step_over(answer, step, state, seat, order, read.orders[index + 1 :], done_before)
                    return answer
                if not names:
                    names = seat_names(state, {s.seat: s.display_name for s, _ in seats_of(session, game_id)})
                action = None
                try:
                    action = intent.next_action(state, seat, names)
                    if action is None:
                        break
                    result = play.submit_action(session, game_id, seat, action.to_json(), game.version, links, now=now)
                except (rules.IllegalAction, DomainError) as refusal:
                    session.rollback()
                    answer.failed, answer.reason = order.text, _why(refusal) + _cost_of(state, action)
                    answer.not_tried = [o.text for o in read.orders[index + 1 :]]
                    return answer
                after = play.load_state(result.game)
                answer.done.append(rules.tell(state, after, action, names, viewer=seat))
                if not intent.repeats:
                    break
    return answer


def _step_over(
    answer: _Answer,
    step: str,
    state: rules.GameState,
    seat: int,
    order: grammar.Order,
    later: Sequence[grammar.Order],
    done_before: int,
) -> None:
    """Note in ``answer`` what of a reply was left when the step it answered ended: the order under way if
    it would have gone on into the next step, and the orders not reached. Nothing when nothing was left."""
    started = len(answer.done) > done_before
    left = ([] if started else [order.text]) + [o.text for o in later]
    cut = order.text if started and seat in rules.awaiting(state) else None
    if left or cut:
        answer.step_over = "redeployment" if step.rsplit(":", 1)[-1] != "-" else "turn"
        answer.left, answer.cut = left, cut


def _cost_of(state: rules.GameState, action: rules.Action | None) -> str:
    """For a conquest refused, what the region costs and why (``rules.explain``'s breakdown), else ""."""
    if action is None or action.region is None:
        return ""
    try:
        cost = rules.explain(state, action).cost
    except (rules.IllegalAction, ValueError):
        return ""
    if cost is None or cost.refusal is not None:
        return ""
    return f" ({rules.region_name(state, action.region)} costs {cost} tokens)"


def _why(refusal: Exception) -> str:
    message = refusal.message if isinstance(refusal, DomainError) else str(refusal)
    return message or "The rules refuse it"


def _summary(answer: _Answer) -> str:
    parts = [answer.answered, f"{len(answer.done)} step(s) done"]
    if answer.failed:
        parts.append(f"failed: {answer.failed!r}: {answer.reason}")
    if answer.step_over:
        parts.append(f"the {answer.step_over} ended: {len(answer.left)} order(s) not applied")
    return "; ".join(parts)


def _answer(
    session: Session,
    game: Game,
    seat: Seat,
    player: Player,
    inbound_id: int,
    answer: _Answer,
    mail: _Mail,
) -> bool:
    """Queue the answer mail, a reply to the player's own (the address's answers this hour were counted
    before: ``_may_answer``). Returns whether it did."""
    state = rules.read_state(game.state) if game.state else None
    names = {s.seat: s.display_name for s, _ in seats_of(session, game.id or 0)}
    awaited = state is not None and game.status == GameStatus.ACTIVE and seat.seat in rules.awaiting(state)
    finished = state is not None and state.over
    sent_by = mail.sender if mail.sender and mail.sender.lower() != player.email.lower() else None
    answer_mail = OrdersAnswer.to_seat(
        game,
        seat,
        seat=seat.seat,
        inbound_id=inbound_id,
        answered=answer.answered,
        done=answer.done,
        failed=answer.failed,
        reason=answer.reason,
        not_tried=answer.not_tried,
        step_over=answer.step_over,
        cut=answer.cut,
        left=answer.left,
        stopped_at=answer.stopped_at,
        grammar=answer.grammar,
        **(orders_of(state, seat.seat, names) if awaited and state else {}),
        step_key=game.step_key if awaited else None,
        # The reader's own coins only (ARCHITECTURE §4); everyone's are in the final table once it is over.
        coins=state.players[seat.seat].coins if state is not None and not finished else None,
        board=board_summary(state, names, seat.seat) if state is not None else None,
        turn=state.turn if state is not None else 0,
        turns=state.turns if state is not None else 0,
        # The answer replies to the player's own mail; to a mail from another address (which the seat's owner
        # never saw) it follows the game's thread, and says who sent it.
        their_message_id=None if sent_by else mail.message_id,
        their_references=[] if sent_by else list(mail.references),
        their_subject=None if sent_by else mail.subject or None,
        sent_by=sent_by,
    )
    return queue_mail(session, player, answer_mail, now=mail.now)


def _talk(session: Session, mail: _Mail, text: str, address: str, game: Game, seat: Seat, player: Player) -> Outcome:
    """A reply to a table-talk mail: its own text (quote and signature cut off) is posted at the game's
    table from the seat the reply address names (``table_talk.post_message``, which mails it on)."""
    claimed = _claim(session, mail, address, InboundKind.TALK, game, seat.seat, player)
    if claimed is None:
        return Outcome(InboundKind.TALK, "this mail was read before: nothing done again", duplicate=True)
    row, row_id = claimed, claimed.id or 0
    text = text.strip()
    try:
        posted = table_talk.post_message(
            session, game, seat.seat, text, MessageSource.MAIL, now=mail.now, source_key=mail.identity[:200]
        )
        outcome = f"posted at the table (message {posted.id})"
    except DomainError as refusal:
        session.rollback()
        outcome = f"not posted: {refusal.message}"
    row = session.get(InboundMail, row_id) or row
    row.outcome = outcome[:1000]
    session.add(row)
    session.commit()
    log(logger, logging.INFO, "inbound.talk", game=game.id, seat=seat.seat, outcome=outcome[:200])
    return _outcome(row, InboundKind.TALK, outcome)


# -- a bounce ------------------------------------------------------------------------------------------------
def _bounce_recipients(
    message: Message, recipients: Sequence[str], domain: str, settings: InboundSettings
) -> list[str]:
    """The addresses of the shape of our bounce addresses (``service.domain.bounces``) the mail came to: the
    envelope's, else its headers'."""
    if recipients:
        candidates: Iterable[str] = recipients[: settings.max_recipients]
    else:
        values = [str(v)[:4_000] for name in RECIPIENT_HEADERS for v in (message.get_all(name) or [])[:10]]
        candidates = [address for _, address in getaddresses(values)][: settings.max_recipients]
    return [address for address in candidates if bounces.is_bounce_address(address, domain)]


def _bounce(
    session: Session,
    mail: _Mail,
    report: Message,
    to: list[str],
    addresses: bounces.BounceAddresses,
    links: LinkMaker,
) -> Outcome:
    """A delivery report (``service.domain.bounces``): read only when it came to the valid bounce address of a row
    that was sent; it marks that row's recipient when it says delivery failed for good."""
    try:
        row = _record(session, mail, "", InboundKind.BOUNCE)
        session.flush()
    except IntegrityError:
        session.rollback()
        return Outcome(InboundKind.BOUNCE, "this bounce was read before", duplicate=True)
    rows = bounces.rows_bounced_to(addresses, to)
    hard = bounces.hard_failure(report, bounced_addresses(report)) if rows else None
    marked: list[str] = []
    ignored: list[str] = []
    for row_id in rows:
        sent = bounces.sent_row(session, row_id)
        player = bounces.player_of(session, sent.to_email) if sent is not None else None
        if sent is None or player is None:
            ignored.append(f"row {row_id} was not sent to a player")
            continue
        if hard is None:
            ignored.append(f"row {row_id}: not a permanent failure")
            continue
        newly = player.bouncing_since is None
        player.bouncing_since = player.bouncing_since or mail.now
        player.bounce_reason = hard
        session.add(player)
        marked.append(player.email)
        if newly:
            _tell_hosts(session, player, hard, row.id or 0, links, mail.now)
    if not rows:
        outcome = "ignored: a delivery report to no valid bounce address of ours (it marks nobody)"
        log(logger, logging.WARNING, "inbound.bounce_ignored", via=mail.via, to=",".join(to)[:200] or "-")
    else:
        outcome = f"marked {', '.join(marked)} as bouncing ({hard})" if marked else "no address marked"
        if ignored:
            outcome += "; " + "; ".join(ignored)
    row.outcome = outcome[:1000]
    session.add(row)
    session.commit()
    log(logger, logging.INFO, "inbound.bounce", marked=len(marked), rows=len(rows), ignored=len(ignored))
    return _outcome(row, InboundKind.BOUNCE, row.outcome)


def _tell_hosts(
    session: Session, player: Player, reason: str, inbound_id: int, links: LinkMaker, now: datetime
) -> None:
    """Tell the host of every game the player holds a seat in, that is not over, that their mail bounces."""
    running = (GameStatus.INVITING, GameStatus.ACTIVE, GameStatus.PAUSED)
    rows = session.exec(
        select(Seat, Game)
        .join(Game, col(Game.id) == col(Seat.game_id))
        .where(Seat.player_id == player.id, Seat.removed == sa.false(), col(Game.status).in_(running))
    ).all()
    for seat, game in rows:
        host = session.exec(select(Player).where(Player.email == game.host_email)).first()
        if host is None or host.id == player.id:
            continue
        alert = BounceAlert.to_seat(
            game,
            seat,
            seat=seat.seat,
            address=player.email,
            reason=reason,
            admin_url=links.admin_url(game.id or 0, game.admin_secret),
            inbound_id=inbound_id,
        )
        queue_mail(session, host, alert, now=now)


# -- mail to no reply address --------------------------------------------------------------------------------
#: The role addresses of the inbound domain whose mail goes to the operator (RFC 2142).
ROLE_ADDRESSES = ("postmaster", "abuse")


def _role_address(message: Message, recipients: Sequence[str], domain: str, settings: InboundSettings) -> str | None:
    """The first ``postmaster@`` or ``abuse@`` the inbound domain the mail came to, or None."""
    for address in _recipients(message, recipients, settings):
        local, _, at = address.lower().rpartition("@")
        if at == domain.lower() and local in ROLE_ADDRESSES:
            return address.lower()
    return None


def _forward(
    session: Session,
    raw: bytes,
    mail: _Mail,
    address: str,
    links: LinkMaker,
    settings: InboundSettings,
    domain: str,
) -> Outcome:
    """Forward a mail to a role address to the operator's (``settings.operator_email``): who sent it, its
    subject, its text; at most ``answers_per_hour`` an hour from one sender, never one from our own domains
    (a forward of a forward: a loop, were the operator's address one of ours). Recorded either way."""
    if mail.sender.rpartition("@")[2].lower() in (domain.lower(), mail_domain()):
        return _note(session, mail, address, InboundKind.FORWARDED, "not forwarded: sent from our own domain")
    if settings.operator_email is None:
        why = "to a role address; no operator address to forward it to (SMALLWORLD_OPERATOR_EMAIL)"
        log(logger, logging.WARNING, "inbound.role_unforwarded", address=address)
        return _note(session, mail, address, InboundKind.FORWARDED, why)
    if _answered_this_hour(session, mail, InboundKind.FORWARDED) >= settings.answers_per_hour:
        return _note(session, mail, address, InboundKind.FORWARDED, "not forwarded: its sender's forwards this hour")
    message = parse_message(raw, settings, mail.budget)
    text = _plain_text(message, replace(settings, quote_chars=FORWARDED_CHARS))
    try:
        row = _record(session, mail, address, InboundKind.FORWARDED, outcome=f"forwarded to {settings.operator_email}")
    except IntegrityError:
        session.rollback()
        return Outcome(InboundKind.FORWARDED, "this mail was read before: nothing done again", duplicate=True)
    forward = OperatorForward(
        address=address,
        sender=mail.sender or "(no sender)",
        their_subject=mail.subject or "(no subject)",
        received_at=mail.now.strftime("%Y-%m-%d %H:%M UTC"),
        text=text.strip() or "(no text)",
        inbound_id=row.id or 0,
        admin_url=links.url("/admin/games"),
    )
    row.answered = queue_mail(session, settings.operator_email, forward, now=mail.now)
    session.add(row)
    session.commit()
    log(logger, logging.INFO, "inbound.forwarded", address=address)
    return _outcome(row, InboundKind.FORWARDED, row.outcome, answered=row.answered)


def _not_read(
    session: Session,
    mail: _Mail,
    address: str,
    why: str,
    links: LinkMaker,
    settings: InboundSettings,
    domain: str,
    *,
    expired: bool = False,
    answer: bool = True,
) -> Outcome:
    """Record a mail to no valid reply address of ours, and tell its sender that it was not read and how to
    play (``NotRead``): not a sender of our own domains (no loop), at most ``answers_per_hour`` an hour to
    one address. (Automatic mail and reports never come this far.)"""
    try:
        row = _record(session, mail, address, InboundKind.UNMATCHED, outcome=why)
    except IntegrityError:
        session.rollback()
        return Outcome(InboundKind.UNMATCHED, f"{why} (read before)", duplicate=True)
    sender_domain = mail.sender.rpartition("@")[2].lower()
    if (
        answer
        and "@" in mail.sender
        and sender_domain not in (domain.lower(), mail_domain())
        and _answered_this_hour(session, mail, InboundKind.UNMATCHED) < settings.answers_per_hour
    ):
        told = NotRead(address=address or domain, inbound_id=row.id or 0, expired=expired, guide_url=links.url(GUIDE))
        row.answered = queue_mail(session, mail.sender, told, now=mail.now)
    session.add(row)
    session.commit()
    return _outcome(row, InboundKind.UNMATCHED, why, answered=row.answered)


def _answered_this_hour(session: Session, mail: _Mail, kind: InboundKind) -> int:
    """The mails of ``kind`` from the mail's sender answered (or forwarded) in the hour before it."""
    return session.exec(
        select(sa.func.count())
        .select_from(InboundMail)
        .where(
            sa.func.lower(InboundMail.sender) == mail.sender.lower(),
            col(InboundMail.kind) == kind,
            col(InboundMail.answered) == sa.true(),
            col(InboundMail.received_at) >= mail.now - timedelta(hours=1),
        )
    ).one()


#: The site's guide (how a game goes, how to play it by mail).
GUIDE = "/how-to-play"


# -- a reply to an invitation ----------------------------------------------------------------------------------
def _invitation_answered(session: Session, message: Message) -> OutboxMail | None:
    """The invitation a mail answers, by its ``In-Reply-To`` and ``References`` (the ``Message-ID`` of the
    invitation sent: random, known only to whom it was sent), or None."""
    named = _MESSAGE_ID.findall(_header(message, "In-Reply-To", 2_000) + " " + _header(message, "References", 8_000))
    if not named:
        return None
    return session.exec(
        select(OutboxMail)
        .where(col(OutboxMail.message_id).in_(named[-20:]), OutboxMail.template == Invitation.template)
        .order_by(col(OutboxMail.id).desc())
    ).first()


#: Words that take a seat, on a reply's first line ("Yes, count me in!", "Oui", "Ja, gerne").
_YES = re.compile(
    r"(?i)^\W*(?:yes|yep|yeah|sure|ok(?:ay)?|join|i'?m in|i am in|count me in|accept(?:ed)?|oui|d'accord|"
    r"volontiers|ja|gerne|klar|sí|si|claro|vale)\b"
)


def says_yes(text: str) -> tuple[bool, str | None]:
    """Whether a reply's own text takes the seat it answers (its first line that is no greeting opens with a
    "yes"), and that line.

    >>> says_yes("Hi there,\\n\\nYes, count me in!"), says_yes("Count me in"), says_yes("Which night?")
    ((True, 'Yes, count me in!'), (True, 'Count me in'), (False, 'Which night?'))
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and grammar.is_greeting(lines[0]) and len(lines) > 1:
        lines = lines[1:]
    first = lines[0][:200] if lines else None
    return bool(first and _YES.match(first)), first


def _invitation_reply(
    session: Session, raw: bytes, mail: _Mail, invitation: OutboxMail, links: LinkMaker, settings: InboundSettings
) -> Outcome:
    """A reply to an invitation: the seat taken if it comes from the invited address, says "yes", and the
    invitation is still open; else the invited address is told why not and how (``InvitationAnswer``), never
    the ``From`` of the mail."""
    context = invitation.context or {}
    seat_no = context.get("seat")
    seat = session.exec(
        select(Seat).where(Seat.game_id == invitation.game_id, Seat.seat == seat_no).order_by(col(Seat.id))
    ).first()
    player = session.get(Player, invitation.player_id) if invitation.player_id is not None else None
    game = session.get(Game, invitation.game_id) if invitation.game_id is not None else None
    if seat is None or player is None or game is None:
        return _note(session, mail, "", InboundKind.UNMATCHED, "a reply to an invitation whose seat is gone")
    try:
        row = _record(session, mail, "", InboundKind.INVITATION, game_id=game.id, seat=seat.seat, player_id=player.id)
        session.commit()
    except IntegrityError:
        session.rollback()
        return Outcome(InboundKind.INVITATION, "this mail was read before: nothing done again", duplicate=True)
    row_id = row.id or 0
    message = parse_message(raw, settings, mail.budget)
    yes, first_line = says_yes(reply_text(message, settings, mail.budget))
    still_open = (
        game.status == GameStatus.INVITING
        and seat.accepted_at is None
        and not seat.removed
        and seat.player_id == player.id
        and context.get("seat_secret") in (None, seat.secret)
    )
    started = False
    if mail.sender.lower() != player.email.lower():
        outcome: InvitationOutcome = "other_address"
    elif not still_open:
        outcome = "closed"
    elif not yes:
        outcome = "how"
    else:
        try:
            game = lobby.accept_invitation(session, game.id or 0, seat.seat, links, now=mail.now)
            outcome, started = "accepted", game.status == GameStatus.ACTIVE
        except DomainError:
            session.rollback()
            outcome = "closed"
    answered = _may_answer(session, seat, settings, mail.now)
    if answered:
        told = InvitationAnswer.to_seat(
            game,
            seat,
            seat=seat.seat,
            inbound_id=row_id,
            outcome=outcome,
            sent_by=mail.sender if outcome == "other_address" else None,
            started=started,
            first_line=first_line if outcome == "how" else None,
            guide_url=links.url(GUIDE),
        )
        answered = queue_mail(session, player, told, now=mail.now)
    row = session.get(InboundMail, row_id) or row
    row.outcome = f"invitation: {outcome}"
    row.answered = answered
    session.add(row)
    session.commit()
    log(logger, logging.INFO, "inbound.invitation", game=game.id, seat=seat.seat, outcome=outcome)
    return _outcome(row, InboundKind.INVITATION, row.outcome, answered=answered)


# -- records ---------------------------------------------------------------------------------------------------
def _record(
    session: Session, mail: _Mail, address: str, kind: InboundKind, *, outcome: str = "", **fields: Any
) -> InboundMail:
    """A mail's row for one address it came to, keyed by its identity and that address (flushed, not committed)."""
    key = hashlib.sha256(f"{mail.identity}\n{address}".encode()).hexdigest()
    row = InboundMail(
        message_key=key,
        via=mail.via,
        kind=kind,
        sender=mail.sender,
        outcome=outcome[:1000],
        received_at=mail.now,
        **fields,
    )
    session.add(row)
    session.flush()
    return row


def _claim(
    session: Session, mail: _Mail, address: str, kind: InboundKind, game: Game, seat: int, player: Player
) -> InboundMail | None:
    """Record a mail for a seat and commit it, so that it is read once: its row, or ``None`` when the same mail
    (identity and address) was recorded before."""
    try:
        row = _record(session, mail, address, kind, game_id=game.id, seat=seat, player_id=player.id)
        session.commit()
    except IntegrityError:
        session.rollback()
        return None
    return row


def _note(session: Session, mail: _Mail, address: str, kind: InboundKind, why: str) -> Outcome:
    """Record a mail that is only noted (an automatic answer, no reply address of ours): read once."""
    try:
        row = _record(session, mail, address, kind, outcome=why)
        session.commit()
    except IntegrityError:
        session.rollback()
        return Outcome(kind, f"{why} (read before)", duplicate=True)
    return _outcome(row, kind, why)


def _refuse(
    session: Session, raw: bytes, address: str, mail: _Mail, refusal: Refusal, why: str, *, seat: Seat | None = None
) -> Outcome:
    """Record a mail refused unread, under a key of this attempt's own: handed in again, it is read again
    (a refusal for now may pass later; one for good is refused again alike)."""
    identity = f"refused:{hashlib.sha256(raw).hexdigest()}:{mail.now.isoformat()}"
    fields = {"game_id": seat.game_id, "seat": seat.seat, "player_id": seat.player_id} if seat is not None else {}
    outcome = f"refused ({refusal}): {why}"
    try:
        refused = replace(mail, identity=identity)
        row = _record(session, refused, address, InboundKind.REFUSED, outcome=outcome, **fields)
        session.commit()
    except IntegrityError:
        session.rollback()
        return Outcome(InboundKind.REFUSED, outcome, refusal=refusal)
    return Outcome(InboundKind.REFUSED, outcome, row.id, refusal=refusal)


def _outcome(row: InboundMail, kind: InboundKind, detail: str, *, answered: bool = False) -> Outcome:
    return Outcome(kind, detail, row.id, answered=answered)
