"""Delivering the outbox (ARCHITECTURE §6): the mail queue of the leased drain (``service.drain``).

The drain (``service.drain.queue``) claims the due rows under a lease, sends them, retries with backoff and
records each outcome within a fraction of a second; after a crash a mail goes out again one lease later (at
least once), without a crash never twice. This module says what is mail's own:

- A game's mails to one reader (one address) go out **in the order they were written**: the auto-pass
  notice of a game's last turn before its final tables, however many drains run at once. A claim takes a
  row only with every earlier row of its game to its reader that is still pending; a row behind one that
  another drain holds, or that waits for a retry, waits for its outcome (sent, failed or skipped), and
  does not take a place in the batch meanwhile. A batch goes out in the order written, and the drain that
  sent it claims once more, for the mails that waited behind it. Mails about no game have no order.
- A mail is **written once**: before a batch's first send, the drain renders each of its mails that has no
  bytes yet and stores them (``OutboxMail.rendered``, one statement and one commit for the batch); every
  attempt sends the stored bytes. Rendering again would sign the links anew (a token carries its time) and
  read the reader's name, time zone and seat as they are then. The bytes are kept only while the mail may
  go out again: its outcome ``sent`` drops them (a turn mail with its board picture is some 60 KB; the
  row's context says what it was). A mail retried later, failed (an admin may send it again), or maybe
  sent keeps them.
- A worker that dies (killed, its machine down) between the SMTP server's "250 OK" and the record of the
  outcome leaves the rows claimed; when the lease ends, they are sent again: **at least once** after a crash,
  never twice without one. It is then the **same mail, byte for byte**: the stored bytes, with the same
  ``Message-ID``. A receiving side that drops a repeated ``Message-ID`` keeps one. At-least-once delivery with
  a stable identity is the most SMTP allows: the server's acceptance and our commit cannot be one atomic step.
  The claim that takes such a row over marks it (``may_have_left``: its drain died after its bytes were
  written); a marked row that is no longer to be sent is recorded ``maybe_sent``, not ``skipped``, and counted
  apart (``DrainReport.maybe_sent``). A crash early in a batch marks its rows not yet tried as well: "may",
  not "was".
- A mail is **skipped** when the reader turned that kind of mail off, or when it is about a step of a game
  that has moved past it, or ended. A permanent SMTP refusal, a mail that cannot be rendered or composed, or
  too many attempts fail it (``last_error`` says why, for the admins); a transient refusal is retried.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime, parseaddr
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from emails import messages
from emails.compose import MOST_BYTES, ComposeError, Envelope, Mail, list_id, thread_id, write
from emails.delivery import Backend, Connection, DeliveryError
from emails.render import AT_THE_TABLE, ESSENTIAL, MailKind, RenderError
from service.domain import notifications
from service.domain.bounces import BounceAddresses
from service.domain.links import CALENDAR, CHOICES, LinkMaker, ReplyAddresses, Signer
from service.domain.models import (
    Game,
    GameNotification,
    GameStatus,
    MailStatus,
    NotifyMode,
    OutboxMail,
    Player,
    Seat,
)
from service.domain.outbox import mail_domain
from service.drain.queue import (
    Claims,
    DrainReport,
    DrainSettings,
    Failure,
    Lease,
    Queue,
    Unsendable,
    claim_statement,
    drain,
    outcome_statement,
)

PENDING, SENT = MailStatus.PENDING, MailStatus.SENT


@dataclass(frozen=True, kw_only=True)
class MailSettings(DrainSettings):
    """The drain's settings for mail (``SMALLWORLD_MAIL_*``), with what a mail alone needs."""

    sender: str
    #: The domain of the signed reply addresses (orders by mail, ``SMALLWORLD_INBOUND_DOMAIN``); None: the
    #: mails carry no ``Reply-To``.
    reply_domain: str | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> MailSettings:
        return cls.configured(config, "MAIL", sender=config["MAIL_FROM"], reply_domain=config.get("INBOUND_DOMAIN"))


