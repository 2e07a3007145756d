"""Mail that comes in (DESIGN §10): orders by reply, replies to table talk, bounces and automatic answers.

Two ways in, one code path: the SMTP/LMTP listener (``service.infra.inbound_server``) and ``POST
/inbound/mail`` (``service.web.inbound_mail``) both hand the raw message to :func:`receive`, which
commits what it does and never raises for a bad mail: each outcome is a row of ``inbound_mail``.

- A reply is matched by the address it was sent to: the signed per-seat, per-step ``Reply-To`` of the
  mail it answers (``service.domain.links.ReplyAddresses``), never by its ``From``. Mail to no valid reply
  address is recorded and left unanswered (it may be forged, or spam: an answer would be backscatter).
- The same mail delivered twice (an MTA's retry; both ways in) is read once: its ``Message-ID`` and the
  address it came to are unique in ``inbound_mail``.
- Automatic mail is never read as orders and never answered (no mail loops): RFC 3834 ``Auto-Submitted``
  (anything but ``no``), ``Precedence: bulk``/``junk``/``list``/``auto_reply``, ``X-Autoreply`` and its
  kin, an empty envelope sender, reports (``multipart/report``: delivery status notifications, read
  receipts). A delivery status notification (RFC 3464) that says delivery failed marks the failed
  address as bouncing and tells the hosts of its running games (``BounceAlert``).
- The reply's own text is read (quoted text and signature stripped by mail-parser-reply), its first
  lines as orders (``rules.orders``), each applied in turn through the same domain operation as the turn
  page (``play.submit_action``); reading stops at the first order that fails. The answer
  (``OrdersAnswer``) says what was done, what failed and why, what may be done from there, and shows the
  board. A reply to a step that is over changes nothing and says so.
- Answers are limited per address and hour (``SMALLWORLD_INBOUND_ANSWERS_PER_HOUR``); orders beyond the
  limit are still carried out.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import html
import logging
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.message import EmailMessage, Message
from email.utils import getaddresses, parseaddr
from typing import Any

import sqlalchemy as sa
from mailparser_reply import EmailReplyParser
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, col, select

import rules
from emails.messages import BounceAlert, OrdersAnswer, StepOver
from rules import orders as grammar
from service.domain import play, table_talk
from service.domain.errors import DomainError
from service.domain.games import seats_of
from service.domain.links import LinkMaker, ReplyAddresses, ReplyToken
from service.domain.models import (
    Game,
    GameStatus,
    InboundKind,
    InboundMail,
    MessageSource,
    Player,
    Seat,
    SeatController,
    utcnow,
)
from service.domain.outbox import queue_mail
from service.domain.turn_mail import board_summary, seat_names
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
    max_bytes: int = 1_000_000
    answers_per_hour: int = 30

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> InboundSettings:
        return cls(
            max_bytes=int(config["INBOUND_MAX_BYTES"]),
            answers_per_hour=int(config["INBOUND_ANSWERS_PER_HOUR"]),
        )


@dataclass
class Outcome:
    """What became of one mail (for one reply address it came to)."""

    kind: InboundKind
    detail: str
    inbound_id: int | None = None
    answered: bool = False
    #: The same mail was read before: nothing done again.
    duplicate: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": str(self.kind),
            "detail": self.detail,
            "answered": self.answered,
            "duplicate": self.duplicate,
        }


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
    Raises only :class:`TooLarge` and :class:`Unavailable`; anything else a mail causes is recorded.
    """
    if len(raw) > settings.max_bytes:
        raise TooLarge(f"The mail is larger than {settings.max_bytes} bytes")
    now = now or utcnow()
    try:
        return _receive(session, raw, links, replies, settings, via, recipients, envelope_sender, now)
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
            return [_note(session, identity, "", via, InboundKind.MALFORMED, "", why, now)]
        except Exception:
            session.rollback()
            return [Outcome(InboundKind.MALFORMED, why)]


def _receive(
    session: Session,
    raw: bytes,
    links: LinkMaker,
    replies: ReplyAddresses,
    settings: InboundSettings,
    via: str,
    recipients: Sequence[str],
    envelope_sender: str | None,
    now: datetime,
) -> list[Outcome]:
    message = parse_message(raw)
    sender = _sender(message)
    message_id = str(message.get("Message-ID", "") or "").strip()[:998]
    identity = message_id or hashlib.sha256(raw).hexdigest()

    failed = bounced_addresses(message)
    if failed is not None:
        return [_bounce(session, message, identity, failed, links, via, sender, now)]
    automatic = automatic_reason(message, envelope_sender)
    if automatic:
        return [_note(session, identity, "", via, InboundKind.AUTO_REPLY, sender, automatic, now)]

    tokens = _tokens(message, recipients, replies)
    if not tokens:
        return [_note(session, identity, "", via, InboundKind.UNMATCHED, sender, "no reply address of ours", now)]
    outcomes = []
    for address, token in tokens:
        outcomes.append(_reply(session, message, identity, address, token, links, replies, settings, via, sender, now))
    return outcomes


