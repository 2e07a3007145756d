"""Housekeeping: periodic clean-ups that keep the service's own storage small, and keep what mail carried
no longer than the retention (``service.domain.retention``)."""

from dataclasses import asdict
from datetime import datetime

import flask
from celery import current_app, shared_task

from service.domain import retention
from service.infra import broker
from service.infra.db import get_session


@shared_task
def prune_delivered_messages() -> int:
    """Delete messages the embedded broker already delivered (it only hides them)."""
    return broker.prune_delivered_messages(current_app.conf.broker_url)


PURGE_OLD_MAIL = "worker.tasks.housekeeping.purge_old_mail"


@shared_task(name=PURGE_OLD_MAIL, acks_late=True)
def purge_old_mail(now: str | None = None) -> dict[str, int]:
    """One retention sweep (``service.domain.retention``): mail bodies and inbound records older than
    ``SMALLWORLD_MAIL_RETENTION_DAYS``. ``now`` (ISO 8601) moves the clock, for tests only; beat sends none.
    ``acks_late``: a sweep run twice, or two at once, purges each row once (the second finds it done)."""
    report = retention.purge_old_mail(
        get_session(),
        int(flask.current_app.config["MAIL_RETENTION_DAYS"]),
        now=datetime.fromisoformat(now) if now else None,
    )
    return asdict(report)
