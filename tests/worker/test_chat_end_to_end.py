"""Chat notices with real parts: PostgreSQL, a ``smallworld worker`` process on Redis, an SMTP server
(aiosmtpd) and a chat (a JSON receiver), both in the test process.

The web's commit wakes the chat task on its own queue; the chat hears the turn while the players get
their mail; a chat that answers 500 leaves the mail of the same act flowing, and its notice is retried,
then failed, by the worker's own task.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import select

from service.domain.models import ChatNotice, NoticeStatus, utcnow
from service.infra.db import get_session
from tests.api.conftest import create_game
from tests.chat_receiver import ChatReceiver, chat_receiver
from tests.worker.conftest import WorkerStack, wait_until
from worker.tasks.chat import DELIVER_CHAT

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.processes]


@pytest.fixture(scope="module")
def chat() -> Iterator[ChatReceiver]:
    with chat_receiver() as receiver:
        yield receiver


#: The chat is a receiver on this machine; a notice is tried twice, then marked failed.
WORKER_STACK = {"CHAT_LOOPBACK_FOR_TESTS": True, "CHAT_MAX_ATTEMPTS": 2}


def notices(app: Any) -> list[ChatNotice]:
    with app.app_context():
        return list(get_session().exec(select(ChatNotice).order_by(ChatNotice.id)).all())  # type: ignore[arg-type]


def test_the_chat_hears_the_turn_and_a_failing_chat_never_holds_up_mail(stack: WorkerStack, chat: ChatReceiver) -> None:
    app, smtp = stack.app, stack.smtp
    client = app.test_client()
    body = {
        "name": "Chat night",
        "players": [{"name": "Ann", "email": "ann@example.org"}, {"name": "Bob", "email": "bob@example.org"}],
        "settings": {"start_when_all_accepted": False},
        "chat_url": chat.url,
    }
    created = create_game(client, body)
    assert created.status_code == 201, created.get_json()
    game_id, admin = created.get_json()["id"], created.get_json()["admin_url"].rsplit("/", 1)[-1]

    # Woken by the commit: the first turn reaches the chat, the turn mail reaches Ann.
    wait_until(lambda: chat.bodies)
    assert chat.bodies[0]["title"] == "Chat night: Ann to play"
    smtp.mailbox.wait_for(lambda _: [m for m in smtp.mailbox.to("ann@example.org") if "your turn" in m.headline])

    # The chat now fails; the host's act is mailed all the same.
    chat.status = 500
    extended = client.post(
        f"/api/admin/games/{game_id}/extend", headers={"Authorization": f"Bearer {admin}"}, json={"hours": 2}
    )
    assert extended.status_code == 200
    # A moved deadline is mailed to the player the game waits for (Ann), not to everyone.
    smtp.mailbox.wait_for(lambda _: [m for m in smtp.mailbox.to("ann@example.org") if "deadline" in (m.headline)])
    retried = wait_until(lambda: [n for n in notices(app) if n.kind == "admin" and n.attempts == 1 and n.last_error])
    assert retried[0].status == NoticeStatus.PENDING and "500" in (retried[0].last_error or "")

    # The worker's own task tries again when it is due, and gives up after CHAT_MAX_ATTEMPTS.
    later = (utcnow() + timedelta(hours=2)).isoformat()
    report = (
        app.extensions["celery"].send_task(DELIVER_CHAT, kwargs={"now": later}, ignore_result=False).get(timeout=60)
    )
    assert report["failed"] == 1
    (failed,) = [n for n in notices(app) if n.kind == "admin"]
    assert failed.status == NoticeStatus.FAILED and failed.attempts == 2
    assert [b["title"] for b in chat.bodies].count("Chat night: the deadline moved") == 2