@dataclass(frozen=True)
class _Job:
    """Everything one send needs, read before the claim commits (no ORM object is touched afterwards)."""

    id: int
    message_id: str
    template: str
    #: A JSON object as written; anything else fails this mail when it is rendered.
    context: Any
    to_email: str
    created_at: datetime
    attempts: int
    game_id: int | None
    player_id: int | None
    player_name: str | None
    time_zone: str
    wants_reminders: bool
    wants_notices: bool
    wants_messages: bool
    #: The reader's choice for the mail's game (``GameNotification``), else their address's default.
    notify: str
    #: The reader's ``Player.links_serial`` and ``calendar_serial``: the links of the mail carry them.
    links_serial: int
    calendar_serial: int
    game_notify: str | None
    game_created_at: datetime | None
    game_status: str | None
    game_step_key: str | None
    seat: int | None
    seat_secret: str | None
    #: The step of the game the mail is about (``OutboxMail.step_key``), if it is about one.
    step_key: str | None
    #: The mail's bytes, if an earlier attempt wrote them (``OutboxMail.rendered``): sent as they are.
    rendered: bytes | None
    #: An earlier attempt died after writing them: it may have sent the mail (``OutboxMail.may_have_left``).
    may_have_left: bool
    #: Since when mail to the reader's address bounces (``service.domain.bounces``), if it does.
    bouncing_since: datetime | None

    @property
    def told(self) -> dict[str, Any]:
        return {"outbox": self.id, "game": self.game_id, "template": self.template, "message_id": self.message_id}


def deliver_due_mail(
    session: Session,
    backend: Backend,
    links: LinkMaker,
    settings: MailSettings,
    *,
    now: datetime | None = None,
    holder: str | None = None,
) -> DrainReport:
    """Send every mail that is due, batch by batch, until none is left or the time budget is spent
    (``service.drain.queue.drain``: ``now`` fixes the clock, ``holder`` names the drain)."""
    return drain(session, MailQueue(backend, links, settings), settings, now=now, holder=holder)


_OUTBOX = OutboxMail.metadata.tables[OutboxMail.__tablename__]
#: The outbox's rows as its drains claim them and their leases hold them (``service.drain.leases``).
_CLAIMS = Claims(_OUTBOX, PENDING, "mail")
#: A mail's bytes stored, once, by the drain that holds its row (``OutboxMail.rendered``).
_STORE_RENDERED = _CLAIMS.held().where(_OUTBOX.c.rendered.is_(None)).values(rendered=sa.bindparam("data"))


