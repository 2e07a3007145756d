"""A step's announcement in a real worker process (``smallworld worker`` on Redis, PostgreSQL, an SMTP server in
the test process): the step's transaction stores the step only, and the job sent after its commit mails the
seat now awaited (ARCHITECTURE §2, "the step does only the step"). A job lost between the commit and the
worker is made up for by the deadline sweep; a job run twice mails once.

These tests leave the announcement to the worker (``announced_by_worker``): the tests' in-process
announcement (``tests/conftest.py``, ``announce_in_process``) is off.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import select

import rules
from service.domain import play
from service.domain.models import Game, OutboxMail, utcnow
from service.infra import mail_wakeup
from service.infra.db import get_session
from tests.smtp import Received
from tests.worker.conftest import WorkerStack, new_game, wait_until
from worker.tasks.announce import announce_step
from worker.tasks.deadlines import SWEEP_DEADLINES

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.processes, pytest.mark.announced_by_worker]

WORKER_STACK = {"BASE_URL": "https://smallworld.example"}


def your_turn(stack: WorkerStack, address: str, game_id: int) -> list[Received]:
    """The "your turn" mails of ``game_id`` that reached ``address`` (by their subject: the game's name first)."""
    return [
        mail for mail in stack.mailbox.to(address) if (mail.headline).startswith(f"[{game_id}] Announced: your turn")
    ]


def pass_seat_on_turn(stack: WorkerStack, game_id: int) -> str:
    """End the turn of the seat on turn (its step auto-passed, as the sweep or the host's "pass now" does):
    the step key the game then awaits, committed."""
    links = stack.app.extensions["smallworld.links"]
    with stack.session():
        session = get_session()
        game = session.get(Game, game_id)
        assert game is not None
        seat = min(rules.awaiting(play.load_state(game)))
        result = play.auto_pass(session, game_id, seat, links, reason="deadline")
        return result.game.step_key or ""


def stored(stack: WorkerStack, game_id: int) -> Game:
    with stack.session():
        game = get_session().get(Game, game_id)
        assert game is not None
        return game


def step_mails(stack: WorkerStack, game_id: int, key: str) -> list[OutboxMail]:
    with stack.session():
        query = select(OutboxMail).where(
            OutboxMail.game_id == game_id, OutboxMail.step_key == key, OutboxMail.template == "your_turn"
        )
        return list(get_session().exec(query).all())


def named(stack: WorkerStack, game_id: int) -> None:
    """Give the game a name its mails can be told apart by, within this module's one SMTP server."""
    with stack.session():
        session = get_session()
        game = session.get(Game, game_id)
        assert game is not None
        game.name = f"[{game_id}] Announced"
        session.commit()


@pytest.fixture
def announcements_lost(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Within: the web's process dies, as it were, between a step's commit and the sending of its announcement
    (every other task is sent). The ids of the games whose announcement was lost."""
    lost: list[int] = []
    send = mail_wakeup._send_delivery_task

    def dropping(task: str = mail_wakeup.DELIVER_OUTBOX, args: list[Any] | None = None) -> None:
        if task == mail_wakeup.ANNOUNCE_STEP:
            lost.extend(args or [])
            return
        send(task, args)

    monkeypatch.setattr(mail_wakeup, "_send_delivery_task", dropping)
    yield lost


def test_the_your_turn_mail_leaves_after_a_step_from_the_worker(stack: WorkerStack) -> None:
    game_id = new_game(stack.app, players=2)
    named(stack, game_id)
    key = pass_seat_on_turn(stack, game_id)  # seat 0's turn ends: seat 1 is awaited
    assert play.awaited_seat(key) == 1
    # The step's transaction stored the step only; the worker's job announced it.
    mails = wait_until(lambda: your_turn(stack, "p1@example.org", game_id), "seat 1's turn mail", timeout=30)
    assert len(mails) == 1
    assert stored(stack, game_id).announced_key == key


def test_an_announcement_lost_after_the_commit_is_made_by_the_sweep(
    stack: WorkerStack, announcements_lost: list[int]
) -> None:
    game_id = new_game(stack.app, players=2)
    named(stack, game_id)
    key = pass_seat_on_turn(stack, game_id)
    assert game_id in announcements_lost
    game = stored(stack, game_id)
    assert (game.step_key, game.announced_key) == (key, None)  # the game's first step was never announced
    assert step_mails(stack, game_id, key) == []
    # Beat's sweep, a little after the step: it finds the step unannounced and announces it, once.
    later = (utcnow() + timedelta(seconds=30)).isoformat()
    report = stack.run(SWEEP_DEADLINES, later)
    assert report["announced"] >= 1 and report["errors"] == 0
    assert stored(stack, game_id).announced_key == key
    wait_until(lambda: your_turn(stack, "p1@example.org", game_id), "seat 1's turn mail", timeout=30)
    assert stack.run(SWEEP_DEADLINES, later)["announced"] == 0
    assert len(step_mails(stack, game_id, key)) == 1


def test_the_announcement_run_twice_mails_once(stack: WorkerStack, announcements_lost: list[int]) -> None:
    game_id = new_game(stack.app, players=2)
    named(stack, game_id)
    key = pass_seat_on_turn(stack, game_id)
    assert game_id in announcements_lost
    # The same job delivered twice at once (a message given back, a sweep beside it): one announces.
    celery = stack.app.extensions["celery"]
    results = [celery.send_task(announce_step.name, args=[game_id], ignore_result=False) for _ in range(2)]
    assert sorted(result.get(timeout=60) for result in results) == [False, True]
    assert stack.run(announce_step.name, game_id) is False
    assert len(step_mails(stack, game_id, key)) == 1
    wait_until(lambda: your_turn(stack, "p1@example.org", game_id), "seat 1's turn mail", timeout=30)
    stack.run("worker.tasks.mail.deliver_outbox")
    assert len(your_turn(stack, "p1@example.org", game_id)) == 1
