"""service.domain.delivery: a game's mails to one reader reach them in the order they were written, however
many drains run at once, into a real SMTP server (aiosmtpd), on SQLite and PostgreSQL.

The case that asked for it: the auto-pass notice of a game's last turn ("your turn was played for you") and
the game's final tables, written a moment apart by two transactions (the step, then the tally), each waking
a drain: the reader got the final tables first when the second drain sent them while the first was still
sending the notice.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

from flask import Flask
from sqlmodel import Session, select

from emails import delivery as email_delivery
from emails.messages import AutoPassed, GameOver
from emails.samples import SAMPLES
from service.domain import delivery
from service.domain.models import Player, utcnow
from service.domain.outbox import queue_mail
from service.drain.queue import DrainReport
from service.infra.db import get_engine, get_session
from tests.smtp import SMTPServer

from .conftest import drain, new_game, outbox

ANN, BOB = "p0@example.org", "p1@example.org"


def smtp(app: Flask) -> SMTPServer:
    return app.extensions["test.smtp"]


def write(app: Flask, game_id: int, email: str, kind: str) -> None:
    """The game's last auto-pass notice (``auto_passed``) or its final tables (``game_over``) to ``email``."""
    with app.app_context():
        session = get_session()
        player = session.exec(select(Player).where(Player.email == email)).one()
        seat = int(email[1])
        message: AutoPassed | GameOver
        if kind == "auto_passed":
            message = AutoPassed(
                game_id=game_id, game_name="Order", player_name="Ann", reason="deadline", defending=False, version=90
            )
        else:
            over = SAMPLES["game_over"].mail
            assert isinstance(over, GameOver)
            message = over.model_copy(update={"game_id": game_id, "game_name": "Order", "your_seat": seat})
        assert queue_mail(session, player, message)
        session.commit()


def kinds_received(app: Flask, email: str, since: int) -> list[str]:
    """What ``email`` received after the first ``since`` mails of the server, by kind, in the order received."""
    subjects = [r.headline for r in smtp(app).mailbox.all()[since:] if email in r.rcpt_tos]
    return ["game_over" if "over" in subject.lower() else "auto_passed" for subject in subjects]


def notice_waiting_for_a_retry(app: Flask, game_id: int) -> datetime:
    """Ann's auto-pass notice, tried once while her mailbox said "try again later" (still saying it): due
    again a minute after the time returned."""
    smtp(app).mailbox.refuse[ANN] = "451 4.2.1 Mailbox busy, try again later"
    write(app, game_id, ANN, "auto_passed")
    now = utcnow()
    assert drain(app, now).retried == 1
    return now


class HoldingTheFirstMail:
    """The real SMTP backend, whose first mail waits, in the middle of its batch, until the test lets it go."""

    def __init__(self, app: Flask) -> None:
        self.real = email_delivery.backend_from_config(app.config)
        self.holding = threading.Event()
        self.go = threading.Event()

    def open(self) -> Any:
        holder = self
        inner = self.real.open()

        class Connection:
            def __enter__(self) -> Connection:
                self.connection = inner.__enter__()
                return self

            def __exit__(self, *exc: Any) -> None:
                inner.__exit__(*exc)

            def send(self, message: Any) -> None:
                if not holder.holding.is_set():
                    holder.holding.set()
                    assert holder.go.wait(30), "the test never let the first mail go"
                self.connection.send(message)

        return Connection()


def test_the_final_tables_never_overtake_the_last_notice_when_two_drains_run_at_once(mail_app: Flask) -> None:
    game = new_game(mail_app)
    drain(mail_app)  # the game's first mails (invitations, the first turn)
    since = len(smtp(mail_app).mailbox.all())
    write(mail_app, game, ANN, "auto_passed")

    # The first drain has claimed the notice and is sending it...
    first = HoldingTheFirstMail(mail_app)
    reports: list[DrainReport] = []

    def first_drain() -> None:
        with mail_app.app_context():
            settings = delivery.MailSettings.from_config(mail_app.config)
            links = mail_app.extensions["smallworld.links"]
            reports.append(delivery.deliver_due_mail(get_session(), first, links, settings))

    thread = threading.Thread(target=first_drain)
    thread.start()
    try:
        assert first.holding.wait(30)
        # ...when the tally writes the final tables, and a second drain runs: it sends Bob's, not Ann's.
        write(mail_app, game, ANN, "game_over")
        write(mail_app, game, BOB, "game_over")
        second = drain(mail_app)
        assert (second.claimed, second.sent) == (1, 1)
        assert kinds_received(mail_app, BOB, since) == ["game_over"]
        assert kinds_received(mail_app, ANN, since) == []
    finally:
        first.go.set()
        thread.join(30)
    # The first drain sent the notice, then the final tables that waited for it (one more claim).
    [report] = reports
    assert (report.claimed, report.sent, report.batches) == (2, 2, 2)
    assert kinds_received(mail_app, ANN, since) == ["auto_passed", "game_over"]
    assert {m.status for m in outbox(mail_app, game_id=game)} == {"sent"}