class MailQueue(Queue[_Job]):
    """The outbox as the drain sends it: through ``backend``, each mail written once (the module's docstring)."""

    claims = _CLAIMS
    # A mail sent drops its bytes (the module's docstring): only one that may go out again keeps them.
    record = outcome_statement(
        _CLAIMS, rendered=sa.case((sa.bindparam("drop_rendered"), sa.null()), else_=_OUTBOX.c.rendered)
    )

    def __init__(self, backend: Backend, links: LinkMaker, settings: MailSettings) -> None:
        self.backend = backend
        self.links = links
        self.settings = settings

    def statements(self, dialect: str, batch_size: int) -> tuple[sa.Update, sa.Select[Any]]:
        return _claim_statements(dialect, batch_size)

    def job(self, row: sa.RowMapping) -> _Job:
        return _job(row)

    def held_back(self, jobs: Sequence[_Job]) -> bool:
        # A batch that was not full took every due mail but those held behind mails of their game to their
        # reader (the module's docstring), which may be this batch's: this drain claims once more.
        return any(job.game_id is not None for job in jobs)

    def prepare(self, session: Session, jobs: Sequence[_Job], lease: Lease) -> dict[int, Mail | Exception]:
        """Each job's mail as it goes out, or why it cannot be written (it fails): the bytes an earlier attempt
        stored, or, for a mail sent for the first time, its bytes rendered now and stored, for the whole batch
        in one statement and one commit, before the first of them goes out (the module's docstring). A mail to
        be skipped is not written."""
        mails: dict[int, Mail | Exception] = {}
        new: list[dict[str, Any]] = []
        for job in jobs:
            if job.rendered is not None:
                mails[job.id] = Mail(
                    sender=_return_path(job, self.links, self.settings) or _sender_address(self.settings.sender),
                    recipient=job.to_email,
                    date=format_datetime(job.created_at),
                    message_id=job.message_id,
                    data=job.rendered,
                )
            elif not _skip_reason(job):
                try:
                    mail = mails[job.id] = _written(job, self.links, self.settings)
                except Exception as error:  # whatever this row holds, it stops this mail only
                    mails[job.id] = error
                else:
                    new.append({"row_id": job.id, "holder": lease.holder, "data": mail.data})
        if new:
            lease.write(session, _STORE_RENDERED, new)
        return mails

    def connect(self) -> AbstractContextManager[Connection]:
        return self.backend.open()

    def skip_reason(self, job: _Job) -> str | None:
        return _skip_reason(job)

    def send(self, connection: Connection, job: _Job, prepared: Mail | Exception | None) -> None:
        if not isinstance(prepared, Mail):
            what = "cannot compose the mail" if isinstance(prepared, ComposeError) else "cannot render the mail"
            raise Unsendable(f"{what}: {prepared!r}", event="render_failed")
        connection.send(prepared)

    def failure(self, error: Exception) -> Failure:
        if isinstance(error, DeliveryError):
            return Failure(str(error), permanent=error.permanent)
        # Not a failure the backend knows: this mail fails visibly, the batch goes on.
        return Failure(f"cannot send the mail: {error!r}", permanent=True, event="send_failed")

    def outcome_parameters(self, job: _Job, status: str) -> dict[str, Any]:
        return {"drop_rendered": status == SENT}


@functools.cache
def _claim_statements(dialect: str, batch_size: int) -> tuple[sa.Update, sa.Select[Any]]:
    """The claim of a batch (``service.drain.queue.claim_statement``, with mail's order by reader) and the read
    of what its rows' mails need (``ids``), built once per dialect and batch size: building them and working
    out their cache keys was a third of the time of a claim on SQLite."""
    earlier = sa.orm.aliased(OutboxMail, name="earlier")

    # The mails still to send written before the row, of its game to its reader (the module's docstring).
    earlier_pending = select(earlier.id).where(
        col(earlier.game_id) == col(OutboxMail.game_id),
        col(earlier.to_email) == col(OutboxMail.to_email),
        col(earlier.id) < col(OutboxMail.id),
        # Written out, not a parameter, so that the database may use the index of pending rows by reader
        # (``ix_outbox_pending_by_reader``: its condition must be seen to hold).
        col(earlier.status) == sa.literal_column(f"'{PENDING.value}'"),
    )
    claim = claim_statement(
        _CLAIMS,
        dialect,
        batch_size,
        # Not behind an earlier mail of its game to its reader that is due only after it (held by another
        # drain, or waiting for a retry): it waits for that one's outcome, and leaves its place in the batch
        # to another meanwhile. One due before it comes first in the claim's order, and is claimed with it.
        due=[~earlier_pending.where(col(earlier.next_attempt_at) > col(OutboxMail.next_attempt_at)).exists()],
        # Every earlier mail of its game to its reader still to send is claimed with it (and goes out before
        # it: a batch is sent in the order written). Not so when another claim, at this moment, holds one
        # (PostgreSQL skips the rows it locks): this row is left for the next claim.
        claimed=lambda chosen: [~earlier_pending.where(col(earlier.id).not_in(sa.select(chosen.c.id))).exists()],
        # A row still held (its drain gone) whose bytes were written may have been handed to the SMTP server
        # (the module's docstring).
        values=lambda taken_over: {
            "may_have_left": sa.or_(
                col(OutboxMail.may_have_left), sa.and_(taken_over, col(OutboxMail.rendered).is_not(None))
            )
        },
    )
    seat = sa.orm.aliased(Seat)
    read = (
        # Columns named as the fields of _Job, not whole rows: a game's row holds its whole state, which
        # a mail does not need.
        sa.select(
            col(OutboxMail.id),
            col(OutboxMail.message_id),
            col(OutboxMail.template),
            col(OutboxMail.context),
            col(OutboxMail.to_email),
            col(OutboxMail.created_at),
            col(OutboxMail.attempts),
            col(OutboxMail.game_id),
            col(OutboxMail.step_key),
            col(OutboxMail.rendered),
            col(OutboxMail.may_have_left),
            col(Player.id).label("player_id"),
            col(Player.display_name).label("player_name"),
            col(Player.time_zone),
            col(Player.wants_reminders),
            col(Player.wants_notices),
            col(Player.wants_messages),
            col(Player.notify),
            col(Player.links_serial),
            col(Player.calendar_serial),
            col(Player.bouncing_since),
            col(GameNotification.mode).label("game_notify"),
            col(Game.created_at).label("game_created_at"),
            col(Game.status).label("game_status"),
            col(Game.step_key).label("game_step_key"),
            col(seat.seat),
            col(seat.secret).label("seat_secret"),
        )
        .outerjoin(Player, col(Player.id) == col(OutboxMail.player_id))
        .outerjoin(Game, col(Game.id) == col(OutboxMail.game_id))
        .outerjoin(
            GameNotification,
            sa.and_(
                col(GameNotification.game_id) == col(OutboxMail.game_id),
                col(GameNotification.player_id) == col(OutboxMail.player_id),
            ),
        )
        .outerjoin(
            seat,
            sa.and_(
                col(seat.game_id) == col(OutboxMail.game_id),
                col(seat.player_id) == col(OutboxMail.player_id),
                col(seat.removed) == sa.false(),
            ),
        )
        .where(col(OutboxMail.id).in_(sa.bindparam("ids", expanding=True)))
        .order_by(col(OutboxMail.id))
    )
    return claim, read


