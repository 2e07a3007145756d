"""Real worker and beat processes (``smallworld worker`` / ``smallworld beat``) on Redis."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import redis
from flask import Flask
from redbeat import RedBeatSchedulerEntry

from service.infra.beat import SteadyRedBeatScheduler
from service.infra.schedule import BEAT_SCHEDULE, OWN_PERIOD
from tests.processes import OwnRedis, running
from tests.worker.conftest import wait_until
from worker.tasks.ping import ping

pytestmark = [pytest.mark.redis, pytest.mark.processes]

Processes = Callable[..., tuple[Flask, dict[str, str]]]  # the ``app_and_environment`` fixture

#: The tasks beat sends every ``SWEEP_SECONDS``, all at each tick (the others keep their own period).
SWEEP_TASKS = [re.escape(entry["task"]) for name, entry in BEAT_SCHEDULE.items() if name not in OWN_PERIOD]


def test_a_worker_on_redis_runs_the_ping_task(app_and_environment: Processes, redis_url: str, tmp_path: Path) -> None:
    app, env = app_and_environment(BROKER_URL=redis_url, RESULT_BACKEND=redis_url)
    log = tmp_path / "worker.log"
    with running(["worker", "--concurrency", "1"], env, log):
        try:
            result = app.extensions["celery"].tasks[ping.name].delay()
            assert result.get(timeout=30) == "pong"
        except BaseException:
            print(log.read_text())
            raise


def test_beat_on_redis_holds_the_redbeat_lock(app_and_environment: Processes, redis_url: str, tmp_path: Path) -> None:
    app, env = app_and_environment(BROKER_URL=redis_url)
    lock_key = app.extensions["celery"].conf.redbeat_key_prefix + ":lock"
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


def test_beat_and_a_worker_ride_out_a_redis_outage_without_a_restart_and_say_so_once(
    app_and_environment: Processes, own_redis: OwnRedis, tmp_path: Path
) -> None:
    """Redis stops for a while and comes back empty (it keeps nothing): beat neither exits nor floods its log,
    takes its lock again and sends the sweeps again; the worker reconnects within seconds and works."""
    url = own_redis.url
    app, env = app_and_environment(BROKER_URL=url, RESULT_BACKEND=url, SWEEP_SECONDS=1)
    lock_key = app.extensions["celery"].conf.redbeat_key_prefix + ":lock"
    beat_log, worker_log = tmp_path / "beat.log", tmp_path / "worker.log"
    with (
        running(["beat", "--max-interval", "2"], env, beat_log) as beat,
        running(["worker", "--concurrency", "1"], env, worker_log) as worker,
    ):
        try:
            client = redis.Redis.from_url(url)
            wait_until(lambda: client.exists(lock_key), "beat to take its lock")
            assert ping.apply_async(ignore_result=False).get(timeout=30) == "pong"
            sent_before = beat_log.read_text().count("Sending due task")

            # The outage's lines are counted from the moment Redis stops answering to the moment it answers
            # again, not from when the test asks it to stop: beat sends every sweep each second, a line each,
            # until Redis is gone. Redis is stopped between two ticks, once the worker is done with the sweeps
            # of the first: one under way as it goes would log each of its sweeps twice ("Sending" and
            # "beat.not_sent"), and the worker a traceback for an acknowledgement that could not be sent.
            wait_until(lambda: quiet(beat_log, worker_log, client), "beat and the worker done with a tick's sweeps")
            own_redis.stop()  # returns once PING fails (tests/processes.py)
            lines_before = len(beat_log.read_text().splitlines())
            time.sleep(12)
            lines_during = len(beat_log.read_text().splitlines()) - lines_before  # Redis answers only once started
            own_redis.start()  # empty: no lock, no schedule
            back = time.monotonic()

            wait_until(lambda: client.exists(lock_key), "beat to take its lock again", timeout=20)
            wait_until(lambda: beat_log.read_text().count("Sending due task") > sent_before + 2, "the sweeps again")
            assert ping.apply_async(ignore_result=False).get(timeout=30) == "pong"
            worker_back = time.monotonic() - back
            assert beat.poll() is None and worker.poll() is None, "a process exited"
        except BaseException:
            print(beat_log.read_text()[-5000:], worker_log.read_text()[-5000:])
            raise
    text = beat_log.read_text()
    assert text.count("beat.broker_lost") == 1 and text.count("beat.broker_back") == 1
    assert "Traceback" not in text
    # A sweep is due every second: a beat that logged each failed try would write 12 lines or more here.
    assert lines_during < 5, f"{lines_during} lines in beat's log during the outage"
    # Gossip, restarted while Redis was away, logged an ERROR with a 171-line traceback: the worker runs without
    # the parts it does not use (service.infra.celery.WORKER_WITHOUT), and says nothing of them.
    worker_text = worker_log.read_text()
    assert "Traceback" not in worker_text and "Error on restarting" not in worker_text
    assert "mingle:" not in worker_text
    retries = [line for line in worker_text.splitlines() if "Trying again in" in line]
    assert len(retries) <= 5, retries  # one per kind, not one per try
    assert worker_back < 10


def test_a_due_task_whose_next_run_beat_cannot_store_as_redis_goes_away_is_one_line_not_a_traceback(
    make_app: Callable[..., Flask], own_redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    # Seen in the outage test above: Redis went just as beat stored a due sweep's next run (RedBeat's
    # ``reserve``, before Celery's own handling of a failed send), and beat logged "Message Error" with three
    # tracebacks.
    url = own_redis.url
    celery = make_app(BROKER_URL=url, RESULT_BACKEND=url).extensions["celery"]
    scheduler = SteadyRedBeatScheduler(app=celery, lazy=True)
    due = datetime.now(UTC) - timedelta(seconds=10)
    entry = RedBeatSchedulerEntry("sweep-deadlines", ping.name, 1.0, app=celery, last_run_at=due)
    assert entry.is_due().is_due
    own_redis.stop()
    with caplog.at_level(logging.DEBUG):
        scheduler.maybe_due(entry)
    said = [record for record in caplog.records if "beat.not_sent" in record.getMessage()]
    assert len(said) == 1 and "sweep-deadlines" in said[0].getMessage(), caplog.text
    assert not [record for record in caplog.records if record.exc_info or "Message Error" in record.getMessage()]


def quiet(beat_log: Path, worker_log: Path, client: redis.Redis) -> bool:
    """Beat's latest tick has sent every sweep, and the worker has received each and acknowledged it (kombu keeps
    a message it delivered in its ``unacked`` hash until then)."""
    received = len(re.findall(r"Task ({})\[\S+\] received".format("|".join(SWEEP_TASKS)), worker_log.read_text()))
    sent = beat_log.read_text().count("Sending due task")
    return 0 < sent == received and sent % len(SWEEP_TASKS) == 0 and not client.hlen("unacked")


def test_a_due_task_beat_cannot_send_as_redis_goes_away_is_one_line_not_a_traceback(
    make_app: Callable[..., Flask], own_redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    # Seen once in the outage test above: Redis went between the tick's lock extension and the sending of a
    # due sweep, and Celery's apply_entry logged "Message Error" with its tracebacks.
    url = own_redis.url
    app = make_app(BROKER_URL=url, RESULT_BACKEND=url)
    celery = app.extensions["celery"]
    # Give up at once rather than after the result store's retries (about 30 s): what is logged is the same.
    celery.conf.result_backend_transport_options = {"retry_policy": {"max_retries": 0}}
    scheduler = SteadyRedBeatScheduler(app=celery, lazy=True)
    entry = RedBeatSchedulerEntry("sweep-deadlines", ping.name, 1.0, app=celery)
    own_redis.stop()
    with caplog.at_level(logging.DEBUG):
        scheduler.apply_entry(entry, producer=None)
    said = [record for record in caplog.records if "beat.not_sent" in record.getMessage()]
    assert len(said) == 1 and "sweep-deadlines" in said[0].getMessage(), caplog.text
    assert not [record for record in caplog.records if record.exc_info or "Message Error" in record.getMessage()]


def test_beat_sends_every_sweep_at_the_first_tick_after_redis_comes_back_empty(
    make_app: Callable[..., Flask], own_redis: OwnRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seen in a fault run: Redis came back (empty) after 15 s and beat sent nothing for a whole sweep period
    # (RedBeat stores a task it installs as run just now), though deploy/README.md says 3 s. Sweeps every 30 s,
    # as deployed: the tick after Redis is back sends each of them.
    url = own_redis.url
    celery = make_app(BROKER_URL=url, RESULT_BACKEND=url, SWEEP_SECONDS=30).extensions["celery"]
    scheduler = SteadyRedBeatScheduler(app=celery, lazy=True)
    sent: list[str] = []

    def send(entry: RedBeatSchedulerEntry, *args: object, **kwargs: object) -> None:
        scheduler.reserve(entry)  # its next run stored, as Celery's own sending does; the task not published
        sent.append(entry.name)

    monkeypatch.setattr(scheduler, "apply_async", send)
    scheduler.lock = redis.Redis.from_url(url).lock("taken-at-start")  # as beat's start does (beat_init)
    scheduler.lock.acquire()
    scheduler.lock_key = "smallworld:redbeat::lock"
    scheduler.setup_schedule()
    scheduler.tick()
    assert sent == []  # installed as run just now: the first sweeps a period later (Celery's own start)
    own_redis.stop()
    scheduler.tick()  # Redis is gone: beat.broker_lost
    own_redis.start()  # empty: no lock, no schedule
    scheduler.tick()
    assert sorted(sent) == sorted(celery.conf.beat_schedule)
    sent.clear()
    scheduler.tick()
    assert sent == []  # each once; the next a period later
