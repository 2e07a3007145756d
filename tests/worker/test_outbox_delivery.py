"""service.domain.delivery: draining the outbox into a real SMTP server (aiosmtpd), on SQLite and PostgreSQL; and
what the mail worker prepares as it starts (worker/tasks/mail.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from celery.signals import celeryd_after_setup
from flask import Flask
from sqlmodel import select

import rules
import worker.tasks.mail  # noqa: F401  (its receiver of celeryd_after_setup)
from emails.board import png
from emails.messages import AutoPassed, Message, Reminder, YourTurn
from emails.samples import SAMPLES
from service.domain.links import TURN
from service.domain.models import OutboxMail, Player, Seat, utcnow
from service.domain.outbox import insert_mail_row, queue_mail
from service.infra.db import get_session
from tests.smtp import SMTPServer

from .conftest import drain, new_game, outbox


def smtp(app: Flask) -> SMTPServer:
    return app.extensions["test.smtp"]


def queue(app: Flask, count: int, template: str = "reminder", email: str = "ann@example.org", **player: Any) -> None:
    """``count`` mails to one player, written the way the domain writes them."""
    with app.app_context():
        session = get_session()
        someone = session.exec(select(Player).where(Player.email == email)).first()
        if someone is None:
            someone = Player(email=email, display_name="Ann", time_zone="Europe/Paris", **player)
            session.add(someone)
            session.flush()
        for n in range(count):
            message = MESSAGES[template](utcnow() + timedelta(hours=2))
            insert_mail_row(
                session,
                player=someone,
                template=template,
                context=message.context(),
                dedupe_key=f"{template}:{email}:{n}",
            )
        session.commit()


#: A message of each kind ``queue`` writes, by its deadline: about no game row, with keys of the test's own.
MESSAGES: dict[str, Callable[[datetime], Message]] = {
    "your_turn": lambda deadline: YourTurn(
        **SAMPLES["your_turn"].context
        | {"game_name": "Outbox", "player_name": "Ann", "deadline_at": deadline, "turn": 1}
    ),
    "auto_passed": lambda deadline: AutoPassed(
        game_id=1, game_name="Outbox", player_name="Ann", reason="deadline", defending=False, version=2
    ),
    "reminder": lambda deadline: Reminder(
        **SAMPLES["reminder"].context
        | {"game_name": "Outbox", "player_name": "Ann", "deadline_at": deadline, "turn": 1}
    ),
}


def statuses(app: Flask) -> list[tuple[str, int]]:
    return [(m.status, m.attempts) for m in outbox(app)]


def test_due_mail_is_sent_once_and_marked_sent(mail_app: Flask) -> None:
    queue(mail_app, 3, template="your_turn")
    report = drain(mail_app)
    assert (report.sent, report.claimed) == (3, 3)
    assert statuses(mail_app) == [("sent", 1)] * 3
    assert all(m.sent_at is not None and m.next_attempt_at is None for m in outbox(mail_app))
    assert drain(mail_app).claimed == 0
    received = smtp(mail_app).mailbox.all()
    assert sorted(r.header("Message-ID") for r in received) == sorted(m.message_id for m in outbox(mail_app))


def test_a_batch_of_mail_shares_one_smtp_connection(mail_app: Flask) -> None:
    queue(mail_app, 25, template="auto_passed")
    report = drain(mail_app, batch_size=10)
    assert (report.sent, report.batches) == (25, 3)
    assert len({r.session for r in smtp(mail_app).mailbox.all()}) == 3  # one connection per batch


def test_mail_waits_while_the_smtp_server_is_down_and_goes_out_when_it_is_back(mail_app: Flask) -> None:
    server = smtp(mail_app)
    queue(mail_app, 2, template="your_turn")
    server.stop()
    now = utcnow()

    down = drain(mail_app, now)
    assert (down.sent, down.retried) == (0, 2)
    rows = outbox(mail_app)
    assert [(m.status, m.attempts) for m in rows] == [("pending", 1)] * 2
    assert all("unreachable" in (m.last_error or "") for m in rows)
    assert all(m.next_attempt_at == now + timedelta(seconds=60) for m in rows)
    assert drain(mail_app, now + timedelta(seconds=30)).claimed == 0  # not yet due again
    assert drain(mail_app, now + timedelta(seconds=61)).retried == 2  # still down: twice as long
    assert all(m.next_attempt_at == now + timedelta(seconds=61 + 120) for m in outbox(mail_app))

    server.start()
    back = drain(mail_app, now + timedelta(seconds=61 + 121))
    assert back.sent == 2
    assert statuses(mail_app) == [("sent", 3)] * 2
    assert all(m.last_error is None for m in outbox(mail_app))
    assert len(server.mailbox.all()) == 2


def test_a_refused_recipient_fails_at_once_and_says_why(mail_app: Flask) -> None:
    smtp(mail_app).mailbox.refuse["gone@example.org"] = "550 5.1.1 No such user here"
    queue(mail_app, 1, template="your_turn", email="gone@example.org")
    queue(mail_app, 1, template="your_turn")
    report = drain(mail_app)
    assert (report.sent, report.failed) == (1, 1)
    failed = [m for m in outbox(mail_app) if m.status == "failed"]
    assert [m.to_email for m in failed] == ["gone@example.org"]
    assert "550" in (failed[0].last_error or "") and "No such user" in (failed[0].last_error or "")


def test_a_mail_that_keeps_failing_is_given_up_visibly(mail_app: Flask) -> None:
    smtp(mail_app).mailbox.data_reply = "451 4.3.0 Mailbox busy, try later"
    queue(mail_app, 1, template="your_turn")
    now = utcnow()
    for attempt in range(3):
        drain(mail_app, now + timedelta(hours=attempt), max_attempts=3)
    [mail] = outbox(mail_app)
    assert (mail.status, mail.attempts) == ("failed", 3)
    assert (mail.last_error or "").startswith("gave up after 3 attempts: refused: 451")


def test_a_mail_that_cannot_be_rendered_fails_with_the_reason(mail_app: Flask) -> None:
    with mail_app.app_context():
        session = get_session()
        player = Player(email="ann@example.org", display_name="Ann")
        session.add(player)
        session.flush()
        insert_mail_row(session, player=player, template="your_turn", context={"game_name": "Broken"})
        session.commit()
    assert drain(mail_app).failed == 1
    [mail] = outbox(mail_app)
    assert mail.status == "failed" and "missing fields game_id, player_name" in (mail.last_error or "")


def test_a_row_that_is_not_a_valid_message_fails_alone_and_says_why(mail_app: Flask) -> None:
    queue(mail_app, 1, template="auto_passed")
    with mail_app.app_context():
        session = get_session()
        player = session.exec(select(Player)).one()
        good = MESSAGES["auto_passed"](utcnow()).context()
        insert_mail_row(session, player=player, template="auto_passed", context={**good, "coins": 12})
        insert_mail_row(session, player=player, template="auto_passed", context={**good, "version": None})
        insert_mail_row(session, player=player, template="no_such_mail", context=good)
        session.commit()
    queue(mail_app, 1, template="your_turn")
    report = drain(mail_app)
    assert (report.sent, report.failed, report.batches) == (2, 3, 1)
    assert [(m.template, m.status, m.last_error) for m in outbox(mail_app)] == [
        ("auto_passed", "sent", None),
        ("auto_passed", "failed", "cannot render the mail: MessageError('auto_passed: unknown field coins')"),
        (
            "auto_passed",
            "failed",
            "cannot render the mail: MessageError('auto_passed: version: Input should be a valid integer')",
        ),
        ("no_such_mail", "failed", "cannot render the mail: MessageError(\"unknown message 'no_such_mail'\")"),
        ("your_turn", "sent", None),
    ]


def test_two_drains_at_once_send_every_mail_exactly_once(mail_app: Flask) -> None:
    queue(mail_app, 60, template="auto_passed")
    start = threading.Barrier(3)
    reports = []

    def run() -> None:
        start.wait()
        reports.append(drain(mail_app, batch_size=5))

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ids = [r.header("Message-ID") for r in smtp(mail_app).mailbox.all()]
    assert len(ids) == len(set(ids)) == 60
    assert sum(r.sent for r in reports) == 60
    assert statuses(mail_app) == [("sent", 1)] * 60


class CrashAfterSending:
    """A backend that sends over SMTP, then dies at its ``after``-th mail before the outcome is recorded
    (like a killed worker)."""

    def __init__(self, backend: Any, after: int = 1) -> None:
        self.backend = backend
        self.after = after
        self.sent = 0

    def open(self) -> Any:
        outer = self

        class Dying:
            def __enter__(self) -> Dying:
                self.inner = outer.backend.open()
                self.connection = self.inner.__enter__()
                return self

            def __exit__(self, *exc: object) -> None:
                self.inner.__exit__(None, None, None)

            def send(self, message: Any) -> None:
                self.connection.send(message)
                outer.sent += 1
                if outer.sent == outer.after:
                    raise KeyboardInterrupt("killed between the server's 250 and the commit")

        return Dying()


def test_a_drain_killed_after_sending_resends_the_very_same_mail_after_its_claim_lapses(
    mail_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    from emails import delivery as email_delivery
    from service.domain import delivery

    queue(mail_app, 1, template="your_turn")
    now = utcnow()
    real = email_delivery.backend_from_config(mail_app.config)
    with mail_app.app_context(), pytest.raises(KeyboardInterrupt):
        delivery.deliver_due_mail(
            get_session(),
            CrashAfterSending(real),
            mail_app.extensions["smallworld.links"],
            delivery.MailSettings.from_config(mail_app.config),
            now=now,
        )
    [mail] = outbox(mail_app)
    assert (mail.status, mail.attempts) == ("pending", 1)  # claimed, outcome never recorded
    # The lease (MAIL_LEASE_SECONDS, 20 s) is no longer renewed by the dead drain.
    assert drain(mail_app, now + timedelta(seconds=10)).claimed == 0  # the claim still holds
    assert drain(mail_app, now + timedelta(seconds=21)).sent == 1  # the claim lapsed: sent again

    first, second = smtp(mail_app).mailbox.all()
    assert first.header("Message-ID") == second.header("Message-ID") == mail.message_id
    assert first.content == second.content  # not two different mails: the same one twice
    assert statuses(mail_app) == [("sent", 2)]


def test_a_drain_that_fails_midway_keeps_the_outcomes_of_the_mails_sent_before(mail_app: Flask) -> None:
    from emails import delivery as email_delivery
    from service.domain import delivery

    queue(mail_app, 3, template="auto_passed")
    real = email_delivery.backend_from_config(mail_app.config)
    settings = delivery.MailSettings(
        **{**delivery.MailSettings.from_config(mail_app.config).__dict__, "record_seconds": 60}
    )
    with mail_app.app_context(), pytest.raises(KeyboardInterrupt):
        delivery.deliver_due_mail(
            get_session(), CrashAfterSending(real, after=2), mail_app.extensions["smallworld.links"], settings
        )
    # The first mail's outcome, still waiting for its group, is stored on the way out; the second mail's
    # was never known, and the third was not tried: both go out when their claim lapses.
    assert statuses(mail_app) == [("sent", 1), ("pending", 1), ("pending", 1)]


class Watching:
    """A backend that notes, as each mail goes out, the statuses committed so far."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.seen: list[list[str]] = []

    def open(self) -> Any:
        watching = self

        class Connection:
            def __enter__(self) -> Connection:
                return self

            def __exit__(self, *exc: object) -> None:
                pass

            def send(self, message: Any) -> None:
                watching.seen.append([m.status for m in outbox(watching.app)])

        return Connection()


