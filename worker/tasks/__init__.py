"""Celery tasks, one module per concern. Workers import this package (``include``)."""

from worker.tasks import bots, chat, deadlines, digests, housekeeping, mail, ping, tally

__all__ = ["bots", "chat", "deadlines", "digests", "housekeeping", "mail", "ping", "tally"]
