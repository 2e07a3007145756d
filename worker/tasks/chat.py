"""Chat notices: post the due notices of every game's chat (apprise), on the ``chat`` queue.

Sent after every commit that wrote a notice, and by beat every 30 seconds (which retries those that
failed). The drain is mail's (``service.drain``); retries and a task run again are as for mail
(``service.drain.queue.run_task``).
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from flask import current_app

from service.domain import chat_notices
from service.drain.queue import run_task
from service.infra.chat import ChatPolicy
from service.infra.db import get_session
from service.infra.mail_wakeup import DELIVER_CHAT


@shared_task(name=DELIVER_CHAT, acks_late=True)
def deliver_chat_notices(now: str | None = None) -> dict[str, Any]:
    """Send every due chat notice. ``now`` (ISO 8601) moves the clock, for tests only."""
    config = current_app.config
    settings, policy = chat_notices.NoticeSettings.from_config(config), ChatPolicy.from_config(config)
    return run_task("chat", lambda at: chat_notices.deliver_due_notices(get_session(), settings, policy, now=at), now)
