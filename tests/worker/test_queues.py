"""service.infra.queues and the beat schedule: mail on its own queue, consumed by every `smallworld worker`;
the periodic sweep and drain; late acknowledgement for the tasks that may run twice."""

from __future__ import annotations

import doctest

from flask import Flask

from service.infra import queues
from service.infra.mail_wakeup import DELIVER_CHAT
from service.infra.schedule import BEAT_SCHEDULE
from worker.tasks.chat import deliver_chat_notices
from worker.tasks.deadlines import SWEEP_DEADLINES, sweep_deadlines
from worker.tasks.mail import DELIVER_OUTBOX, deliver_outbox


def test_mail_goes_to_the_mail_queue_and_the_rest_to_the_default_one(app: Flask) -> None:
    celery_app = app.extensions["celery"]
    route = celery_app.amqp.router.route
    assert route({}, DELIVER_OUTBOX)["queue"].name == "mail"
    assert route({}, SWEEP_DEADLINES)["queue"].name == "celery"


def test_a_worker_consumes_every_queue_unless_told_otherwise() -> None:
    assert doctest.testmod(queues).failed == 0
    assert queues.with_queues([]) == ["-Q", "celery,mail,chat"]
    assert queues.with_queues(["--queues=mail"]) == ["--queues=mail"]


def test_beat_sweeps_the_deadlines_and_drains_the_outbox_every_30_seconds() -> None:
    tasks = {entry["task"]: entry for entry in BEAT_SCHEDULE.values()}
    for name in (SWEEP_DEADLINES, DELIVER_OUTBOX):
        assert tasks[name]["schedule"].total_seconds() == 30
        assert tasks[name]["options"]["expires"] < 30  # a stale one is dropped, not run late


def test_the_drain_and_the_sweep_are_acknowledged_late_since_running_them_twice_is_harmless(app: Flask) -> None:
    # A worker killed midway leaves the message to another worker; rows are claimed in the database and
    # every auto-pass is guarded by the game's version, so a second run does nothing twice.
    assert deliver_outbox.acks_late and sweep_deadlines.acks_late
    assert app.extensions["celery"].conf.worker_prefetch_multiplier == 1


def test_chat_notices_go_to_their_own_queue_drained_every_30_seconds_and_acknowledged_late(app: Flask) -> None:
    # A chat that is down or slow never holds up mail: its task is on another queue (ARCHITECTURE §10).
    route = app.extensions["celery"].amqp.router.route
    assert route({}, DELIVER_CHAT)["queue"].name == "chat"
    tasks = {entry["task"]: entry for entry in BEAT_SCHEDULE.values()}
    assert tasks[DELIVER_CHAT]["schedule"].total_seconds() == 30
    assert deliver_chat_notices.name == DELIVER_CHAT and deliver_chat_notices.acks_late