@pytest.mark.parametrize(
    ("record_seconds", "committed_before_each_mail"),
    [
        (0, [["pending"] * 3, ["sent"] + ["pending"] * 2, ["sent"] * 2 + ["pending"]]),
        (60, [["pending"] * 3] * 3),
    ],
)
def test_outcomes_are_committed_together_once_the_oldest_waited_record_seconds(
    mail_app: Flask, record_seconds: float, committed_before_each_mail: list[list[str]]
) -> None:
    from service.domain import delivery

    queue(mail_app, 3, template="auto_passed")
    watching = Watching(mail_app)
    settings = delivery.MailSettings(
        **{**delivery.MailSettings.from_config(mail_app.config).__dict__, "record_seconds": record_seconds}
    )
    with mail_app.app_context():
        delivery.deliver_due_mail(get_session(), watching, mail_app.extensions["smallworld.links"], settings)
    assert watching.seen == committed_before_each_mail
    assert statuses(mail_app) == [("sent", 1)] * 3  # and all of them at the end of the batch


def test_reminders_and_notices_honour_the_players_choice(mail_app: Flask) -> None:
    queue(mail_app, 1, template="reminder", wants_reminders=False)
    queue(mail_app, 1, template="auto_passed")
    queue(mail_app, 1, template="your_turn")
    report = drain(mail_app)
    assert (report.sent, report.skipped) == (2, 1)
    skipped = [m for m in outbox(mail_app) if m.status == "skipped"]
    assert [(m.template, m.last_error) for m in skipped] == [("reminder", "the player turned reminders off")]


