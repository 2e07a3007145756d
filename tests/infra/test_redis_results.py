"""service.infra.redis_results: a wait for a result on Redis that a lost connection cannot make miss it."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from celery import Celery
from flask import Flask

from service.infra.redis_results import RedisBackend
from tests.processes import OwnRedis


def test_a_redis_result_store_is_named_with_the_backend_that_cannot_miss_a_result(
    make_app: Callable[..., Flask],
) -> None:
    for url in ("redis://redis.example:6379/1", "rediss://redis.example:6380/1?ssl_cert_reqs=CERT_REQUIRED"):
        celery = make_app(RESULT_BACKEND=url).extensions["celery"]
        assert celery.conf.result_backend == f"service.infra.redis_results:RedisBackend+{url}"
        assert type(celery.backend) is RedisBackend and celery.backend.url == url


def test_a_result_stored_as_the_wait_reconnects_after_redis_came_back_empty_is_not_missed(
    make_app: Callable[..., Flask], own_redis: OwnRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seen once: just after Redis restarted, a task's result was stored while the wait for it was reconnecting,
    # and the wait got no answer in 30 s. The subscription sent right after the restart went nowhere (the old
    # connection was dead), so the wait reconnects; Celery's own reconnection read the results stored (MGET)
    # before it subscribed again, and a result stored in between was lost. Here the worker (another client)
    # stores the result at the worst moment: as the new connection subscribes.
    url = own_redis.url
    celery = make_app(BROKER_URL=url, RESULT_BACKEND=url).extensions["celery"]
    worker = Celery(broker=url, backend=url).backend

    def result_of(task_id: str, stored_by: Callable[[], None]) -> Any:
        celery.backend.result_consumer.consume_from(task_id)  # as apply_async does, before it sends the task
        stored_by()
        return celery.AsyncResult(task_id).get(timeout=5)

    first = str(uuid.uuid4())
    assert result_of(first, lambda: worker.store_result(first, "pong", "SUCCESS")) == "pong"

    own_redis.stop()
    own_redis.start()  # empty
    second = str(uuid.uuid4())
    client = celery.backend.client
    make_pubsub = client.pubsub

    def pubsub_whose_subscription_comes_after_the_result(**options: Any) -> Any:
        pubsub = make_pubsub(**options)
        subscribe = pubsub.subscribe

        def subscribe_once_the_result_is_stored(*channels: Any) -> Any:
            worker.store_result(second, "pong", "SUCCESS")
            return subscribe(*channels)

        pubsub.subscribe = subscribe_once_the_result_is_stored
        return pubsub

    monkeypatch.setattr(client, "pubsub", pubsub_whose_subscription_comes_after_the_result)
    assert result_of(second, lambda: None) == "pong"
