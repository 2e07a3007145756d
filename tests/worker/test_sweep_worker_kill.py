"""The deadline sweep in a real worker process (``smallworld worker`` on Redis and PostgreSQL), its pool process
killed in the middle of an auto-pass: the lost sweep is not run again, and the next sweep does its work, once.

A sweep is periodic (beat sends one every ``SMALLWORLD_SWEEP_SECONDS``) and finds in the database whatever is
due, so a sweep lost with its worker is made moot by the next one (``worker/tasks/deadlines.py``); a redelivered
one would come only after Redis's visibility timeout (an hour), long expired. To stop the sweep midway, the test
holds, in a transaction of its own, the mail the auto-pass must write (its dedupe key, inserted and not
committed): the sweep locks the game, then waits there, which ``pg_stat_activity`` shows.
"""

from __future__ import annotations

from datetime import timedelta

import psutil
import pytest
import sqlalchemy as sa
from flask import Flask

from emails.messages import AutoPassed
from service.domain.models import GameAction, OutboxMail
from tests.worker.conftest import WorkerStack, game_row, logged, new_game, outbox, wait_until
from worker.tasks.deadlines import SWEEP_DEADLINES

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.processes]


WORKER_STACK = {"concurrency": 1, "BASE_URL": "https://smallworld.example"}


def sweep_waiting(engine: sa.Engine) -> bool:
    """Whether a backend waits for a lock while writing a mail (the sweep's auto-pass, midway)."""
    with engine.connect() as connection:
        waiting = connection.execute(
            sa.text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%INTO outbox%'"
            )
        ).scalar_one()
    return bool(waiting)


def auto_passes(app: Flask, game_id: int) -> list[GameAction]:
    return logged(app, game_id, "auto_pass")


def test_a_sweep_lost_with_its_killed_pool_process_is_made_moot_by_the_next_sweep(stack: WorkerStack) -> None:
    game_id = new_game(stack.app)
    game = game_row(stack.app, game_id)
    assert game.deadline_at is not None
    due = game.deadline_at + timedelta(seconds=1)
    engine = sa.create_engine(stack.database_url.replace("postgresql://", "postgresql+psycopg://", 1))
    held = engine.connect()
    try:
        # The auto-pass's mail, by its dedupe key, and of no game: a row naming the game would hold a lock on it
        # (its foreign key's), and the sweep would pass the game by (``SKIP LOCKED``).
        mail = AutoPassed(
            game_id=game_id, game_name="x", player_name="x", reason="deadline", defending=False, version=2
        )
        held.execute(
            sa.insert(OutboxMail.__table__),  # type: ignore[attr-defined]
            {
                "to_email": "held@example.org",
                "template": "auto_passed",
                "context": {},
                "message_id": "<held@example.org>",
                "dedupe_key": mail.dedupe_key,
                "status": "sent",
                "attempts": 0,
                "created_at": game.deadline_at,
                "may_have_left": False,
            },
        )
        celery = stack.app.extensions["celery"]
        celery.send_task(SWEEP_DEADLINES, kwargs={"now": due.isoformat()})
        wait_until(lambda: sweep_waiting(engine), "the sweep to be midway through the auto-pass")
        assert stack.worker is not None
        [pool] = psutil.Process(stack.worker.pid).children()
        pool.kill()  # the process running the sweep: its transaction ends with its connection
        pool.wait(timeout=10)
    finally:
        held.rollback()
        held.close()
        engine.dispose()
    assert auto_passes(stack.app, game_id) == [] and game_row(stack.app, game_id).version == 1
    # Not given back (a sweep has no ``reject_on_worker_lost``): the worker goes on with the next task at once.
    assert stack.worker.poll() is None
    swept = stack.run(SWEEP_DEADLINES, now=(due + timedelta(seconds=30)).isoformat())  # beat's next
    assert (swept["auto_passed"], swept["errors"]) == (1, 0)
    assert [(a.seat, a.version) for a in auto_passes(stack.app, game_id)] == [(0, 2)]
    assert len(outbox(stack.app, "auto_passed", game_id)) == 1
    # And again: nothing more to do, the lost sweep included.
    again = stack.run(SWEEP_DEADLINES, now=(due + timedelta(seconds=60)).isoformat())
    assert again["auto_passed"] == 0
    assert len(auto_passes(stack.app, game_id)) == 1
