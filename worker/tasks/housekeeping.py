"""Housekeeping: periodic clean-ups that keep the service's own storage small."""

from celery import current_app, shared_task

from service.infra import broker


@shared_task
def prune_delivered_messages() -> int:
    """Delete messages the embedded broker already delivered (it only hides them)."""
    return broker.prune_delivered_messages(current_app.conf.broker_url)
