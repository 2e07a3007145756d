"""Celery tasks, one module per concern. Workers import this package (``include``)."""

from worker.tasks import housekeeping, ping

__all__ = ["housekeeping", "ping"]
