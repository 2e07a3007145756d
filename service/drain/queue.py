"""A leased queue and its drain (ARCHITECTURE §6): claim the due rows, send them, record each outcome.

Never lose a row, never send one twice:

- A row is **claimed** before it is sent: one statement names the drain holding it (``claimed_by``), moves its
  ``next_attempt_at`` to the end of a short lease (``lease_seconds``) and counts the attempt, for rows still due
  (``FOR UPDATE SKIP LOCKED`` on PostgreSQL; SQLite runs one writer at a time), earliest due first, then in the
  order written (:func:`claim_statement`). Two drains at once get different rows. The claim is committed before
  any row goes out, and no transaction stays open while the far side (an SMTP server, a chat) answers.
- The drain **renews its lease** while it sends, and a lapsed lease is taken over only from a drain that is
  **gone** (its process's lock free): how is ``service.drain.leases``'s. A drain sends a row only while its
  lease on it is known to hold, and records an outcome only for a row it still holds. A drain that fails while
  its process lives on gives back at once the rows it had not begun to send; a batch that runs out of time
  (``batch_seconds``) gives back those it had not tried. After a crash a row goes out again one lease later
  (at least once), without a crash never twice.
- Each outcome is committed **within a fraction of a second** of its send (``record_seconds``), the outcomes
  of that moment in one statement and one commit: sent; retried later (a transient failure, after
  ``retry_seconds`` doubled at each attempt, at most ``max_retry_seconds``); failed (a permanent refusal, a row
  that cannot be sent, or ``max_attempts`` attempts; ``last_error`` says why, for the admins); skipped (the
  queue's reason: the reader turned it off, the step it was about is over…); or, for a row that would be
  skipped but that an attempt which died may have sent, ``maybe_sent`` (never ``skipped``).

A :class:`Queue` says only what differs between queues: its table (:class:`~service.drain.leases.Claims`), the
claim's extra conditions and the read of what a send needs, how a row is sent and why not, and which failures
are worth a retry. :func:`drain` does the rest, and :func:`run_task` is the body of each queue's worker task.
"""

from __future__ import annotations

import contextlib
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, Protocol, Self, TypeVar

import sqlalchemy as sa
from sqlmodel import Session

from service.drain import leases

# Re-exported: a queue names its table with ``Claims`` and prepares a batch under its ``Lease``; the rest of the
# leases is the drain's alone (tests/test_architecture.py).
from service.drain.leases import Claims as Claims
from service.drain.leases import Lease as Lease
from service.infra.logfmt import log

logger = logging.getLogger(__name__)

#: The statuses of a row, as every queue's status type spells them (``MailStatus``, ``NoticeStatus``).
PENDING, SENT, FAILED, SKIPPED, MAYBE_SENT = "pending", "sent", "failed", "skipped", "maybe_sent"


@dataclass(frozen=True, kw_only=True)
class DrainSettings:
    """The shape of every queue's settings; a queue's own class gives its defaults and adds what it alone needs."""

    max_attempts: int = 12
    #: Wait before the second attempt; doubled at each attempt, capped by ``max_retry_seconds``.
    retry_seconds: int = 60
    max_retry_seconds: int = 3600
    batch_size: int = 100
    #: How long a claim holds a row unless its drain renews it (it does, every quarter of this, while it
    #: works): a row whose drain died is due again within this long.
    lease_seconds: float = 20.0
    #: A batch gives back the rows it has not tried after this long (a very slow far side), so that one
    #: task never runs for ever.
    batch_seconds: float = 300.0
    #: A drain claims no new batch after this long, so a task ends in good time (beat sends another).
    budget_seconds: float = 25.0
    #: Outcomes wait at most about this long to be committed together. A drain killed meanwhile sends the rows
    #: of that moment again.
    record_seconds: float = 0.2

    @classmethod
    def configured(cls, config: Mapping[str, Any], prefix: str, **values: Any) -> Self:
        """The settings of the queue whose configuration keys begin with ``prefix`` (``MAIL``: ``MAIL_MAX_ATTEMPTS``,
        ``MAIL_RETRY_SECONDS``, ``MAIL_LEASE_SECONDS``), each left at the class's default when it is not set."""
        for name, kind in (("max_attempts", int), ("retry_seconds", int), ("lease_seconds", float)):
            value = config.get(f"{prefix}_{name.upper()}")
            if value is not None and value != "":
                values[name] = kind(value)
        return cls(**values)

    def retry_delay(self, attempts: int) -> timedelta:
        return timedelta(seconds=min(self.retry_seconds * 2 ** max(0, attempts - 1), self.max_retry_seconds))