def _job(row: sa.RowMapping) -> _Job:
    values = dict(row)
    # A context that is not an object (a row written by hand, or by an older release) fails its own mail
    # when it is rendered, not the whole claim here.
    context = values["context"]
    values["context"] = dict(context) if isinstance(context, Mapping) else (context or {})
    # A mail to an address that is not a player's (no player row): the defaults of a new player.
    if values["player_id"] is None:
        values.update(
            time_zone="UTC",
            wants_reminders=True,
            wants_notices=True,
            wants_messages=True,
            notify=NotifyMode.EVERY,
            links_serial=0,
            calendar_serial=0,
            bouncing_since=None,
        )
    return _Job(**values)


#: Mails about one step of a game: each is dropped once the game has moved past its step (ARCHITECTURE §6).
STEP_MAILS = ("your_turn", "redeploy_needed", "reminder")
#: A game in one of these is over: no mail about a step of it goes out.
_OVER = (GameStatus.ENDING, GameStatus.FINISHED, GameStatus.CANCELLED)


#: The one kind that still goes to a bouncing address: the sign-in link its owner asked for on a page, the way to
#: clear the mark (``service.domain.bounces``).
_TO_BOUNCING = ("sign_in",)


def _skip_reason(job: _Job) -> str | None:
    if job.bouncing_since is not None and job.template not in _TO_BOUNCING:
        return "mail to this address bounces: none goes to it until its owner signs in again"
    # The reader's choices (service.domain.notifications): never their turns nor the results.
    chosen = notifications.skip_reason(
        messages.CATEGORIES.get(job.template, ESSENTIAL),
        job.game_notify or job.notify,
        wants_reminders=job.wants_reminders,
        wants_notices=job.wants_notices,
        wants_messages=job.wants_messages,
        own_turn=job.template in notifications.OWN_TURN_NOTICES,
    )
    if chosen:
        return chosen
    if job.template in STEP_MAILS and job.game_id is not None:
        return _stale_step(job)
    return None


