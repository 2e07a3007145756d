"""Celery's Redis result backend, whose wait for a result cannot miss it when the connection to Redis is lost.

Whoever waits for a task's result (``AsyncResult.get``: the tests, a diagnosis by hand) subscribes to the result's
channel, and the worker publishes the result there as it stores it. When that subscription's connection is
lost, Celery's ``ResultConsumer._reconnect_pubsub`` (celery/backends/redis.py, since celery/celery#5921) first
reads the results stored meanwhile (``MGET``), then subscribes on a new connection: a result stored between
the two is neither read nor heard of, and ``get`` waits until its timeout. After Redis restarts, the first wait
meets that window every time: the subscription sent on the old connection right after the restart went
nowhere (the dead connection takes the command without a word), so the wait reconnects just as the worker
stores the result. Once in the suite, a ping sent just after an outage got no answer in 30 s
(tests/worker/test_worker_processes.py).

:class:`ResultConsumer` reconnects the other way round: it subscribes, waits until Redis has confirmed every
subscription, and only then reads what was stored before. Every result is then either read or heard.
Everything else is Celery's own. Celery uses it for ``redis://`` and ``rediss://`` result stores
(``result_backend``, ``service.infra.celery``).
"""

from __future__ import annotations

import time
from typing import Any

import redis
from celery.backends import redis as celery_redis

#: How long a new connection's subscriptions may take to be confirmed before it counts as lost (and is made
#: again, by Celery's retries of a lost connection).
CONFIRM_SECONDS = 10.0


class ResultConsumer(celery_redis.ResultConsumer):
    def _reconnect_pubsub(self) -> None:
        with self._locked():
            # The results whose wait was given up meanwhile are not subscribed to again (as Celery does).
            self.subscribed_to -= self._pending_unsubscribe
            self._pending_unsubscribe.clear()
            if not self.subscribed_to:  # nothing to miss: Celery's own reconnection
                super()._reconnect_pubsub()
                return
            self._pubsub = None
            self.backend.client.connection_pool.reset()
            pubsub = self.backend.client.pubsub(ignore_subscribe_messages=False)
            pubsub.subscribe(*self.subscribed_to)
            heard = _until_confirmed(pubsub, len(self.subscribed_to))
            pubsub.ignore_subscribe_messages = True
            self._pubsub = pubsub
            # Every result stored from now on is heard; those stored before are read.
            for message in heard:
                self.on_state_change(self._decode_result(message["data"]), message)
            for meta in self.backend.client.mget(self.subscribed_to):
                if meta:
                    self.on_state_change(self._decode_result(meta), None)


def _until_confirmed(pubsub: Any, count: int) -> list[dict[str, Any]]:
    """Read ``pubsub`` until Redis has confirmed ``count`` subscriptions; the results heard meanwhile."""
    heard = []
    deadline = time.monotonic() + CONFIRM_SECONDS
    while count:
        left = deadline - time.monotonic()
        if left <= 0:
            raise redis.exceptions.TimeoutError(f"Redis did not confirm {count} subscriptions in time")
        message = pubsub.get_message(timeout=left)
        if message is None:
            continue
        if message["type"] == "subscribe":
            count -= 1
        elif message["type"] == "message":
            heard.append(message)
    return heard


class RedisBackend(celery_redis.RedisBackend):
    ResultConsumer = ResultConsumer
