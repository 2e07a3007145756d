"""Celery tasks, one module per concern. Workers import this package (``include``)."""

from worker.tasks import chat, deadlines, digests, housekeeping, mail, ping

__all__ = ["chat", "deadlines", "digests", "housekeeping", "mail", "ping"]
