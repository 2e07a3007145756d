"""service.domain.chat_notices: notices queued with the change they tell of, and sent to a real local chat.

The chat is a tiny HTTP server in a thread (``tests/chat_receiver.py``) taking apprise's ``json://``
notifications: every body has apprise's JSON schema (version, title, message, type, attachments) and
none carries coins before the end, a signed link or an address. A chat that answers 500, or is down,
leaves mail delivery alone; its notice is retried, then failed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlmodel import Session, col, select

import rules
from service.domain import admin, chat_notices, delivery, play, tally
from service.domain.links import LinkMaker
from service.domain.models import AuditEntry, ChatNotice, Game, GameStatus, MailStatus, NoticeStatus, OutboxMail, utcnow
from service.domain.schemas import CreateGame
from service.drain import leases
from service.drain import queue as drain_queue
from service.drain.queue import DrainReport
from service.infra.chat import ChatPolicy
from tests.chat_receiver import ChatReceiver, chat_receiver
from tests.factories import confirmed_game

#: The tests' chat is on this machine: the policy lets it through (the default refuses local addresses).
POLICY = ChatPolicy(loopback=True, timeout=5)
FAST = chat_notices.NoticeSettings(max_attempts=3, retry_seconds=60)
LINK = re.compile(r"https?://|/play/|/invite/|/admin/|/calendar/|/unsubscribe/")


@pytest.fixture
def receiver() -> Iterator[ChatReceiver]:
    with chat_receiver() as running:
        yield running


@contextmanager
def local_chats() -> Iterator[None]:
    """An app context whose policy allows a chat on this machine (for the create request's check)."""
    app = Flask(__name__)
    app.config.update(CHAT_LOOPBACK_FOR_TESTS=True)
    with app.app_context():
        yield


def new_game(session: Session, links: LinkMaker, chat_url: str | None, players: int = 2) -> Game:
    body: dict[str, Any] = {
        "name": "Chatty",
        "players": [{"name": f"P{i}", "email": f"p{i}@example.org"} for i in range(players)],
        "settings": {"start_when_all_accepted": False},
        "chat_url": chat_url,
    }
    with local_chats():
        game, _ = confirmed_game(session, CreateGame.model_validate(body), links)
    # The host read the mail asking them to confirm the game (that is how they confirmed it): delivered.
    session.execute(
        sa.update(OutboxMail)
        .where(col(OutboxMail.game_id) == game.id, col(OutboxMail.template) == "confirm_game")
        .values(status=MailStatus.SENT, sent_at=utcnow())
    )
    session.commit()
    return game


def notices(session: Session, game_id: int) -> list[ChatNotice]:
    session.expire_all()
    return list(session.exec(select(ChatNotice).where(ChatNotice.game_id == game_id).order_by(col(ChatNotice.id))))


def play_to_the_end(session: Session, game: Game, links: LinkMaker) -> None:
    for _ in range(200):
        session.refresh(game)
        if game.status == GameStatus.FINISHED:
            return
        if game.status == GameStatus.ENDING:  # the worker's tally (service.domain.tally)
            tally.tally_game(session, game.id or 0)
            continue
        play.auto_pass(session, game.id or 0, min(rules.awaiting(play.load_state(game))), links)
    raise AssertionError("the game did not end")


def drain(session: Session, *, now: Any = None) -> DrainReport:
    return chat_notices.deliver_due_notices(session, FAST, POLICY, now=now)


def test_a_game_without_a_chat_queues_no_notice(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, None)
    admin.extend_deadline(db_session, game.id or 0, admin.HOST, links, by=timedelta(hours=2))
    assert notices(db_session, game.id or 0) == []


def test_turns_passes_admin_acts_and_the_result_are_told_once_each_with_nothing_private(
    db_session: Session, links: LinkMaker, receiver: ChatReceiver
) -> None:
    game = new_game(db_session, links, receiver.url)
    game_id = game.id or 0
    first = notices(db_session, game_id)
    assert [n.kind for n in first] == ["turn"]
    assert first[0].body.startswith("The game has begun. Game turn 1 of 10: it is P0's turn. Deadline: ")
    admin.extend_deadline(db_session, game_id, admin.HOST, links, by=timedelta(hours=2))
    admin.pause(db_session, game_id, admin.site_admin("boss@example.org"), links, "a holiday")
    admin.resume(db_session, game_id, admin.HOST, links)
    admin.pass_now(db_session, game_id, admin.HOST, links)
    play_to_the_end(db_session, game, links)

    rows = notices(db_session, game_id)
    kinds = [n.kind for n in rows]
    assert kinds.count("result") == 1 and kinds[-1] == "result"
    assert kinds.count("admin") == 3  # extend, pause, resume (the pass is told as a pass)
    assert kinds.count("auto_pass") >= 20 and kinds.count("turn") >= 20
    assert len({n.dedupe_key for n in rows}) == len(rows)
    by_kind = {n.kind: n for n in rows}
    assert "The host passed P0's turn" in next(n.body for n in rows if n.kind == "auto_pass")
    assert "A site admin paused the game" in next(n.body for n in rows if "paused" in n.title)
    for notice in rows:
        text = f"{notice.title}\n{notice.body}"
        assert not LINK.search(text), text
        assert "@" not in text, text  # no address, not even the site admin's
        if notice.kind != "result":
            assert "coin" not in text.lower(), text
    # The final table names every coin count: public now.
    db_session.refresh(game)
    for row in game.result or []:
        assert f"{row['name']}: {row['coins']} coins" in by_kind["result"].body

    # The same event again writes nothing.
    assert not chat_notices.queue_notice(db_session, game, chat_notices.result_notice(game, game.result or []))


def test_the_chat_receives_apprises_json_with_title_message_and_type_and_nothing_private(
    db_session: Session, links: LinkMaker, receiver: ChatReceiver
) -> None:
    game = new_game(db_session, links, receiver.url)
    admin.extend_deadline(db_session, game.id or 0, admin.HOST, links, by=timedelta(hours=2))
    admin.pass_now(db_session, game.id or 0, admin.HOST, links)

    report = drain(db_session)

    # The first turn is over (passed): its notice is dropped, not sent late.
    assert (report.sent, report.skipped, report.failed) == (3, 1, 0)
    assert len(receiver.bodies) == 3
    assert receiver.paths == ["/hook/s3cr3t-hook-token"] * 3
    for body in receiver.bodies:
        assert set(body) == {"version", "title", "message", "type", "attachments"}
        assert isinstance(body["title"], str) and body["title"].startswith("Chatty")
        assert isinstance(body["message"], str) and body["message"]
        assert body["type"] in ("info", "success", "warning", "failure")
        assert not LINK.search(body["title"] + body["message"])
        assert "coin" not in (body["title"] + body["message"]).lower()
    assert [b["type"] for b in receiver.bodies] == ["info", "warning", "info"]
    rows = notices(db_session, game.id or 0)
    assert {n.status for n in rows} == {NoticeStatus.SENT, NoticeStatus.SKIPPED}
    assert all(n.sent_at is not None for n in rows if n.status == NoticeStatus.SENT)
    # Sent once: a second drain finds nothing to send.
    assert drain(db_session).claimed == 0 and len(receiver.bodies) == 3


class Collecting:
    """A mail backend that keeps what it is given."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    @contextmanager
    def open(self) -> Iterator[Collecting]:
        yield self

    def send(self, message: Any) -> None:
        self.sent.append(message)


@pytest.mark.parametrize("chat_fails", ["answers 500", "is down"])
def test_a_failing_chat_never_holds_up_mail_and_its_notice_is_retried_then_failed(
    db_session: Session, links: LinkMaker, receiver: ChatReceiver, chat_fails: str
) -> None:
    game = new_game(db_session, links, receiver.url)
    if chat_fails == "is down":
        receiver.stop()
    else:
        receiver.status = 500

    # Mail goes out as ever, whatever the chat does.
    backend = Collecting()
    mailed = delivery.deliver_due_mail(db_session, backend, links, delivery.MailSettings(sender="sw@example.org"))
    assert mailed.sent == 4 and mailed.failed == 0  # two invitations, the host's link, the first turn
    assert all(m.status == MailStatus.SENT for m in db_session.exec(select(OutboxMail)).all())

    now = utcnow()
    first = drain(db_session, now=now)
    assert (first.sent, first.retried, first.failed) == (0, 1, 0)
    (notice,) = notices(db_session, game.id or 0)
    assert notice.status == NoticeStatus.PENDING and notice.attempts == 1
    assert notice.next_attempt_at is not None and notice.next_attempt_at == now + timedelta(seconds=60)
    assert notice.last_error and ("500" in notice.last_error or "onnect" in notice.last_error)
    assert "s3cr3t" not in notice.last_error  # the address's secret stays out of what admins read
    assert drain(db_session, now=now + timedelta(seconds=30)).claimed == 0  # not due yet

    second = drain(db_session, now=now + timedelta(seconds=61))
    assert second.retried == 1
    third = drain(db_session, now=now + timedelta(seconds=61 + 121))
    assert third.failed == 1
    (notice,) = notices(db_session, game.id or 0)
    assert notice.status == NoticeStatus.FAILED and notice.attempts == 3
    assert notice.last_error and notice.last_error.startswith("gave up after 3 attempts")
    assert drain(db_session, now=now + timedelta(days=1)).claimed == 0

    # And mail of later events still goes out (a moved deadline is mailed to the player the game waits for).
    admin.extend_deadline(db_session, game.id or 0, admin.HOST, links, by=timedelta(hours=1))
    later = delivery.deliver_due_mail(db_session, backend, links, delivery.MailSettings(sender="sw@example.org"))
    assert later.sent == 1 and later.failed == 0


def test_a_removed_chat_drops_its_pending_notices(
    db_session: Session, links: LinkMaker, receiver: ChatReceiver
) -> None:
    game = new_game(db_session, links, receiver.url)
    admin.set_chat_url(db_session, game.id or 0, admin.HOST, None)
    report = drain(db_session)
    assert (report.sent, report.skipped) == (0, 1)
    assert receiver.bodies == []
    (notice,) = notices(db_session, game.id or 0)
    assert notice.last_error == "the game has no chat any more"


def test_connecting_a_chat_is_audited_by_its_service_alone_and_greets_the_chat(
    db_session: Session, links: LinkMaker, receiver: ChatReceiver
) -> None:
    game = new_game(db_session, links, None)
    with local_chats():
        admin.set_chat_url(db_session, game.id or 0, admin.HOST, receiver.url)
    (notice,) = notices(db_session, game.id or 0)
    assert notice.kind == "chat" and "notices come here" in notice.title
    assert drain(db_session).sent == 1
    assert receiver.bodies[0]["title"] == "Chatty: notices come here now"
    (entry,) = db_session.exec(select(AuditEntry).where(AuditEntry.game_id == game.id, AuditEntry.act == "chat"))
    assert entry.details == {"service": "JSON"}


def test_a_notice_claimed_by_a_drain_that_died_is_sent_after_its_lease(
    db_session: Session, links: LinkMaker, receiver: ChatReceiver
) -> None:
    new_game(db_session, links, receiver.url)
    now = utcnow()
    alive = leases.DrainLock.of(db_session.get_bind().engine)
    # A drain that claims, then ends without a word.
    claimed = drain_queue.claim(db_session, chat_notices.NoticeQueue(POLICY), now, FAST, alive)
    alive.release()
    assert len(claimed) == 1
    assert drain(db_session, now=now + timedelta(seconds=10)).claimed == 0  # another drain leaves it alone
    late = drain(db_session, now=now + timedelta(seconds=FAST.lease_seconds + 1))
    assert late.sent == 1 and len(receiver.bodies) == 1