def parse_message(raw: bytes) -> EmailMessage:
    """The mail, parsed leniently (``email`` records defects instead of failing)."""
    parsed: EmailMessage = email.message_from_bytes(raw, policy=email.policy.default)
    return parsed


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
    submitted = str(message.get("Auto-Submitted", "") or "").strip().lower()
    if submitted and submitted.split(";")[0].strip() != "no":
        return f"Auto-Submitted: {submitted[:60]}"
    precedence = str(message.get("Precedence", "") or "").strip().lower()
    if precedence in _PRECEDENCE:
        return f"Precedence: {precedence}"
    for name in _AUTOMATIC_HEADERS:
        if message.get(name) is not None:
            return f"{name} header"
    if message.get_content_type() == "multipart/report":
        return f"a report ({message.get_param('report-type') or 'unknown type'})"
    if str(message.get("X-Auto-Response-Suppress", "") or "").strip().lower() in ("all", "oof"):
        return "an automatic answer (X-Auto-Response-Suppress)"
    if envelope_sender is not None and envelope_sender.strip("<> ") == "":
        return "an empty envelope sender (a bounce or an automatic mail)"
    local = parseaddr(str(message.get("From", "") or ""))[1].split("@")[0].lower()
    if local in ("mailer-daemon", "postmaster"):
        return f"sent by {local}"
    return None


def bounced_addresses(message: Message) -> list[tuple[str, str]] | None:
    """The addresses a delivery status notification (RFC 3464) says delivery failed for, with the reason:
    ``None`` if ``message`` is not a DSN (an empty list: a DSN that reports no failure, e.g. "delayed")."""
    if message.get_content_type() != "multipart/report":
        return None
    if str(message.get_param("report-type") or "").lower() != "delivery-status":
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
            diagnostic = " ".join(str(block.get("Diagnostic-Code", "") or "").split(";", 1)[-1].split())
            if "@" in address:
                failed.append((address, (diagnostic or f"status {status or 'failed'}")[:300]))
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
def _tokens(message: Message, recipients: Sequence[str], replies: ReplyAddresses) -> list[tuple[str, ReplyToken]]:
    """The reply addresses of ours the mail came to (the envelope's, else its headers'), once each."""
    if recipients:
        candidates: Iterable[str] = recipients
    else:
        values = [str(v) for name in RECIPIENT_HEADERS for v in (message.get_all(name) or [])]
        candidates = [address for _, address in getaddresses(values)]
    found: dict[str, tuple[str, ReplyToken]] = {}
    for address in candidates:
        token = replies.read(address)
        if token is not None:
            found.setdefault(address.strip("<> ").lower(), (address.strip("<> ").lower(), token))
    return list(found.values())


