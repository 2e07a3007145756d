"""service.infra.celery and service.infra.broker: Celery settings per deployment, the embedded broker."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from service.infra.broker import check_broker, prepare_embedded_broker, prune_delivered_messages
from service.infra.celery import SteadyConsumer, celery_config
from service.infra.schedule import BEAT_SCHEDULE, EMBEDDED_BEAT_SCHEDULE


def test_the_embedded_deployment_keeps_the_beat_schedule_in_the_instance_folder(
    app: Flask,
) -> None:
    settings = celery_config(app.config)

    assert settings["broker_url"].startswith("sqla+sqlite:///")
    assert settings["beat_schedule_filename"] == str(Path(app.instance_path) / "celerybeat-schedule")
    assert "beat_scheduler" not in settings
    assert settings["beat_schedule"] == {**BEAT_SCHEDULE, **EMBEDDED_BEAT_SCHEDULE}


def test_a_redis_deployment_uses_redbeat_so_only_one_beat_runs(
    make_app: Callable[..., Flask],
) -> None:
    app = make_app(BROKER_URL="redis://redis.example:6379/0")
    settings = celery_config(app.config)

    assert settings["beat_scheduler"] == "redbeat.RedBeatScheduler"
    assert settings["redbeat_redis_url"] == "redis://redis.example:6379/0"
    assert settings["beat_schedule"] == BEAT_SCHEDULE


def test_results_are_not_kept_unless_a_backend_is_configured(app: Flask) -> None:
    celery_app = app.extensions["celery"]
    assert celery_app.conf.task_ignore_result is True
    assert celery_app.conf.result_backend is None


def test_delivered_messages_are_pruned_from_the_embedded_broker(app: Flask) -> None:
    celery_app = app.extensions["celery"]
    prepare_embedded_broker(celery_app)
    with celery_app.connection_for_write() as connection:
        queue = connection.SimpleQueue("pruning-test")
        queue.put({"n": 1})
        queue.put({"n": 2})
        queue.get(timeout=5).ack()
        queue.close()

    assert prune_delivered_messages(celery_app.conf.broker_url) == 1
    assert prune_delivered_messages(celery_app.conf.broker_url) == 0


def test_preparing_the_embedded_broker_again_is_harmless(app: Flask) -> None:
    celery_app = app.extensions["celery"]
    prepare_embedded_broker(celery_app)
    prepare_embedded_broker(celery_app)

    broker_file = Path(app.instance_path) / "broker.sqlite"
    with closing(sqlite3.connect(broker_file)) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert connection.execute("SELECT name FROM kombu_queue ORDER BY name").fetchall() == [
            ("celery",),
            ("chat",),
            ("mail",),
        ]


def test_checking_the_embedded_broker_again_and_again_keeps_no_connection(app: Flask) -> None:
    # /health checks the broker on every call; kombu's SQLite transport would keep a connection per
    # check and refuse the 216th after a 30 s wait.
    celery_app = app.extensions["celery"]
    started = time.monotonic()
    for _ in range(300):
        check_broker(celery_app, timeout=2)
    assert time.monotonic() - started < 20


def test_a_worker_tries_a_lost_broker_again_for_ever_every_few_seconds(make_app: Callable[..., Flask]) -> None:
    settings = celery_config(make_app(BROKER_URL="redis://redis.example:6379/0").config)
    assert settings["broker_connection_retry"] is True and settings["broker_connection_retry_on_startup"] is True
    assert settings["broker_connection_max_retries"] is None  # Celery's default: 100 tries, then the worker exits
    assert settings["worker_consumer"] == "service.infra.celery:SteadyConsumer"

    asked: list[dict[str, Any]] = []

    class Connection:
        def ensure_connection(self, *args: Any, **kwargs: Any) -> Connection:
            asked.append(kwargs)
            return self

    consumer = SteadyConsumer.__new__(SteadyConsumer)  # only its reconnection, not a whole worker
    consumer.app = make_app(BROKER_URL="redis://redis.example:6379/0").extensions["celery"]
    consumer.first_connection_attempt, consumer.broker_connection_retry_attempt = False, 0
    consumer.ensure_connected(Connection())
    [options] = asked
    assert (options["interval_start"], options["interval_step"], options["interval_max"]) == (1, 1, 5)


def test_output_of_worker_and_beat_goes_out_as_it_is_not_as_one_warning_per_write(app: Flask) -> None:
    assert celery_config(app.config)["worker_redirect_stdouts"] is False


@pytest.mark.redis
def test_on_redis_the_web_publishes_its_tasks_through_one_kept_client(
    make_app: Callable[..., Flask], redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import redis
    from kombu import pools

    from service.infra import redis_transport
    from service.infra.mail_wakeup import DELIVER_OUTBOX, _send_delivery_task

    app = make_app(BROKER_URL=redis_url)
    assert celery_config(app.config)["broker_transport"] == "service.infra.redis_transport:Transport"
    made = []
    create = redis_transport.Channel._create_client

    def counted(self: Any, asynchronous: bool = False) -> Any:
        if not asynchronous:  # the consumer's client, made once per channel by kombu itself
            made.append(self)
        return create(self, asynchronous)

    monkeypatch.setattr(redis_transport.Channel, "_create_client", counted)
    pools.reset()  # kombu keeps producers per broker for the process: another test's channel may be reused
    with app.app_context():
        for _ in range(5):
            _send_delivery_task(DELIVER_OUTBOX)
    # kombu made a client per message; the channel now keeps the one it made.
    assert len(made) == 1
    queued = redis.Redis.from_url(redis_url).lrange("mail", 0, -1)
    assert len(queued) == 5
    assert all(json.loads(message)["headers"]["task"] == DELIVER_OUTBOX for message in queued)
