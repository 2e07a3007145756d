"""The daily digests (ARCHITECTURE §9), sent by beat with every sweep: each address that chose a digest gets it
once its local hour has come, once a day.

Thin: the work is ``service.domain.notifications.send_digests``. ``acks_late``: a task run twice, or two at
once, is harmless, since each address's day is claimed by a unique row in the transaction that queues its
mail.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from celery import shared_task

from service.domain import notifications
from service.domain.links import current_links
from service.infra.db import get_session
from service.infra.logfmt import log
from service.infra.mail_wakeup import throttled_delivery_task

logger = logging.getLogger(__name__)

SEND_DIGESTS = "worker.tasks.digests.send_daily_digests"


@shared_task(name=SEND_DIGESTS, acks_late=True)
def send_daily_digests(now: str | None = None) -> dict[str, Any]:
    """One round of digests. ``now`` (ISO 8601) moves the clock, for tests only; beat sends none."""
    session = get_session()
    with throttled_delivery_task(session):  # one commit per address: not a delivery task each
        report = notifications.send_digests(session, current_links(), now=datetime.fromisoformat(now) if now else None)
    if report.claimed or report.errors:
        log(logger, logging.INFO, "digest.sent", claimed=report.claimed, mailed=report.mailed, errors=report.errors)
    return notifications.digest_summary(report)
