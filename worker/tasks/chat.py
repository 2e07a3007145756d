"""Chat notices: post the due notices of every game's chat (apprise), on the ``chat`` queue.

Sent after every commit that wrote a notice, and by beat every 30 seconds (which retries those that
failed). Retries are not Celery retries: a failed notice's next attempt is a time in its row, picked up by
a later drain. ``acks_late``: a drain killed midway is run again, harmlessly, since rows are claimed in
the database (``service.domain.chat_notices``).
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from datetime import datetime
from typing import Any

from celery import shared_task
from flask import current_app

from service.domain import chat_notices
from service.infra.chat import ChatPolicy
from service.infra.db import get_session
from service.infra.logfmt import log
from service.infra.mail_wakeup import DELIVER_CHAT

logger = logging.getLogger(__name__)


@shared_task(name=DELIVER_CHAT, acks_late=True)
def deliver_chat_notices(now: str | None = None) -> dict[str, Any]:
    """Send every due chat notice. ``now`` (ISO 8601) moves the clock, for tests only."""
    config = current_app.config
    report = chat_notices.deliver_due_notices(
        get_session(),
        chat_notices.NoticeSettings.from_config(config),
        ChatPolicy.from_config(config),
        now=datetime.fromisoformat(now) if now else None,
    )
    if report.claimed:
        log(
            logger,
            logging.INFO,
            "chat.drained",
            sent=report.sent,
            retried=report.retried,
            failed=report.failed,
            skipped=report.skipped,
        )
    return asdict(report)
