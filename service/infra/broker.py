"""The message broker: reachability, and the embedded broker used when no Redis is configured.

Why the embedded broker is kombu's SQLAlchemy transport on a SQLite file
(``sqla+sqlite:///<instance>/broker.sqlite``) and not the ``filesystem://`` transport: both need no
server, but only the SQLite one hands each message to exactly one of several worker processes
safely. A worker claims a message inside ``BEGIN IMMEDIATE`` (SQLite's write lock), whereas the
filesystem transport lets a worker pick up a message file the sender is still writing (kombu #1551:
the worker dies on the empty JSON) and moves files through the shared temporary folder.

The SQLite transport has two weaknesses, handled here. Processes starting together race to create
the queue's row, and the loser crashes: :func:`prepare_embedded_broker` creates it and tolerates the
race; ``smallworld serve`` runs it before starting anything, and every worker and beat on start.
Delivered messages are only hidden, never deleted: :func:`prune_delivered_messages` deletes them,
hourly from beat (``service/infra/schedule.py``).
"""

from __future__ import annotations

from celery import Celery
from sqlalchemy import create_engine
from sqlalchemy.exc import IntegrityError

from service.infra import queues

EMBEDDED_SCHEMES = ("sqla+sqlite://", "sqlalchemy+sqlite://")


def is_embedded(broker_url: str) -> bool:
    """Whether ``broker_url`` names the embedded (SQLite) broker."""
    return broker_url.startswith(EMBEDDED_SCHEMES)


def check_broker(celery_app: Celery, timeout: float) -> None:
    """Talk to the broker once; raise if it does not answer within about ``timeout`` seconds."""
    broker_url = celery_app.conf.broker_url
    if is_embedded(broker_url):
        # The embedded broker is a SQLite file: opening and querying it is the round trip. Not
        # through kombu, whose SQLAlchemy transport never closes a channel's session: every check
        # would keep one connection of its pool, until the pool ran dry after about 200 checks.
        engine = create_engine(_database_url(broker_url), connect_args={"timeout": timeout})
        try:
            with engine.connect() as connection:
                connection.exec_driver_sql("SELECT 1")
        finally:
            engine.dispose()
        return
    transport_options = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
    with celery_app.connection_for_write(connect_timeout=timeout, transport_options=transport_options) as connection:
        # One quick retry at most: a health check must answer, not wait for the broker.
        connection.ensure_connection(max_retries=1, interval_start=0, timeout=timeout)
        # A real round trip (it reports the queue's length), and harmless: workers declare it too.
        connection.default_channel.queue_declare(queue=celery_app.conf.task_default_queue)


def prepare_embedded_broker(celery_app: Celery) -> None:
    """Make the embedded broker ready for several processes; safe to run from several at once."""
    broker_url = celery_app.conf.broker_url
    engine = create_engine(_database_url(broker_url))
    with engine.connect() as connection:
        # WAL is a property of the file: set once, it lets workers poll while others send.
        connection.exec_driver_sql("PRAGMA journal_mode=WAL")
    engine.dispose()
    for queue in queues.ALL:  # the mail queue too: the web server sends to it before a worker consumes it
        try:
            _declare(celery_app, queue)  # the first one also creates the transport's tables
        except IntegrityError:
            # Another process created the queue's row at the same moment; it exists now.
            _declare(celery_app, queue)
    prune_delivered_messages(broker_url)


def _declare(celery_app: Celery, queue: str) -> None:
    with celery_app.connection_for_write() as connection:
        connection.default_channel.queue_declare(queue=queue)


def prune_delivered_messages(broker_url: str) -> int:
    """Delete the messages the embedded broker has already delivered; return how many."""
    engine = create_engine(_database_url(broker_url), connect_args={"timeout": 30})
    try:
        with engine.begin() as connection:
            if not engine.dialect.has_table(connection, "kombu_message"):
                return 0
            deleted = connection.exec_driver_sql("DELETE FROM kombu_message WHERE NOT visible")
            return deleted.rowcount
    finally:
        engine.dispose()


def _database_url(broker_url: str) -> str:
    """The SQLAlchemy URL inside an embedded broker URL (``sqla+sqlite:///x`` → ``sqlite:///x``)."""
    if not is_embedded(broker_url):
        raise ValueError(f"not an embedded broker URL: {broker_url}")
    return broker_url.split("+", 1)[1]
