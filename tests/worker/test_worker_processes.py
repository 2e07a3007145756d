"""Real worker and beat processes (``smallworld worker`` / ``smallworld beat``) on Redis."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from flask import Flask

from tests.processes import running, service_environment
from worker.tasks.ping import ping

pytestmark = [pytest.mark.redis, pytest.mark.processes]


def test_a_worker_on_redis_runs_the_ping_task(make_app: Callable[..., Flask], redis_url: str, tmp_path: Path) -> None:
    app = make_app(BROKER_URL=redis_url, RESULT_BACKEND=redis_url)
    env = service_environment(
        Path(app.instance_path),
        SMALLWORLD_BROKER_URL=redis_url,
        SMALLWORLD_RESULT_BACKEND=redis_url,
    )
    log = tmp_path / "worker.log"
    with running(["worker", "--concurrency", "1"], env, log):
        try:
            result = app.extensions["celery"].tasks[ping.name].delay()
            assert result.get(timeout=30) == "pong"
        except BaseException:
            print(log.read_text())
            raise


def test_beat_on_redis_holds_the_redbeat_lock(make_app: Callable[..., Flask], redis_url: str, tmp_path: Path) -> None:
    app = make_app(BROKER_URL=redis_url)
    lock_key = app.extensions["celery"].conf.redbeat_key_prefix + ":lock"
    env = service_environment(Path(app.instance_path), SMALLWORLD_BROKER_URL=redis_url)
    client = redis.Redis.from_url(redis_url)
    log = tmp_path / "beat.log"
    with running(["beat"], env, log):
        deadline = time.monotonic() + 20
        while not client.exists(lock_key):
            if time.monotonic() > deadline:
                print(log.read_text())
                pytest.fail(f"beat did not take the RedBeat lock {lock_key!r}")
            time.sleep(0.2)
    client.close()