@dataclass
class DrainReport:
    """What one drain did: returned by its task and logged as ``<queue>.drained`` (:func:`run_task`)."""

    claimed: int = 0
    sent: int = 0
    retried: int = 0
    failed: int = 0
    skipped: int = 0
    #: Not sent again, as ``skipped``, but an earlier attempt that died may have sent them (``maybe_sent``).
    maybe_sent: int = 0
    #: Claimed but not tried (the batch ran out of time): due again at once.
    released: int = 0
    #: Claimed but not tried because the lease could not be renewed in time (the database out of reach, or
    #: another drain took the row over): left for whoever holds it, or due when the lease ends.
    lost: int = 0
    batches: int = 0
    errors: list[str] = field(default_factory=list)


class Job(Protocol):
    """What the drain reads of a claimed row; the rest is its queue's."""

    @property
    def id(self) -> int: ...

    #: The attempts made, this one counted.
    @property
    def attempts(self) -> int: ...

    #: An earlier attempt died after the row may have left (a queue that cannot tell says ``False``).
    @property
    def may_have_left(self) -> bool: ...

    #: The fields that name the row in the log (``outbox=12 game=3 template=your_turn``).
    @property
    def told(self) -> dict[str, Any]: ...


J = TypeVar("J", bound=Job)


@dataclass(frozen=True)
class Failure:
    """A send that failed, as its queue judges it: ``reason`` for ``last_error``; ``permanent``: no retry;
    ``event``: the last word of the log event of a permanent failure."""

    reason: str
    permanent: bool = False
    event: str = "failed"


class Unsendable(Exception):
    """Raised by :meth:`Queue.send` for a row that can never go out (a mail that cannot be rendered): it fails."""

    def __init__(self, reason: str, *, event: str = "failed") -> None:
        super().__init__(reason)
        self.failure = Failure(reason, permanent=True, event=event)


class Queue(ABC, Generic[J]):
    """What one queue supplies to :func:`drain`. Made for one drain (it may keep what that drain needs)."""

    #: Its table, the status of a row still to send, and the first word of its log events.
    claims: leases.Claims
    #: Its outcome's statement (:func:`outcome_statement`), built once.
    record: sa.Update

    @abstractmethod
    def statements(self, dialect: str, batch_size: int) -> tuple[sa.Update, sa.Select[Any]]:
        """The claim of a batch (:func:`claim_statement`) and the read of its rows' jobs (parameter ``ids``)."""

    @abstractmethod
    def job(self, row: sa.RowMapping) -> J:
        """One claimed row's job, from the read."""

    def held_back(self, jobs: Sequence[J]) -> bool:
        """Whether rows may have waited behind this batch's (a claim takes them only once it is done): the drain
        claims once more even after a batch that was not full."""
        return False

    def prepare(self, session: Session, jobs: Sequence[J], lease: leases.Lease) -> Mapping[int, Any]:
        """Whatever the batch's sends need, by row, made before the first goes out (under ``lease``)."""
        return {}

    def connect(self) -> AbstractContextManager[Any]:
        """The connection a batch sends through (an SMTP session), or none."""
        return contextlib.nullcontext()

    @abstractmethod
    def skip_reason(self, job: J) -> str | None:
        """Why the row must not go out now, or ``None``."""

    @abstractmethod
    def send(self, connection: Any, job: J, prepared: Any) -> None:
        """Send one row; raise when it did not go (:class:`Unsendable` when it never will)."""

    @abstractmethod
    def failure(self, error: Exception) -> Failure:
        """What a send's ``error`` means: its reason, and whether trying again is vain."""

    def outcome_parameters(self, job: J, status: str) -> dict[str, Any]:
        """The values of the queue's own parameters of :attr:`record` for this outcome."""
        return {}


