"""Celery tasks, one module per concern. Workers import this package (``include``)."""

from worker.tasks import bots, chat, deadlines, housekeeping, mail, ping

__all__ = ["bots", "chat", "deadlines", "housekeeping", "mail", "ping"]
