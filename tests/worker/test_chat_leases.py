"""service.domain.chat_notices: a notice's claim is a lease that a live drain keeps, as mail's (ARCHITECTURE §10).

A drain that lives keeps its notices however long the chat takes to answer and however late the renewal of
its lease is; a drain that dies gives them up with its process, and the next drain sends them again once the
lease lapsed: at least once after a crash, never twice without one. On SQLite and PostgreSQL, on the real
clock, with a chat on this machine that answers slowly and leases of a second or less.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from sqlmodel import col, select

from service.domain import chat_notices
from service.domain.models import ChatNotice, Game
from service.drain import leases
from service.drain import queue as drain_queue
from service.drain.queue import DrainReport
from service.infra.chat import ChatPolicy
from service.infra.db import get_session
from tests.chat_receiver import ChatReceiver, chat_receiver

from .conftest import beside_rivals, failing_at_the_second, killed_midway, new_game, once_the_lease_lapsed

#: The tests' chat is on this machine: the policy lets it through (the default refuses local addresses).
POLICY = ChatPolicy(loopback=True, timeout=10)


@pytest.fixture
def receiver() -> Iterator[ChatReceiver]:
    with chat_receiver() as running:
        yield running


def queue_notices(app: Flask, receiver: ChatReceiver, count: int) -> None:
    """``count`` messages of a game's table, told to its chat (the receiver)."""
    game_id = new_game(app)
    with app.app_context():
        session = get_session()
        game = session.get(Game, game_id)
        assert game is not None
        game.chat_url = receiver.url
        for number in range(count):
            notice = chat_notices.talk_notice(game, "Player 0", f"Message {number}", number)
            assert chat_notices.queue_notice(session, game, notice)
        session.commit()


def run_drain(app: Flask, sender: chat_notices.Sender | None = None, **values: Any) -> DrainReport:
    with app.app_context():
        settings = chat_notices.NoticeSettings(**values)
        return chat_notices.deliver_due_notices(get_session(), settings, POLICY, sender=sender)


def post_plainly(url: str, title: str, body: str, kind: str) -> None:
    """Post a notice as apprise's ``json://`` does, in one plain request: apprise's thread pool, started in the
    tests' process before a fork, has no thread in the forked child, and a notice given to it there never goes."""
    address = url.replace("json://", "http://", 1)
    payload = {"version": "1.0", "title": title, "message": body, "type": kind, "attachments": []}
    request = urllib.request.Request(address, json.dumps(payload).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30):
        pass


def notices(app: Flask) -> list[tuple[str, int, str | None]]:
    with app.app_context():
        rows = get_session().exec(select(ChatNotice).order_by(col(ChatNotice.id))).all()
        return [(row.status, row.attempts, row.claimed_by) for row in rows]


def slow_drain_among_rivals(
    app: Flask, receiver: ChatReceiver, *, answer_seconds: float, lease_seconds: float
) -> tuple[DrainReport, list[DrainReport]]:
    """Three notices drained by one drain while the chat takes ``answer_seconds`` to answer each, and other
    drains try to claim, again and again, until it is done; each notice arrives once (checked here)."""
    queue_notices(app, receiver, 3)
    arrived = threading.Event()

    def slow_chat(_body: dict[str, Any]) -> None:
        arrived.set()
        time.sleep(answer_seconds)

    receiver.on_post = slow_chat
    try:
        report, rivals = beside_rivals(lambda: run_drain(app, lease_seconds=lease_seconds), arrived, 20)
    finally:
        receiver.on_post = None
    messages = [body["message"] for body in receiver.bodies]
    # Each notice once, though the chat took longer than the lease to answer each.
    assert sorted(messages) == ["Message 0", "Message 1", "Message 2"], messages
    assert notices(app) == [("sent", 1, None)] * 3
    return report, rivals


def test_a_drain_keeps_its_notices_while_a_slow_chat_takes_longer_than_the_lease(
    mail_app: Flask, receiver: ChatReceiver
) -> None:
    # A 2 s lease, renewed every 0.5 s and good for 1.5 s after each renewal, and each answer outlasts it.
    report, rivals = slow_drain_among_rivals(mail_app, receiver, answer_seconds=3.0, lease_seconds=2.0)
    assert (report.sent, report.lost) == (3, 0)
    assert len(rivals) >= 10 and sum(r.claimed for r in rivals) == 0


def test_a_drain_starved_of_cpu_past_its_lease_keeps_its_notices_while_it_lives(
    mail_app: Flask, receiver: ChatReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As mail once was (tests/worker/test_outbox_leases.py): the renewal thread never renews at all (as if
    # starved for good) and each answer of the chat outlasts the lease four times. Another drain must not take
    # the notices over while their drain lives, nor post them a second time.
    monkeypatch.setattr(leases.Lease, "_run", lambda lease: None)
    report, rivals = slow_drain_among_rivals(mail_app, receiver, answer_seconds=2.0, lease_seconds=0.5)
    # Before each later notice the drain, its lease not renewed, confirmed in the database that the row was
    # still its own.
    assert (report.sent, report.lost) == (3, 0)
    assert len(rivals) >= 10 and sum(r.claimed for r in rivals) == 0


def test_a_drain_killed_while_the_chat_holds_its_notice_gives_it_up_with_its_process_and_it_goes_out_again(
    mail_app: Flask, receiver: ChatReceiver
) -> None:
    # At least once after a crash: a drain killed outright (no ``finally`` runs) while the chat holds its notice
    # gives up its lock with its process, and the next drain posts the notice again once the lease lapsed.
    queue_notices(mail_app, receiver, 1)
    killed = killed_midway(
        mail_app,
        lambda: run_drain(mail_app, post_plainly, lease_seconds=1.0),
        lambda callback: setattr(receiver, "on_post", callback),
    )
    report = once_the_lease_lapsed(lambda: run_drain(mail_app, lease_seconds=1.0), killed)
    assert report.sent == 1
    assert [body["message"] for body in receiver.bodies] == ["Message 0"] * 2  # the same notice, again
    assert notices(mail_app) == [("sent", 2, None)]


def test_a_drain_that_fails_midway_gives_back_the_notices_it_had_not_begun_and_keeps_the_one_it_was_posting(
    mail_app: Flask, receiver: ChatReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its process lives on and holds its lock: without their return, the notices would wait for a later drain of
    # that same process and a lapsed lease (half an hour by default).
    queue_notices(mail_app, receiver, 3)
    send_one = drain_queue._send_one
    monkeypatch.setattr(drain_queue, "_send_one", failing_at_the_second(send_one))
    with pytest.raises(RuntimeError):
        run_drain(mail_app)
    monkeypatch.setattr(drain_queue, "_send_one", send_one)
    # The first was posted; the second may have been with the chat when the drain failed, so it stays claimed
    # (posted again only once its lease lapsed: at least once); the third is given back, the attempt not counted.
    held = [(status, attempts, holder is not None) for status, attempts, holder in notices(mail_app)]
    assert held == [("sent", 1, False), ("pending", 1, True), ("pending", 0, False)]
    report = run_drain(mail_app)
    assert (report.claimed, report.sent) == (1, 1)
    assert [body["message"] for body in receiver.bodies] == ["Message 0", "Message 2"]