def claim_statement(
    claims: leases.Claims,
    dialect: str,
    batch_size: int,
    *,
    due: Iterable[sa.ColumnElement[bool]] = (),
    claimed: Callable[[sa.CTE], Iterable[sa.ColumnElement[bool]]] = lambda chosen: (),
    values: Callable[[sa.ColumnElement[bool]], Mapping[str, Any]] = lambda taken_over: {},
) -> sa.Update:
    """The claim of a batch of ``claims``'s rows, returning their ids (parameters: ``now``, ``lease_until``,
    ``holder`` and the drain lock's, ``DrainLock.claim_parameters``). A queue adds conditions to the rows due
    (``due``) and to those claimed among the chosen (``claimed``, given them), and values to set (``values``,
    given whether the row was held by a drain now gone)."""
    table = claims.table
    chosen_rows = (
        sa.select(table.c.id)
        .where(
            table.c.status == claims.pending,
            table.c.next_attempt_at <= sa.bindparam("now"),
            # A lapsed lease is taken over only from a drain that is gone (service.drain.leases).
            leases.takeable(dialect, table.c.claimed_by),
            *due,
        )
        .order_by(table.c.next_attempt_at, table.c.id)
        .limit(batch_size)
    )
    if dialect == "postgresql":
        # Rows another drain holds are skipped, not waited for (ARCHITECTURE §5's pattern, for a queue).
        chosen_rows = chosen_rows.with_for_update(skip_locked=True)
    # A CTE, evaluated once: PostgreSQL may run a LIMIT … SKIP LOCKED subquery again for each row of a
    # semi-join, picking different rows each time, and so claim more than a batch.
    chosen = chosen_rows.cte("due")
    return (
        sa.update(table)
        .where(
            table.c.id.in_(sa.select(chosen.c.id)),
            # Repeated here so that PostgreSQL re-checks them on a row another claim just changed.
            table.c.status == claims.pending,
            table.c.next_attempt_at <= sa.bindparam("now"),
            *claimed(chosen),
        )
        .values(
            next_attempt_at=sa.bindparam("lease_until"),
            attempts=table.c.attempts + 1,
            claimed_by=sa.bindparam("holder"),
            # The value on the right is the row's before this claim: still held, by a drain that is gone.
            **values(table.c.claimed_by.is_not(None)),
        )
        .returning(table.c.id)
    )


def outcome_statement(claims: leases.Claims, **values: Any) -> sa.Update:
    """An outcome, by row (run for many rows at once: ``row_id``, ``holder``, ``status``, ``last_error``,
    ``sent_at``, ``next_attempt_at``, and the queue's own parameters of ``values``). Only a pending row this
    drain still holds takes it: after a lease lapsed, the row belongs to the drain that claimed it next."""
    return claims.held().values(claimed_by=None, **values)


def drain(
    session: Session,
    queue: Queue[Any],
    settings: DrainSettings,
    *,
    now: datetime | None = None,
    holder: str | None = None,
) -> DrainReport:
    """Send every due row of ``queue``, batch by batch, until none is left or the time budget is spent.

    ``now`` fixes the clock (tests move it instead of sleeping); by default it is the real time. ``holder``
    names this drain in its claims (default: the name of its process's lock and a random part,
    :func:`service.drain.leases.drain_id`; a name given here that is not under this process's lock keeps its
    rows by the lease's time alone).
    """
    clock: Callable[[], datetime] = (lambda: now) if now is not None else (lambda: datetime.now(UTC))
    report = DrainReport()
    started = time.monotonic()
    # Taken (or found held) before the first claim, so that no row ever names a drain whose lock is not held.
    alive = leases.DrainLock.of(session.get_bind().engine, holder)
    try:
        while time.monotonic() - started < settings.budget_seconds:
            jobs = claim(session, queue, clock(), settings, alive)
            if not jobs:
                break
            report.batches += 1
            report.claimed += len(jobs)
            _send_batch(session, queue, settings, jobs, clock, report, alive)
            if len(jobs) < settings.batch_size and not queue.held_back(jobs):
                break
    finally:
        alive.release()
    return report


def claim(
    session: Session, queue: Queue[J], now: datetime, settings: DrainSettings, alive: leases.DrainLock
) -> list[J]:
    """Claim a batch for the drain under ``alive``, committed: the jobs of its rows, in the order written."""
    claiming, read = queue.statements(session.get_bind().dialect.name, settings.batch_size)
    try:
        lease = {
            "now": now,
            "lease_until": now + timedelta(seconds=settings.lease_seconds),
            "holder": alive.holder,
            **alive.claim_parameters(session),
        }
        ids = [row[0] for row in session.execute(claiming, lease)]
        if not ids:
            session.rollback()
            return []
        jobs = [queue.job(row._mapping) for row in session.execute(read, {"ids": ids})]
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return jobs


def _send_batch(
    session: Session,
    queue: Queue[J],
    settings: DrainSettings,
    jobs: list[J],
    clock: Callable[[], datetime],
    report: DrainReport,
    alive: leases.DrainLock,
) -> None:
    stop_at = time.monotonic() + settings.batch_seconds
    lease = leases.Lease(queue.claims, alive, [job.id for job in jobs], settings.lease_seconds, clock)
    outcomes = _Outcomes(session, queue, settings.record_seconds, lease)
    # The jobs from this index on have not begun to go out (the one before it may be with the far side).
    untried = 0
    lease.start()
    try:
        prepared = queue.prepare(session, jobs, lease)
        with queue.connect() as connection:
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
                    log(logger, logging.WARNING, f"{queue.claims.events}.lease_lost", **job.told, holder=lease.holder)
                    continue
                untried = index + 1
                _send_one(queue, connection, outcomes, prepared.get(job.id), settings, job, clock, report)
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


