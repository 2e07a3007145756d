"""kombu's Redis transport, publishing through one Redis client per channel instead of a new one per message.

kombu's Redis channel makes a new ``redis.Redis`` client for every message it publishes (``conn_or_acquire``
without a client): the connection comes from the channel's pool either way, but each client builds its
table of some 170 response callbacks first. That was about a third of a task's send from the web (the mail
wake-up after a step that passes the turn: 0.7 ms of CPU, 0.25 of it the client). A ``redis.Redis`` client
is safe to share between threads (each command takes a connection from the pool and gives it back), so a
channel keeps the one it made, and makes another only when its pool was replaced (kombu drops the pools
when a channel is closed or a connection lost). Everything else is kombu's own: what is sent, where, and
how a lost broker is retried.

Celery uses it for ``redis://`` and ``rediss://`` brokers (``broker_transport``, ``service.infra.celery``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kombu.transport import redis


class Channel(redis.Channel):
    _kept_client: Any = None

    @contextmanager
    def conn_or_acquire(self, client: Any = None) -> Iterator[Any]:
        if client:
            yield client
            return
        kept = self._kept_client
        if kept is None or kept.connection_pool is not self.pool:
            kept = self._kept_client = self._create_client()
        yield kept


class Transport(redis.Transport):
    Channel = Channel
