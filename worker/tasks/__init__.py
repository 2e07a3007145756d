"""Celery tasks, one module per concern. Workers import this package (``include``)."""

from worker.tasks import deadlines, housekeeping, mail, ping

__all__ = ["deadlines", "housekeeping", "mail", "ping"]