def _sender(message: Message) -> str:
    return parseaddr(str(message.get("From", "") or ""))[1][:320]


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
    message: EmailMessage,
    identity: str,
    address: str,
    token: ReplyToken,
    links: LinkMaker,
    replies: ReplyAddresses,
    settings: InboundSettings,
    via: str,
    sender: str,
    now: datetime,
) -> Outcome:
    seat_row = session.exec(select(Seat).where(Seat.game_id == token.game_id, Seat.seat == token.seat)).first()
    if seat_row is None or seat_row.removed or not replies.verify(token, seat_row.secret):
        # Forged, cut short, or signed for a seat that changed hands since: not ours to answer.
        why = "the reply address is not valid (or its seat changed hands)"
        return _note(session, identity, address, via, InboundKind.UNMATCHED, sender, why, now)
    game = session.get(Game, token.game_id)
    player = session.get(Player, seat_row.player_id)
    assert game is not None and player is not None
    if token.step_key is None:
        return _talk(session, message, identity, address, game, seat_row, player, via, sender, now)
    claimed = _claim(session, identity, address, via, InboundKind.ORDERS, sender, game, seat_row.seat, player, now)
    if claimed is None:
        return Outcome(InboundKind.ORDERS, "this mail was read before: nothing done again", duplicate=True)
    row, row_id = claimed, claimed.id or 0

    text = reply_text(message)
    read = grammar.parse(text)
    if game.status != GameStatus.ACTIVE:
        answer = _Answer("not_running")
        kind = InboundKind.LATE
    elif seat_row.controller == SeatController.BOT:
        # The house bot plays the seat (DESIGN §10): its person takes it back from their page, not by mail.
        answer = _Answer("bot_seat")
        kind = InboundKind.LATE
    elif game.step_key != token.step_key:
        answer = _Answer("late")
        kind = InboundKind.LATE
    elif not read.orders:
        answer = _Answer("no_orders", stopped_at=read.stopped_at, grammar=grammar.grammar())
        kind = InboundKind.ORDERS
    else:
        answer = _carry_out(session, game.id or 0, seat_row.seat, token.step_key, read, links, now)
        answer.stopped_at = read.stopped_at
        kind = InboundKind.ORDERS
    game = session.get(Game, token.game_id)
    assert game is not None
    session.refresh(game)
    summary = _summary(answer)
    answered = _answer(session, game, seat_row, player, row_id, answer, links, settings, now)
    row = session.get(InboundMail, row_id) or row
    # The player answered: their address works.
    session.refresh(player)
    if player.bouncing_since is not None:
        player.bouncing_since = None
        player.bounce_reason = None
        session.add(player)
    row.kind = kind
    row.outcome = summary[:1000]
    row.answered = answered
    session.add(row)
    session.commit()
    log(logger, logging.INFO, "inbound.reply", game=game.id, seat=seat_row.seat, kind=str(kind), outcome=summary[:200])
    return _outcome(row, kind, summary, answered=answered)


def reply_text(message: EmailMessage) -> str:
    """The reply's own text: its plain-text part (or its HTML as text), without the quoted mail it answers
    and without the signature (mail-parser-reply), and without lines quoted with ``>``."""
    text = _plain_text(message)
    try:
        parsed = _reply_parser().read(text=text)
        body = parsed.replies[0].body if parsed.replies else text
    except Exception:  # the parser's own trouble with a strange mail: read the text as it is
        body = text
    return "\n".join(line for line in body.splitlines() if not line.lstrip().startswith(">"))


_PARSERS = threading.local()


def _reply_parser() -> EmailReplyParser:
    """This thread's reply parser (making one compiles its patterns: a few milliseconds)."""
    parser = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = EmailReplyParser(languages=REPLY_LANGUAGES)
    return parser


