"""How long what mail carried is kept (ARCHITECTURE §9; ``docs/PRIVACY.md``): ``SMALLWORLD_MAIL_RETENTION_DAYS``
(30 by default) after a mail was written or came in, the retention sweep (``worker.tasks.housekeeping``,
hourly) purges it:

- a mail written (``outbox``): its body, from which it is rendered (``context``: the names, the board, the
  signed links, the text of table talk…) and its last error are emptied (:data:`PURGED_BODY`), once it is no
  longer waiting to be sent; the row stays, with its kind, recipient, status and times, for the game's admin
  page and the player's download. A purged mail cannot be resent (``admin.resend_mail`` says so).
- a mail that came in (``inbound_mail``: its sender, and what was done with it): its record is deleted. The
  mail itself is never stored (``service.domain.inbound``); what it did in a game (an order, a message at the
  table) is the game's, and stays with it.

Batches of :data:`BATCH` rows, each committed on its own, in the order of the rows' ids. A batch that fails is
done again row by row, so one bad row never stops the sweep: it is logged, counted and left for the next
sweep. On PostgreSQL a row another transaction holds is passed over (``SKIP LOCKED``), not waited for.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from service.domain.models import InboundMail, MailStatus, OutboxMail, utcnow
from service.infra.logfmt import log

logger = logging.getLogger(__name__)

#: ``SMALLWORLD_MAIL_RETENTION_DAYS``'s default.
DEFAULT_DAYS = 30
#: Rows purged per transaction.
BATCH = 500
#: What a purged mail's row keeps of its body: nothing. The hook for a new column that holds a mail's body
#: (say the rendered bytes kept to send the very same bytes again): add it here, with its emptied value.
PURGED_BODY: dict[str, Any] = {"context": {}, "last_error": None, "rendered": None}


@dataclass
class Purged:
    """What one sweep did: mail bodies emptied, inbound records deleted, rows that failed (left for later)."""

    mails: int = 0
    inbound: int = 0
    failed: int = 0


def purge_old_mail(session: Session, days: int, now: datetime | None = None, batch: int = BATCH) -> Purged:
    """Purge what mail carried, ``days`` after it was written or came in (see the module's docstring)."""
    if days < 1:
        raise ValueError("the retention is at least one day")
    now = now or utcnow()
    cutoff = now - timedelta(days=days)
    report = Purged()
    old_mail = sa.and_(
        col(OutboxMail.body_purged_at).is_(None),
        col(OutboxMail.created_at) < cutoff,
        col(OutboxMail.status) != MailStatus.PENDING,
    )
    emptied = sa.update(OutboxMail).values(**PURGED_BODY, body_purged_at=now)
    report.mails, failed = _in_batches(session, col(OutboxMail.id), old_mail, emptied, batch)
    report.failed += failed
    old_inbound = col(InboundMail.received_at) < cutoff
    report.inbound, failed = _in_batches(session, col(InboundMail.id), old_inbound, sa.delete(InboundMail), batch)
    report.failed += failed
    if report.mails or report.inbound or report.failed:
        log(logger, logging.INFO, "retention.purged", mails=report.mails, inbound=report.inbound, failed=report.failed)
    return report


def _in_batches(session: Session, key: Any, due: Any, statement: sa.Update | sa.Delete, batch: int) -> tuple[int, int]:
    """Run ``statement`` on the rows ``due`` selects, a batch at a time; (rows done, rows that failed)."""
    done = failed = 0
    last = 0
    locking = session.get_bind().dialect.name == "postgresql"
    while True:
        query = sa.select(key).where(due, key > last).order_by(key).limit(batch)
        if locking:
            query = query.with_for_update(skip_locked=True)
        ids: Sequence[int] = session.execute(query).scalars().all()
        if not ids:
            session.rollback()
            return done, failed
        last = ids[-1]
        try:
            done += _apply(session, statement, key, ids)
        except Exception as error:
            session.rollback()
            log(logger, logging.WARNING, "retention.batch_failed", rows=len(ids), error=repr(error)[:200])
            for row_id in ids:
                ok = _one(session, statement, key, row_id)
                done, failed = done + ok, failed + (not ok)


def _apply(session: Session, statement: sa.Update | sa.Delete, key: Any, ids: Sequence[int]) -> int:
    result = session.execute(statement.where(key.in_(ids)).execution_options(synchronize_session=False))
    session.commit()
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def _one(session: Session, statement: sa.Update | sa.Delete, key: Any, row_id: int) -> bool:
    """One row, in a transaction of its own: whether it went."""
    try:
        _apply(session, statement, key, [row_id])
        return True
    except Exception as error:
        session.rollback()
        log(logger, logging.ERROR, "retention.row_failed", row=row_id, error=repr(error)[:300])
        return False