def _stale_step(job: _Job) -> str | None:
    """Why a mail about a step of its game must not go out now (the game moved on), or ``None``."""
    # Rows written before the step had a column of their own carry it in their context.
    step = job.step_key or _context_value(job, "step_key")
    if job.game_status in _OVER:
        return f"the game is {job.game_status}"
    if job.template == "reminder" and job.game_status != GameStatus.ACTIVE:
        return "the step it reminded of is over"
    if step is not None and step != job.game_step_key:
        return "the step it reminded of is over" if job.template == "reminder" else "the step it was about is over"
    if job.player_id is not None and job.seat is None:
        return "the player no longer holds a seat in this game"
    return None


def _context_value(job: _Job, key: str) -> Any:
    return job.context.get(key) if isinstance(job.context, Mapping) else None


def _written(job: _Job, links: LinkMaker, settings: MailSettings) -> Mail:
    """The row's mail as it goes out: with the board picture its kind carries, unless the picture would make it
    heavier than a mail may be (``MOST_BYTES``, ARCHITECTURE §6: a crowded board beside a long list of orders);
    then with the board in words and the link to the reader's page, where it is drawn."""
    rendered, envelope = _rendered_and_envelope(job, links, settings)
    mail = write(rendered, envelope)
    if rendered.images and len(mail.data) > MOST_BYTES:
        mail = write(*_rendered_and_envelope(job, links, settings, pictures=False))
    return mail


def _rendered_and_envelope(
    job: _Job, links: LinkMaker, settings: MailSettings, *, pictures: bool = True
) -> tuple[Any, Envelope]:
    """The row's mail for its reader, with the links its kind's policy names (``emails.messages``,
    ARCHITECTURE §6) minted now, once, as the reader's seat and serials are at sending."""
    if not isinstance(job.context, Mapping):
        raise RenderError(f"the mail's context is not an object but {type(job.context).__name__}")
    # A row that is not a valid message raises MessageError (a RenderError): that mail fails, with the reason.
    message = messages.from_json(job.template, job.context)
    kind = message.kind
    unsubscribe = None
    if job.player_id is not None and kind.unsubscribe is not None:
        unsubscribe = links.unsubscribe_url(job.player_id, kind.unsubscribe)
    # The reader's link to their seat, as the seat and its player's links serial are now.
    game_url = None
    if job.game_id is not None and job.seat is not None and job.seat_secret:
        game_url = links.turn_url(job.game_id, job.seat, job.seat_secret, serial=job.links_serial)
    choices_url = None
    if job.player_id is not None and kind.choices:
        choices_url = _untimed_url(links, CHOICES, job.player_id, job.links_serial)
    calendar_url = None
    if job.player_id is not None and kind.calendar:
        calendar_url = _untimed_url(links, CALENDAR, job.player_id, job.links_serial, job.calendar_serial)
    reply_to = _reply_address(job, kind, links, settings)
    # The mail is written as of its row's creation: its Date, and the time left it states. A retry thus
    # sends the very same mail (see the module's docstring).
    rendered = message.render(
        pictures=pictures,
        now=job.created_at,
        time_zone=job.time_zone,
        game_url=game_url,
        unsubscribe_url=unsubscribe,
        calendar_url=calendar_url,
        reply_address=reply_to,
        choices_url=choices_url,
    )
    envelope = Envelope(
        message_id=job.message_id,
        to=job.to_email,
        to_name=job.player_name,
        sender=settings.sender,
        date=job.created_at,
        thread_id=thread_id(job.game_id, job.game_created_at, _domain_of(settings.sender))
        if job.game_id is not None and job.game_created_at is not None
        else None,
        unsubscribe_url=unsubscribe,
        reply_to=reply_to,
        list_id=_list_of(message, settings),
        return_path=_return_path(job, links, settings),
    )
    replying = message.replying_to
    if replying is not None:
        # An answer to a person's mail replies to it: its thread, its subject (ARCHITECTURE §10); the game's root
        # first when their mail did not name it (a client that writes no References), so it stays in the game's.
        rendered = dataclasses.replace(rendered, subject=replying.subject)
        root = envelope.thread_id
        references = (
            replying.references if root is None or root in replying.references else (root, *replying.references)
        )
        envelope = dataclasses.replace(envelope, in_reply_to=replying.message_id, references=references)
    return rendered, envelope


