"""A task that does nothing but answer, to prove a worker is consuming from the broker."""

from celery import shared_task


@shared_task(ignore_result=False)
def ping() -> str:
    return "pong"