def test_a_mail_waits_for_an_earlier_one_of_its_game_and_reader_that_waits_for_a_retry(mail_app: Flask) -> None:
    game = new_game(mail_app)
    drain(mail_app)
    since = len(smtp(mail_app).mailbox.all())
    now = notice_waiting_for_a_retry(mail_app, game)
    write(mail_app, game, ANN, "game_over")
    write(mail_app, game, BOB, "game_over")

    # Ann's final tables wait behind her notice, and leave their place in a batch of one to Bob's.
    held = drain(mail_app, now + timedelta(seconds=30), batch_size=1)
    assert (held.claimed, held.sent) == (1, 1)
    assert kinds_received(mail_app, BOB, since) == ["game_over"]
    assert drain(mail_app, now + timedelta(seconds=30)).claimed == 0

    del smtp(mail_app).mailbox.refuse[ANN]
    later = drain(mail_app, now + timedelta(seconds=61), batch_size=1)
    assert (later.claimed, later.sent) == (2, 2)
    assert kinds_received(mail_app, ANN, since) == ["auto_passed", "game_over"]


def test_a_mail_that_failed_for_good_holds_nothing_back(mail_app: Flask) -> None:
    game = new_game(mail_app)
    drain(mail_app)
    since = len(smtp(mail_app).mailbox.all())
    server = smtp(mail_app).mailbox

    server.data_refuse[ANN] = "554 5.7.1 Rejected"
    write(mail_app, game, ANN, "auto_passed")
    assert drain(mail_app).failed == 1
    del server.data_refuse[ANN]
    write(mail_app, game, ANN, "game_over")
    assert drain(mail_app).sent == 1
    assert kinds_received(mail_app, ANN, since) == ["game_over"]


def test_mails_of_other_games_and_readers_are_not_held(mail_app: Flask) -> None:
    one, other = new_game(mail_app), new_game(mail_app)
    drain(mail_app)
    since = len(smtp(mail_app).mailbox.all())
    now = notice_waiting_for_a_retry(mail_app, one)
    del smtp(mail_app).mailbox.refuse[ANN]
    # Ann's mail of another game, and Bob's of the same game, go out while her notice waits for its retry.
    write(mail_app, other, ANN, "game_over")
    write(mail_app, one, BOB, "game_over")
    assert drain(mail_app, now + timedelta(seconds=1)).sent == 2
    assert kinds_received(mail_app, ANN, since) == ["game_over"]
    assert kinds_received(mail_app, BOB, since) == ["game_over"]


def test_a_claim_leaves_a_mail_whose_earlier_one_another_claim_is_taking_at_that_moment(
    pg_mail_app: Flask,
) -> None:
    # PostgreSQL: a claim skips the rows another claim has locked and not yet committed, and still sees them
    # as they were (due, unclaimed). The final tables must not be claimed while the notice is being claimed.
    app = pg_mail_app
    game = new_game(app)
    drain(app)
    write(app, game, ANN, "auto_passed")
    write(app, game, ANN, "game_over")
    settings = delivery.MailSettings(sender="sw@example.org", batch_size=1)
    engine = get_engine(app)
    with app.app_context(), Session(engine) as first, Session(engine) as second:
        claim, _read = delivery._claim_statements("postgresql", settings.batch_size)
        now = utcnow()
        lease = {"now": now, "lease_until": now + timedelta(seconds=20)}
        # The first claim has taken the notice and not committed yet...
        assert [row[0] for row in first.execute(claim, {**lease, "holder": "first"})]
        # ...so the second claim finds it locked and skips it, but leaves the final tables behind it.
        assert [row[0] for row in second.execute(claim, {**lease, "holder": "second"})] == []
        second.rollback()
        first.commit()
    assert [(m.template, m.claimed_by) for m in outbox(app, game_id=game) if m.status == "pending"] == [
        ("auto_passed", "first"),
        ("game_over", None),
    ]