def _return_path(job: _Job, links: LinkMaker, settings: MailSettings) -> str | None:
    """The row's own signed bounce address (``service.domain.bounces``), on the inbound domain; ``None`` without
    one (the ``From`` address is then the envelope's sender)."""
    if settings.reply_domain is None:
        return None
    return _bounce_addresses(tuple(links.signer.keys), settings.reply_domain).for_row(job.id)


@functools.lru_cache(maxsize=16)
def _bounce_addresses(keys: tuple[str | bytes, ...], domain: str) -> BounceAddresses:
    return BounceAddresses(keys, domain)


def _list_of(message: messages.Message, settings: MailSettings) -> tuple[str, str] | None:
    """A game's mail's list (``List-Id``, ARCHITECTURE §6), under the inbound domain (else the mail domain)."""
    if not isinstance(message, messages.GameMessage):
        return None
    return list_id(message.game_id, message.game_name, settings.reply_domain or _domain_of(settings.sender))


def _untimed_url(
    links: LinkMaker, purpose: str, player_id: int, links_serial: int = 0, calendar_serial: int = 0
) -> str:
    """A player's link that carries no time (``links.UNTIMED``): their page of mail choices (``CHOICES``) or
    calendar feed (``CALENDAR``). Each is the same in every mail to the player while their serials stay, so it
    is signed once and kept (signing was a tenth of the time of a mail); kept by the keys it is signed with
    and the serials it carries."""
    serials = (links_serial, calendar_serial if purpose == CALENDAR else 0)
    return _signed_once(tuple(links.signer.keys), links.base_url, purpose, player_id, serials)


@functools.lru_cache(maxsize=4096)
def _signed_once(
    keys: tuple[str | bytes, ...], base_url: str, purpose: str, player_id: int, serials: tuple[int, int]
) -> str:
    links = LinkMaker(Signer(keys), base_url)
    serial, calendar_serial = serials
    if purpose == CHOICES:
        return links.choices_url(player_id, serial=serial)
    return links.address_calendar_url(player_id, serial=serial, calendar_serial=calendar_serial)


#: The domain of the Message-IDs and threads, from the sender (the same for every mail of a drain).
_domain_of = functools.lru_cache(maxsize=16)(mail_domain)
#: The envelope's sender of a mail sent from its stored bytes, as ``emails.compose.write`` gives it.
_sender_address = functools.lru_cache(maxsize=16)(lambda sender: parseaddr(sender)[1])


def _reply_address(job: _Job, kind: MailKind, links: LinkMaker, settings: MailSettings) -> str | None:
    """The seat's signed reply address (ARCHITECTURE §10), or None: for a mail that asks for orders, the address
    names the seat and the step; for a mail whose answer is posted at the table, the seat. Signed with the
    seat's secret as it is now."""
    if settings.reply_domain is None or kind.replies is None or job.game_id is None:
        return None
    if job.seat is None or not job.seat_secret or _context_value(job, "seat") != job.seat:
        return None
    addresses = ReplyAddresses(links.signer, settings.reply_domain)
    if kind.replies == AT_THE_TABLE:
        return addresses.for_talk(job.game_id, job.seat, job.seat_secret, serial=job.links_serial)
    step = _context_value(job, "step_key")
    if not isinstance(step, str):
        return None
    try:
        return addresses.for_step(job.game_id, job.seat, job.seat_secret, step, serial=job.links_serial)
    except ValueError:  # a step key of another shape (a row written by hand): no reply address
        return None


def outbox_counts(session: Session) -> dict[str, int]:
    """How many outbox rows are in each status (for health and admin pages)."""
    rows = session.execute(select(col(OutboxMail.status), sa.func.count()).group_by(col(OutboxMail.status))).all()
    return {status: count for status, count in rows}
