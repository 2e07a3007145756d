"""Celery tasks, one module per concern. Workers import this package (``include``)."""

from worker.tasks import chat, deadlines, housekeeping, mail, ping, tally

__all__ = ["chat", "deadlines", "housekeeping", "mail", "ping", "tally"]