def test_a_reminder_for_a_step_already_over_is_not_sent(mail_app: Flask) -> None:
    game_id = new_game(mail_app, turn_length_seconds=3600, reminders_before_seconds=[1800])
    drain(mail_app)
    with mail_app.app_context():
        session = get_session()
        player = session.exec(select(Player).where(Player.email == "p0@example.org")).one()
        reminder = Reminder(
            game_id=game_id,
            game_name="x",
            player_name="p",
            deadline_at=utcnow(),
            step_key="9:9:-",
            before_seconds=1800,
            defending=False,
            turn=9,
            turns=10,
            seat=0,
        )
        queue_mail(session, player, reminder)
        session.commit()
    report = drain(mail_app)
    assert report.skipped == 1 and report.sent == 0


def test_mail_of_a_game_is_threaded_and_carries_the_unsubscribe_link_where_it_may(mail_app: Flask) -> None:
    new_game(mail_app)
    drain(mail_app)
    received = smtp(mail_app).mailbox.all()
    roots = {r.header("References") for r in received}
    assert len(roots) == 1 and roots.pop().startswith("<game-")
    assert {r.headline for r in received} >= {"Deadline test: your host link"}
    assert all(r.header("List-Unsubscribe") is None for r in received)  # invitations and turns are essential


def test_the_seat_link_is_minted_at_sending_also_for_a_row_that_stored_one(mail_app: Flask) -> None:
    """Rows written by earlier releases hold the seat's link (``turn_url``) in their context: they still go out,
    with the link as delivery mints it then (ARCHITECTURE §6), here after the reader signed out everywhere."""
    game_id = new_game(mail_app)
    stale = "https://smallworld.example/play/minted-when-the-row-was-written"
    with mail_app.app_context():
        session = get_session()
        [turn] = [m for m in outbox(mail_app, "your_turn", game_id) if m.to_email == "p0@example.org"]
        row = session.get(OutboxMail, turn.id)
        assert row is not None and "turn_url" not in row.context
        row.context = {**row.context, "turn_url": stale}
        player = session.exec(select(Player).where(Player.email == "p0@example.org")).one()
        player.links_serial += 1  # "Sign out everywhere": every link made before stops working
        session.add_all([row, player])
        session.commit()
    assert drain(mail_app).failed == 0
    [mail] = [r for r in smtp(mail_app).mailbox.to("p0@example.org") if "your turn" in (r.headline)]
    with mail_app.app_context():
        seat = get_session().exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == 0)).one()
    assert stale not in mail.text and stale not in mail.html
    [link] = [line.strip() for line in mail.text.splitlines() if "/play/" in line]
    # The seat's link as it is now: the serial moved on, so it works where the stored one would not.
    payload = mail_app.extensions["smallworld.links"].signer.verify(TURN, link.rsplit("/", 1)[-1])
    assert payload == {"g": game_id, "s": 0, "k": seat.secret, "n": 1}


