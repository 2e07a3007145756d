"""The Celery queues. Mail has its own, so a slow or unreachable SMTP server never delays a deadline sweep;
chat notices have theirs, so a chat that is down never delays mail.

``smallworld worker`` (and so ``smallworld serve``) consumes every queue unless told otherwise (``-Q``); at
scale, workers may be split by queue (``smallworld worker -Q mail``).
"""

from collections.abc import Sequence

DEFAULT = "celery"
MAIL = "mail"
CHAT = "chat"
ALL = (DEFAULT, MAIL, CHAT)

#: Celery's ``task_routes``: by task name, so ``send_task`` by name is routed too.
ROUTES = {"worker.tasks.mail.*": {"queue": MAIL}, "worker.tasks.chat.*": {"queue": CHAT}}


def with_queues(worker_args: Sequence[str]) -> list[str]:
    """``celery worker`` arguments that consume every queue, unless they already name queues.

    >>> with_queues(["--concurrency", "2"])
    ['-Q', 'celery,mail,chat', '--concurrency', '2']
    >>> with_queues(["-Q", "mail"])
    ['-Q', 'mail']
    """
    if any(arg in ("-Q", "--queues") or arg.startswith(("-Q", "--queues=")) for arg in worker_args):
        return list(worker_args)
    return ["-Q", ",".join(ALL), *worker_args]