def _send_one(
    queue: Queue[J],
    connection: Any,
    outcomes: _Outcomes,
    prepared: Any,
    settings: DrainSettings,
    job: J,
    clock: Callable[[], datetime],
    report: DrainReport,
) -> None:
    events = queue.claims.events
    skip = queue.skip_reason(job)
    if skip and job.may_have_left:
        # Not sent again, but the attempt that died may have sent it: never told as skipped.
        error = f"may have been sent by an attempt that died before recording it; not sent again: {skip}"
        outcomes.add(job, MAYBE_SENT, clock(), error=error)
        report.maybe_sent += 1
        log(logger, logging.WARNING, f"{events}.maybe_sent", **job.told, reason=skip)
        return
    if skip:
        outcomes.add(job, SKIPPED, clock(), error=skip)
        report.skipped += 1
        log(logger, logging.INFO, f"{events}.skipped", **job.told, reason=skip)
        return
    try:
        queue.send(connection, job, prepared)
    except Exception as error:  # whatever it is, it stays in this row's outcome: the batch goes on
        failure = error.failure if isinstance(error, Unsendable) else queue.failure(error)
        _after_failure(outcomes, events, job, failure, settings, clock(), report)
        return
    outcomes.add(job, SENT, clock())
    report.sent += 1
    log(logger, logging.INFO, f"{events}.sent", **job.told, attempt=job.attempts)


def _after_failure(
    outcomes: _Outcomes,
    events: str,
    job: Job,
    failure: Failure,
    settings: DrainSettings,
    now: datetime,
    report: DrainReport,
) -> None:
    report.errors.append(failure.reason)
    if failure.permanent or job.attempts >= settings.max_attempts:
        reason = failure.reason if failure.permanent else f"gave up after {job.attempts} attempts: {failure.reason}"
        outcomes.add(job, FAILED, now, error=reason)
        report.failed += 1
        event = failure.event if failure.permanent else "gave_up"
        log(logger, logging.ERROR, f"{events}.{event}", **job.told, attempt=job.attempts, error=reason)
        return
    retry_at = now + settings.retry_delay(job.attempts)
    outcomes.add(job, PENDING, now, error=failure.reason, retry_at=retry_at)
    report.retried += 1
    log(
        logger,
        logging.WARNING,
        f"{events}.retry_later",
        **job.told,
        attempt=job.attempts,
        retry_at=retry_at.isoformat(),
        error=failure.reason,
    )


class _Outcomes:
    """The outcomes of a batch not yet committed, committed together once the oldest is ``every`` seconds
    old, and at the end of the batch."""

    def __init__(self, session: Session, queue: Queue[Any], every: float, lease: leases.Lease) -> None:
        self.session = session
        self.queue = queue
        self.every = every
        self.lease = lease
        self.rows: list[dict[str, Any]] = []
        self.since = 0.0

    def add(
        self, job: Job, status: str, now: datetime, *, error: str | None = None, retry_at: datetime | None = None
    ) -> None:
        if not self.rows:
            self.since = time.monotonic()
        self.rows.append(
            {
                "row_id": job.id,
                "holder": self.lease.holder,
                "status": status,
                "last_error": error[:1000] if error else None,
                "sent_at": now if status == SENT else None,
                # Only pending rows keep a time: the drain's index then holds nothing else.
                "next_attempt_at": retry_at if status == PENDING else None,
                **self.queue.outcome_parameters(job, status),
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
            self.lease.write(self.session, self.queue.record, rows)


def run_task(events: str, drain_now: Callable[[datetime | None], DrainReport], now: str | None) -> dict[str, Any]:
    """The body of a queue's worker task: drain it (``now``, ISO 8601, moves the clock, for tests only), log
    what the drain did (``<events>.drained``) and return its report. Retries are not Celery retries: a failed
    row's next attempt is a time in its row, picked up by a later drain (ARCHITECTURE §5: no long ETAs); and a
    task run again (``acks_late``, a worker killed midway) is harmless, rows being claimed in the database."""
    report = drain_now(datetime.fromisoformat(now) if now else None)
    if report.claimed:
        counts = {name: value for name, value in asdict(report).items() if name not in ("claimed", "errors")}
        log(logger, logging.INFO, f"{events}.drained", **counts)
    return asdict(report)
