"""Delivering the outbox (ARCHITECTURE §6): claim the due rows, render and send them, record each outcome.

Never lose a mail, never send one twice:

- A row is **claimed** before it is sent: one statement names the drain holding it (``claimed_by``),
  moves its ``next_attempt_at`` to the end of a short lease (``lease_seconds``, 20 s) and counts the
  attempt, for rows still due (``FOR UPDATE SKIP LOCKED`` on PostgreSQL; SQLite runs one writer at a
  time). Two workers draining at once get different rows. The claim is committed before any mail goes
  out, and no transaction stays open while the SMTP server answers.
- The drain **renews its lease** while it sends, from a timer thread (every quarter of the lease), so a slow
  SMTP server never makes it lose a row; a drain that dies stops renewing and its rows are due again within one
  lease, for the next drain (beat sends one every 30 s). A drain sends a row only while its lease on it is known
  to hold (renewed within the lease, less a margin, or else confirmed in the database just before the send), and
  records an outcome only for a row it still holds: a row another drain took over is left to that drain.
- A lease that lapsed is taken over only from a drain that is **gone** (its process's lock free), not from
  one that lives but was kept from the CPU; a drain that fails while its process lives on gives back at once
  the rows it had not begun to send. After a crash a row goes out again one lease later (at least once),
  without a crash never twice. How the locks and leases do it is ``service.domain.leases``'s, shared with the
  drains of chat notices.
- Each outcome is committed **within a fraction of a second** of its mail (``record_seconds``): sent;
  retry later (a transient failure, with backoff); failed (a permanent refusal, a mail that cannot be
  rendered or composed, or too many attempts; ``last_error`` says why, for the admins); skipped (the
  player turned that kind of mail off, or a mail about a step of a game that has moved past it, or
  ended); or, for a mail that would be skipped but that an earlier attempt may have sent (below), maybe
  sent (``maybe_sent``: never ``skipped`` for a mail that may have left). The outcomes of that fraction of
  a second go in one statement and one commit: a commit per mail was a third of the CPU time of a text mail.
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
- A worker that dies (killed, its machine down) between the SMTP server's "250 OK" and that commit leaves
  the rows claimed; when the lease ends, they are sent again: **at least once** after a crash, never twice
  without one. It is then the **same mail, byte for byte**: the stored bytes, with the same ``Message-ID``.
  A receiving side that drops a repeated ``Message-ID`` keeps one. At-least-once delivery with a stable
  identity is the most SMTP allows: the server's acceptance and our commit cannot be one atomic step. The
  claim that takes such a row over marks it (``may_have_left``: its drain died after its bytes were
  written); a marked row that is no longer to be sent (its step is over, the reader turned it off) is
  recorded ``maybe_sent``, not ``skipped``, and counted apart (``DeliveryReport.maybe_sent``). A crash
  early in a batch marks its rows not yet tried as well: "may", not "was".
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime, parseaddr
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from emails import messages
from emails.compose import ComposeError, Envelope, Mail, thread_id, write
from emails.delivery import Backend, Connection, DeliveryError
from emails.render import AT_THE_TABLE, ESSENTIAL, MailKind, RenderError
from service.domain import leases, notifications
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
    utcnow,
)
from service.domain.outbox import mail_domain
from service.infra.logfmt import log

logger = logging.getLogger(__name__)

PENDING, SENT, FAILED, SKIPPED = MailStatus.PENDING, MailStatus.SENT, MailStatus.FAILED, MailStatus.SKIPPED
MAYBE_SENT = MailStatus.MAYBE_SENT


@dataclass(frozen=True)
class MailSettings:
    sender: str
    max_attempts: int = 12
    #: Wait before the second attempt; doubled at each attempt, capped by ``max_retry_seconds``.
    retry_seconds: int = 60
    max_retry_seconds: int = 3600
    batch_size: int = 100
    #: How long a claim holds a row unless its drain renews it (it does, every quarter of this, while it
    #: works): a row whose drain died is due again within this long.
    lease_seconds: float = 20.0
    #: A batch gives back the rows it has not tried after this long (a very slow SMTP server), so that one
    #: task never runs for ever.
    batch_seconds: float = 300.0
    #: A drain claims no new batch after this long, so a task ends in good time (beat sends another).
    budget_seconds: float = 25.0
    #: Outcomes wait at most about this long to be committed together. A drain killed meanwhile sends
    #: the mails of that moment again (at a hundred mails a second, some twenty).
    record_seconds: float = 0.2
    #: The domain of the signed reply addresses (orders by mail, ``SMALLWORLD_INBOUND_DOMAIN``); None: the
    #: mails carry no ``Reply-To``.
    reply_domain: str | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> MailSettings:
        return cls(
            sender=config["MAIL_FROM"],
            reply_domain=config.get("INBOUND_DOMAIN"),
            max_attempts=int(config["MAIL_MAX_ATTEMPTS"]),
            retry_seconds=int(config["MAIL_RETRY_SECONDS"]),
            lease_seconds=float(config.get("MAIL_LEASE_SECONDS") or 20),
        )

    def retry_delay(self, attempts: int) -> timedelta:
        return timedelta(seconds=min(self.retry_seconds * 2 ** max(0, attempts - 1), self.max_retry_seconds))


@dataclass
class DeliveryReport:
    claimed: int = 0
    sent: int = 0
    retried: int = 0
    failed: int = 0
    skipped: int = 0
    #: Not sent again, as ``skipped``, but an earlier attempt that died may have sent them (``maybe_sent``).
    maybe_sent: int = 0
    #: Claimed but not tried (the batch ran out of time): due again at once.
    released: int = 0
    #: Claimed but not tried because the lease could not be renewed in time (the database out of reach,
    #: or another drain took the row over): left for whoever holds it, or due when the lease ends.
    lost: int = 0
    batches: int = 0
    errors: list[str] = field(default_factory=list)


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


def deliver_due_mail(
    session: Session,
    backend: Backend,
    links: LinkMaker,
    settings: MailSettings,
    *,
    now: datetime | None = None,
    holder: str | None = None,
) -> DeliveryReport:
    """Send every mail that is due, batch by batch, until none is left or the time budget is spent.

    ``now`` fixes the clock (tests move it instead of sleeping); by default it is the real time. ``holder``
    names this drain in its claims (default: the name of its process's lock and a random part,
    :func:`service.domain.leases.drain_id`; a name given here that is not under this process's lock keeps its
    rows by the lease's time alone).
    """
    clock: Callable[[], datetime] = (lambda: now) if now is not None else utcnow
    report = DeliveryReport()
    started = time.monotonic()
    # Taken (or found held) before the first claim, so that no row ever names a drain whose lock is not held.
    alive = leases.DrainLock.of(session.get_bind().engine, holder)
    try:
        while time.monotonic() - started < settings.budget_seconds:
            jobs = _claim(session, clock(), settings, alive)
            if not jobs:
                break
            report.batches += 1
            report.claimed += len(jobs)
            _send_batch(session, backend, links, settings, jobs, clock, report, alive)
            # A batch that was not full took every due mail but those held behind mails of their game to their
            # reader (the module's docstring), which may be this batch's: this drain claims once more.
            if len(jobs) < settings.batch_size and all(job.game_id is None for job in jobs):
                break
    finally:
        alive.release()
    return report


def _claim(session: Session, now: datetime, settings: MailSettings, alive: leases.DrainLock) -> list[_Job]:
    dialect = session.get_bind().dialect.name
    claim, read = _claim_statements(dialect, settings.batch_size)
    try:
        lease = {
            "now": now,
            "lease_until": now + timedelta(seconds=settings.lease_seconds),
            "holder": alive.holder,
            **alive.claim_parameters(session),
        }
        ids = [row[0] for row in session.execute(claim, lease)]
        if not ids:
            session.rollback()
            return []
        jobs = [_job(row._mapping) for row in session.execute(read, {"ids": ids})]
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return jobs


@functools.cache
def _claim_statements(dialect: str, batch_size: int) -> tuple[sa.Update, sa.Select[Any]]:
    """The claim of a batch (its parameters: ``now``, ``lease_until``, ``holder``) and the read of what its
    rows' mails need (``ids``), built once per dialect and batch size: building them and working out their
    cache keys was a third of the time of a claim on SQLite."""
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

    due = (
        select(OutboxMail.id)
        .where(
            col(OutboxMail.status) == PENDING,
            col(OutboxMail.next_attempt_at) <= sa.bindparam("now"),
            # A lapsed lease is taken over only from a drain that is gone (the module's docstring).
            leases.takeable(dialect, col(OutboxMail.claimed_by)),
            # Not behind an earlier mail of its game to its reader that is due only after it (held by another
            # drain, or waiting for a retry): it waits for that one's outcome, and leaves its place in the
            # batch to another meanwhile. One due before it comes first in this order, and is claimed with it.
            ~earlier_pending.where(col(earlier.next_attempt_at) > col(OutboxMail.next_attempt_at)).exists(),
        )
        .order_by(col(OutboxMail.next_attempt_at), col(OutboxMail.id))
        .limit(batch_size)
    )
    if dialect == "postgresql":
        # Rows another drain holds are skipped, not waited for (ARCHITECTURE §5's pattern, for mail).
        due = due.with_for_update(skip_locked=True)
    # A CTE, evaluated once: PostgreSQL may run a LIMIT … SKIP LOCKED subquery again for each row of a
    # semi-join, picking different rows each time, and so claim more than a batch.
    chosen = due.cte("due")
    claim = (
        sa.update(OutboxMail)
        .where(
            col(OutboxMail.id).in_(select(chosen.c.id)),
            # Repeated here so that PostgreSQL re-checks them on a row another claim just changed.
            col(OutboxMail.status) == PENDING,
            col(OutboxMail.next_attempt_at) <= sa.bindparam("now"),
            # Every earlier mail of its game to its reader still to send is claimed with it (and goes out before
            # it: a batch is sent in the order written). Not so when another claim, at this moment, holds one
            # (PostgreSQL skips the rows it locks): this row is left for the next claim.
            ~earlier_pending.where(col(earlier.id).not_in(select(chosen.c.id))).exists(),
        )
        .values(
            next_attempt_at=sa.bindparam("lease_until"),
            attempts=OutboxMail.attempts + 1,
            claimed_by=sa.bindparam("holder"),
            # The values on the right are the row's before this claim: a row still held (its drain gone) whose
            # bytes were written may have been handed to the SMTP server (the module's docstring).
            may_have_left=sa.or_(
                col(OutboxMail.may_have_left),
                sa.and_(col(OutboxMail.claimed_by).is_not(None), col(OutboxMail.rendered).is_not(None)),
            ),
        )
        .returning(col(OutboxMail.id))
        .execution_options(synchronize_session=False)
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
        )
    return _Job(**values)


def _send_batch(
    session: Session,
    backend: Backend,
    links: LinkMaker,
    settings: MailSettings,
    jobs: list[_Job],
    clock: Callable[[], datetime],
    report: DeliveryReport,
    alive: leases.DrainLock,
) -> None:
    holder = alive.holder
    stop_at = time.monotonic() + settings.batch_seconds
    lease = leases.Lease(_CLAIMS, alive, [job.id for job in jobs], settings.lease_seconds, clock)
    outcomes = _Outcomes(session, settings.record_seconds, holder, lease.writing)
    # The jobs from this index on have not begun to go out (the one before it may be with the SMTP server).
    untried = 0
    lease.start()
    try:
        mails = _written(session, links, settings, jobs, lease)
        with backend.open() as connection:
            for index, job in enumerate(jobs):
                outcomes.store_if_due()
                if time.monotonic() > stop_at:
                    outcomes.store()
                    lease.give_back(session, [left.id for left in jobs[index:]], clock())
                    report.released += len(jobs) - index
                    return
                if not lease.holds(job.id):
                    # Not renewed in time, or taken over: another drain may be sending it now.
                    report.lost += 1
                    log(logger, logging.WARNING, "mail.lease_lost", outbox=job.id, game=job.game_id, holder=holder)
                    continue
                untried = index + 1
                _send_one(connection, outcomes, mails.get(job.id), settings, job, clock, report)
    except Exception:
        # The drain fails and its process lives on (a database error, a fault of its own): no other process's
        # drain may take its rows while that process holds its lock, so they are given back now, for any drain,
        # rather than left to a later drain of this process once their lease lapsed. A process that dies (a
        # ``BaseException``: killed, interrupted) gives them up with its lock.
        lease.give_back_after_failure(session, [left.id for left in jobs[untried:]], clock())
        raise
    finally:
        try:
            # Also on the way out of a failure: what went out before it must not go out again.
            outcomes.store()
        finally:
            lease.stop()


def _written(
    session: Session, links: LinkMaker, settings: MailSettings, jobs: list[_Job], lease: leases.Lease
) -> dict[int, Mail | Exception]:
    """Each job's mail as it goes out, or why it cannot be written (it fails): the bytes an earlier attempt
    stored, or, for a mail sent for the first time, its bytes rendered now and stored, for the whole batch in
    one statement and one commit, before the first of them goes out (the module's docstring). A mail to be
    skipped is not written."""
    mails: dict[int, Mail | Exception] = {}
    new: list[dict[str, Any]] = []
    for job in jobs:
        if job.rendered is not None:
            mails[job.id] = Mail(
                sender=_sender_address(settings.sender),
                recipient=job.to_email,
                date=format_datetime(job.created_at),
                message_id=job.message_id,
                data=job.rendered,
            )
        elif not _skip_reason(job):
            try:
                mail = mails[job.id] = write(*_rendered_and_envelope(job, links, settings))
            except Exception as error:  # whatever this row holds, it stops this mail only
                mails[job.id] = error
            else:
                new.append({"row_id": job.id, "holder": lease.holder, "data": mail.data})
    if new:
        with lease.writing:
            try:
                session.execute(_STORE_RENDERED, new)
                session.commit()
            except BaseException:
                session.rollback()
                raise
    return mails


def _send_one(
    connection: Connection,
    outcomes: _Outcomes,
    mail: Mail | Exception | None,
    settings: MailSettings,
    job: _Job,
    clock: Callable[[], datetime],
    report: DeliveryReport,
) -> None:
    skip = _skip_reason(job)
    if skip and job.may_have_left:
        # Not sent again, but the attempt that died may have sent it: never told as skipped.
        error = f"may have been sent by an attempt that died before recording it; not sent again: {skip}"
        outcomes.add(job, MAYBE_SENT, clock(), error=error)
        report.maybe_sent += 1
        log(
            logger,
            logging.WARNING,
            "mail.maybe_sent",
            outbox=job.id,
            game=job.game_id,
            template=job.template,
            reason=skip,
        )
        return
    if skip:
        outcomes.add(job, SKIPPED, clock(), error=skip)
        report.skipped += 1
        log(logger, logging.INFO, "mail.skipped", outbox=job.id, game=job.game_id, template=job.template, reason=skip)
        return
    if not isinstance(mail, Mail):
        what = "cannot compose the mail" if isinstance(mail, ComposeError) else "cannot render the mail"
        _failed(outcomes, job, f"{what}: {mail!r}", clock(), report, event="mail.render_failed")
        return
    try:
        connection.send(mail)
    except DeliveryError as error:
        _after_failure(outcomes, job, error, settings, clock(), report)
        return
    except Exception as error:  # not a failure the backend knows: this mail fails visibly, the batch goes on
        _failed(outcomes, job, f"cannot send the mail: {error!r}", clock(), report, event="mail.send_failed")
        return
    outcomes.add(job, SENT, clock())
    report.sent += 1
    log(
        logger,
        logging.INFO,
        "mail.sent",
        outbox=job.id,
        game=job.game_id,
        template=job.template,
        attempt=job.attempts,
        message_id=job.message_id,
    )


def _failed(outcomes: _Outcomes, job: _Job, error: str, now: datetime, report: DeliveryReport, *, event: str) -> None:
    outcomes.add(job, FAILED, now, error=error)
    report.failed += 1
    report.errors.append(error)
    log(logger, logging.ERROR, event, outbox=job.id, game=job.game_id, template=job.template, error=error)


#: Mails about one step of a game: each is dropped once the game has moved past its step (ARCHITECTURE §6).
STEP_MAILS = ("your_turn", "redeploy_needed", "reminder")
#: A game in one of these is over: no mail about a step of it goes out.
_OVER = (GameStatus.ENDING, GameStatus.FINISHED, GameStatus.CANCELLED)


def _skip_reason(job: _Job) -> str | None:
    # The reader's choices (service.domain.notifications): never their turns nor the results.
    chosen = notifications.skip_reason(
        messages.CATEGORIES.get(job.template, ESSENTIAL),
        job.game_notify or job.notify,
        wants_reminders=job.wants_reminders,
        wants_notices=job.wants_notices,
        wants_messages=job.wants_messages,
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


def _rendered_and_envelope(job: _Job, links: LinkMaker, settings: MailSettings) -> tuple[Any, Envelope]:
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
    )
    return rendered, envelope


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


def _after_failure(
    outcomes: _Outcomes, job: _Job, error: DeliveryError, settings: MailSettings, now: datetime, report: DeliveryReport
) -> None:
    report.errors.append(str(error))
    if error.permanent:
        outcomes.add(job, FAILED, now, error=str(error))
        report.failed += 1
        log(
            logger,
            logging.ERROR,
            "mail.failed",
            outbox=job.id,
            game=job.game_id,
            template=job.template,
            attempt=job.attempts,
            error=str(error),
        )
    elif job.attempts >= settings.max_attempts:
        outcomes.add(job, FAILED, now, error=f"gave up after {job.attempts} attempts: {error}")
        report.failed += 1
        log(
            logger,
            logging.ERROR,
            "mail.gave_up",
            outbox=job.id,
            game=job.game_id,
            template=job.template,
            attempt=job.attempts,
            error=str(error),
        )
    else:
        retry_at = now + settings.retry_delay(job.attempts)
        outcomes.add(job, PENDING, now, error=str(error), retry_at=retry_at)
        report.retried += 1
        log(
            logger,
            logging.WARNING,
            "mail.retry_later",
            outbox=job.id,
            game=job.game_id,
            template=job.template,
            attempt=job.attempts,
            retry_at=retry_at.isoformat(),
            error=str(error),
        )


_OUTBOX = OutboxMail.metadata.tables[OutboxMail.__tablename__]
#: One outcome, by row (Core, run for many rows at once). Only a pending row this drain still holds takes
#: it: after a lease lapsed, the row belongs to the drain that claimed it next.
_STORE_OUTCOME = (
    sa.update(_OUTBOX)
    .where(
        _OUTBOX.c.id == sa.bindparam("row_id"),
        _OUTBOX.c.status == PENDING,
        _OUTBOX.c.claimed_by == sa.bindparam("holder"),
    )
    # A mail sent drops its bytes (the module's docstring): only one that may go out again keeps them.
    .values(claimed_by=None, rendered=sa.case((sa.bindparam("drop_rendered"), sa.null()), else_=_OUTBOX.c.rendered))
)
#: A mail's bytes stored, once, by the drain that holds its row (``OutboxMail.rendered``).
_STORE_RENDERED = (
    sa.update(_OUTBOX)
    .where(
        _OUTBOX.c.id == sa.bindparam("row_id"),
        _OUTBOX.c.status == PENDING,
        _OUTBOX.c.claimed_by == sa.bindparam("holder"),
        _OUTBOX.c.rendered.is_(None),
    )
    .values(rendered=sa.bindparam("data"))
)
#: The outbox's rows as its drains claim them and their leases hold them (``service.domain.leases``).
_CLAIMS = leases.Claims(_OUTBOX, PENDING, "mail")


class _Outcomes:
    """The outcomes of a batch not yet committed, committed together once the oldest is ``every`` seconds
    old, and at the end of the batch."""

    def __init__(self, session: Session, every: float, holder: str, writing: threading.Lock) -> None:
        self.session = session
        self.every = every
        self.holder = holder
        self.writing = writing
        self.rows: list[dict[str, Any]] = []
        self.since = 0.0

    def add(
        self,
        job: _Job,
        status: MailStatus,
        now: datetime,
        *,
        error: str | None = None,
        retry_at: datetime | None = None,
    ) -> None:
        if not self.rows:
            self.since = time.monotonic()
        self.rows.append(
            {
                "row_id": job.id,
                "holder": self.holder,
                "status": status,
                "last_error": error[:1000] if error else None,
                "sent_at": now if status == SENT else None,
                # Only pending rows keep a time: the drain's index then holds nothing else.
                "next_attempt_at": retry_at if status == PENDING else None,
                "drop_rendered": status == SENT,
            }
        )

    def store_if_due(self) -> None:
        if self.rows and time.monotonic() - self.since >= self.every:
            self.store()

    def store(self) -> None:
        # Taken out first: outcomes that fail to store are not tried again (their rows stay claimed, and
        # go out again when the claim lapses).
        rows, self.rows = self.rows, []
        if rows:
            with self.writing:
                try:
                    self.session.execute(_STORE_OUTCOME, rows)
                    self.session.commit()
                except BaseException:
                    self.session.rollback()
                    raise


def outbox_counts(session: Session) -> dict[str, int]:
    """How many outbox rows are in each status (for health and admin pages)."""
    rows = session.execute(select(col(OutboxMail.status), sa.func.count()).group_by(col(OutboxMail.status))).all()
    return {status: count for status, count in rows}