def _plain_text(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = str(part.get_content())
    except (LookupError, ValueError, AssertionError):  # an unknown charset or a broken encoding
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if part.get_content_type() == "text/html":
        content = re.sub(r"(?is)<(script|style|blockquote).*?</\1>", "", content)
        content = re.sub(r"(?i)<br\s*/?>|</p>|</div>|</li>", "\n", content)
        content = html.unescape(re.sub(r"<[^>]+>", "", content))
    return content[:20_000]


def _carry_out(
    session: Session, game_id: int, seat: int, step: str, read: grammar.Orders, links: LinkMaker, now: datetime
) -> _Answer:
    """Apply the orders in turn through ``play.submit_action``, for the step ``step`` only (DESIGN §10: a
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
    links: LinkMaker,
    settings: InboundSettings,
    now: datetime,
) -> bool:
    """Queue the answer mail, unless the address had its answers for this hour. Returns whether it did."""
    since = now - timedelta(hours=1)
    answered = session.exec(
        select(sa.func.count())
        .select_from(InboundMail)
        .where(
            col(InboundMail.player_id) == player.id,
            col(InboundMail.answered) == sa.true(),
            col(InboundMail.received_at) >= since,
        )
    ).one()
    if answered >= settings.answers_per_hour:
        log(logger, logging.WARNING, "inbound.answer_limited", game=game.id, seat=seat.seat, answered=answered)
        return False
    state = rules.GameState.from_json(game.state) if game.state else None
    names = {s.seat: s.display_name for s, _ in seats_of(session, game.id or 0)}
    awaited = state is not None and game.status == GameStatus.ACTIVE and seat.seat in rules.awaiting(state)
    finished = state is not None and state.over
    mail = OrdersAnswer(
        game_id=game.id or 0,
        game_name=game.name,
        player_name=seat.display_name,
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
        orders=grammar.describe(state, seat.seat, seat_names(state, names)) if awaited and state else [],
        step_key=game.step_key if awaited else None,
        turn_url=links.turn_url(game.id or 0, seat.seat, seat.secret),
        # The reader's own coins only (DESIGN §4); everyone's are in the final table once it is over.
        coins=state.players[seat.seat].coins if state is not None and not finished else None,
        board=board_summary(state, names, seat.seat) if state is not None else None,
        turn=state.turn if state is not None else 0,
        turns=state.turns if state is not None else 0,
    )
    return queue_mail(session, player, mail, now=now)


def _talk(
    session: Session,
    message: EmailMessage,
    identity: str,
    address: str,
    game: Game,
    seat: Seat,
    player: Player,
    via: str,
    sender: str,
    now: datetime,
) -> Outcome:
    """A reply to a table-talk mail: its own text (quote and signature cut off) is posted at the game's
    table from the seat the reply address names (``table_talk.post_message``, which mails it on)."""
    claimed = _claim(session, identity, address, via, InboundKind.TALK, sender, game, seat.seat, player, now)
    if claimed is None:
        return Outcome(InboundKind.TALK, "this mail was read before: nothing done again", duplicate=True)
    row, row_id = claimed, claimed.id or 0
    text = reply_text(message).strip()
    try:
        posted = table_talk.post_message(
            session, game, seat.seat, text, MessageSource.MAIL, now=now, source_key=identity[:200]
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
def _bounce(
    session: Session,
    message: Message,
    identity: str,
    failed: list[tuple[str, str]],
    links: LinkMaker,
    via: str,
    sender: str,
    now: datetime,
) -> Outcome:
    try:
        row = _record(session, identity, "", via, InboundKind.BOUNCE, sender, outcome="", now=now)
        session.flush()
    except IntegrityError:
        session.rollback()
        return Outcome(InboundKind.BOUNCE, "this bounce was read before", duplicate=True)
    marked = []
    for address, reason in failed:
        player = session.exec(select(Player).where(sa.func.lower(Player.email) == address.lower())).first()
        if player is None:
            continue
        newly = player.bouncing_since is None
        player.bouncing_since = player.bouncing_since or now
        player.bounce_reason = reason
        session.add(player)
        marked.append(address)
        if newly:
            _tell_hosts(session, player, reason, row.id or 0, links, now)
    row.outcome = (f"marked {', '.join(marked)} as bouncing" if marked else "no address of a player failed")[:1000]
    session.add(row)
    session.commit()
    log(logger, logging.INFO, "inbound.bounce", marked=len(marked), reported=len(failed))
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
        alert = BounceAlert(
            game_id=game.id or 0,
            game_name=game.name,
            player_name=seat.display_name,
            seat=seat.seat,
            address=player.email,
            reason=reason,
            admin_url=links.admin_url(game.id or 0, game.admin_secret),
            inbound_id=inbound_id,
        )
        queue_mail(session, host, alert, now=now)


# -- records ---------------------------------------------------------------------------------------------------
def _record(
    session: Session,
    identity: str,
    address: str,
    via: str,
    kind: InboundKind,
    sender: str,
    *,
    outcome: str = "",
    now: datetime,
    **fields: Any,
) -> InboundMail:
    key = hashlib.sha256(f"{identity}\n{address}".encode()).hexdigest()
    row = InboundMail(
        message_key=key, via=via, kind=kind, sender=sender, outcome=outcome[:1000], received_at=now, **fields
    )
    session.add(row)
    session.flush()
    return row


def _claim(
    session: Session,
    identity: str,
    address: str,
    via: str,
    kind: InboundKind,
    sender: str,
    game: Game,
    seat: int,
    player: Player,
    now: datetime,
) -> InboundMail | None:
    """Record a mail for a seat and commit it, so that it is read once: its row, or ``None`` when the same mail
    (identity and address) was recorded before."""
    try:
        row = _record(
            session, identity, address, via, kind, sender, game_id=game.id, seat=seat, player_id=player.id, now=now
        )
        session.commit()
    except IntegrityError:
        session.rollback()
        return None
    return row


def _note(
    session: Session, identity: str, address: str, via: str, kind: InboundKind, sender: str, why: str, now: datetime
) -> Outcome:
    """Record a mail that is only noted (an automatic answer, no reply address of ours): read once."""
    try:
        row = _record(session, identity, address, via, kind, sender, outcome=why, now=now)
        session.commit()
    except IntegrityError:
        session.rollback()
        return Outcome(kind, f"{why} (read before)", duplicate=True)
    return _outcome(row, kind, why)


def _outcome(row: InboundMail, kind: InboundKind, detail: str, *, answered: bool = False) -> Outcome:
    return Outcome(kind, detail, row.id, answered=answered)