def test_the_embedded_mode_writes_eml_files(make_app: Any, tmp_path: Path) -> None:
    app = make_app(MAIL_DIR=str(tmp_path / "mailbox"))
    queue(app, 2, template="your_turn")
    assert drain(app).sent == 2
    files = sorted((tmp_path / "mailbox").glob("*.eml"))
    assert len(files) == 2
    assert b"Subject: Small World: Outbox" in files[0].read_bytes()
    assert b"Outbox: your turn (turn 1 of 10)" in files[0].read_bytes()


def test_mail_is_handed_to_the_broker_after_the_commit_only(mail_app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[str] = []
    celery_app = mail_app.extensions["celery"]
    monkeypatch.setattr(celery_app, "send_task", lambda name, **options: sent.append(name))
    with mail_app.app_context():
        session = get_session()
        player = Player(email="ann@example.org", display_name="Ann")
        session.add(player)
        session.commit()
        assert sent == []  # a commit without mail
        insert_mail_row(session, player=player, template="your_turn", context={})
        session.flush()
        assert sent == []  # not before the commit
        session.rollback()
        assert sent == []  # nor after a rollback
        insert_mail_row(session, player=player, template="your_turn", context={})
        session.commit()
    assert sent == ["worker.tasks.mail.deliver_outbox"]


def test_a_broker_that_is_down_does_not_fail_the_commit_nor_slow_the_next_ones(make_app: Any) -> None:
    app = make_app(BROKER_URL="redis://127.0.0.1:1/0")
    app.extensions["celery"].conf.broker_connection_timeout = 0.2  # kombu's retries, shortened for the test
    queue(app, 1, template="your_turn")  # commits; the task cannot be sent; beat's drain will send it
    started = time.monotonic()
    queue(app, 1, template="auto_passed")  # the process does not try the broker again at once
    assert time.monotonic() - started < 0.5
    assert [m.status for m in outbox(app)] == ["pending", "pending"]


def test_a_worker_draws_every_boards_ground_and_palette_as_it_starts() -> None:
    # On Celery's celeryd_after_setup, in the worker's main process before its pool forks: no drain pays for them on
    # a board's first "your turn" mail.
    # As in a new worker: nothing drawn yet (a picture drawn by an earlier test keeps its blank, made of both).
    for cached in (png._ground, png._palette, png._blank):
        cached.cache_clear()
    celeryd_after_setup.send(sender="celery@test", instance=None, conf=None)
    assert png._ground.cache_info().currsize == png._palette.cache_info().currsize == len(rules.BOARD_NAMES)
