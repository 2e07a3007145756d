"""Celery tasks, one module per concern. Workers import this package (``include``)."""

from worker.tasks import announce, bots, chat, deadlines, digests, housekeeping, mail, ping, tally

__all__ = ["announce", "bots", "chat", "deadlines", "digests", "housekeeping", "mail", "ping", "tally"]
