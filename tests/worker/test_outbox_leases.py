"""service.domain.delivery: a claim is a short lease held by one drain and renewed while it sends (ARCHITECTURE §6).

A drain that dies loses its rows within one lease, and the next drain sends them, once; a drain that lives
keeps them however slow the SMTP server is; a drain that lost a row (another took it over) neither sends it
nor records an outcome for it. These run on the real clock, with leases of a second or less.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask

from emails.delivery import backend_from_config
from service.domain import delivery
from service.domain.models import Game, OutboxMail, utcnow
from service.drain import leases
from service.drain import queue as drain_queue
from service.drain.queue import DrainReport
from service.infra.db import get_session
from tests.smtp import Received, SMTPServer

from .conftest import beside_rivals, failing_at_the_second, killed_midway, new_game, once_the_lease_lapsed, outbox
from .test_outbox_delivery import CrashAfterSending, queue


def settings(app: Flask, **values: Any) -> delivery.MailSettings:
    return delivery.MailSettings(**{**delivery.MailSettings.from_config(app.config).__dict__, **values})


def run_drain(app: Flask, backend: Any = None, **values: Any) -> DrainReport:
    with app.app_context():
        return delivery.deliver_due_mail(
            get_session(),
            backend or backend_from_config(app.config),
            app.extensions["smallworld.links"],
            settings(app, **values),
        )


def smtp(app: Flask) -> SMTPServer:
    return app.extensions["test.smtp"]


def test_a_claim_names_its_drain_and_lasts_one_lease_from_the_configuration(make_app: Callable[..., Flask]) -> None:
    app = make_app(MAIL_LEASE_SECONDS=45, MAIL_DIR="unused")
    assert delivery.MailSettings.from_config(app.config).lease_seconds == 45
    queue(app, 1, template="your_turn")
    now = utcnow()

    class Dead:
        def open(self) -> Any:
            raise KeyboardInterrupt("killed while holding its claim")

    with app.app_context(), pytest.raises(KeyboardInterrupt):
        delivery.deliver_due_mail(
            get_session(), Dead(), app.extensions["smallworld.links"], settings(app), now=now, holder="host-a:12:ab"
        )
    [mail] = outbox(app)
    assert (mail.status, mail.claimed_by, mail.attempts) == ("pending", "host-a:12:ab", 1)
    assert mail.next_attempt_at == now + timedelta(seconds=45)


def test_the_default_lease_is_twenty_seconds_and_each_drain_has_its_own_name() -> None:
    assert delivery.MailSettings(sender="x@y.org").lease_seconds == 20
    first, second = leases.drain_id(), leases.drain_id()
    assert first != second and first.rsplit(":", 2)[0] == second.rsplit(":", 2)[0]


def test_mail_held_by_a_drain_that_died_goes_out_one_lease_later_and_once(mail_app: Flask) -> None:
    queue(mail_app, 3, template="your_turn")
    real = backend_from_config(mail_app.config)
    claimed = time.monotonic()  # the claim is made at once, its lease 3 s from then
    with pytest.raises(KeyboardInterrupt):
        run_drain(mail_app, CrashAfterSending(real, after=1), lease_seconds=3.0, record_seconds=60)
    assert [m.status for m in outbox(mail_app)] == ["pending"] * 3  # the outcome of the first was never known

    assert run_drain(mail_app, lease_seconds=3.0).claimed == 0  # the dead drain's lease still holds
    while (report := run_drain(mail_app, lease_seconds=3.0)).claimed == 0:
        assert time.monotonic() - claimed < 10, "the lease of a dead drain never lapsed"
        time.sleep(0.05)
    takeover = time.monotonic() - claimed
    assert report.sent == 3 and 2.9 < takeover < 5.0, takeover
    assert [(m.status, m.claimed_by) for m in outbox(mail_app)] == [("sent", None)] * 3
    received = [r.header("Message-ID") for r in smtp(mail_app).mailbox.all()]
    assert sorted(received) == sorted([outbox(mail_app)[0].message_id, *[m.message_id for m in outbox(mail_app)]])


def test_a_drain_keeps_its_lease_while_a_slow_smtp_server_takes_longer_than_the_lease(mail_app: Flask) -> None:
    # A 2 s lease, renewed every 0.5 s and good for 1.5 s after each renewal, and each mail outlasts it.
    report, rivals = slow_drain_among_rivals(mail_app, send_seconds=3.0, lease_seconds=2.0)
    assert (report.sent, report.lost) == (3, 0)
    assert len(rivals) >= 10 and sum(r.claimed for r in rivals) == 0


def slow_drain_among_rivals(
    app: Flask, *, send_seconds: float, lease_seconds: float
) -> tuple[DrainReport, list[DrainReport]]:
    """Three mails drained by one drain while the SMTP server takes ``send_seconds`` over each, and other
    drains try to claim, again and again, until it is done; each mail arrives once (checked here)."""
    queue(app, 3, template="auto_passed")
    arrived = threading.Event()

    def slow_server(_mail: Received) -> None:
        arrived.set()
        time.sleep(send_seconds)

    smtp(app).mailbox.on_accept = slow_server
    try:
        report, rivals = beside_rivals(lambda: run_drain(app, lease_seconds=lease_seconds), arrived, 10)
    finally:
        smtp(app).mailbox.on_accept = None
    ids = [r.header("Message-ID") for r in smtp(app).mailbox.all()]
    assert len(ids) == len(set(ids)) == 3, ids  # each mail once, though every send took longer than the lease
    assert [(m.status, m.attempts, m.claimed_by) for m in outbox(app)] == [("sent", 1, None)] * 3
    return report, rivals


def test_a_drain_that_lost_its_rows_to_another_sends_none_of_them_and_records_nothing(mail_app: Flask) -> None:
    queue(mail_app, 3, template="auto_passed")
    later = [m.id for m in outbox(mail_app)][1:]

    def taken_over(mail: Received) -> None:
        # While the first mail is being sent, the two others change hands (as if this drain's lease had
        # lapsed and another drain claimed them); the next renewal sees it.
        with mail_app.app_context():
            session = get_session()
            session.execute(
                sa.update(OutboxMail).where(OutboxMail.id.in_(later)).values(claimed_by="another-host:1:cd")  # type: ignore[union-attr]
            )
            session.commit()
        time.sleep(0.4)

    smtp(mail_app).mailbox.on_accept = taken_over
    try:
        report = run_drain(mail_app, lease_seconds=0.4)
    finally:
        smtp(mail_app).mailbox.on_accept = None
    assert (report.sent, report.lost) == (1, 2)
    assert len(smtp(mail_app).mailbox.all()) == 1
    assert [(m.status, m.claimed_by) for m in outbox(mail_app)] == [
        ("sent", None),
        ("pending", "another-host:1:cd"),
        ("pending", "another-host:1:cd"),
    ]


def test_a_drain_starved_of_cpu_past_its_lease_keeps_its_rows_while_it_lives(
    mail_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seen under a load of 15: the renewal thread did not get the CPU in time, the lease lapsed while the first
    # mail was still with the SMTP server, and another drain claimed that row and sent it too. Here the
    # renewal thread never renews at all (as if starved for good) and each mail outlasts the lease four times.
    monkeypatch.setattr(leases.Lease, "_run", lambda lease: None)
    report, rivals = slow_drain_among_rivals(mail_app, send_seconds=2.0, lease_seconds=0.5)
    # The lease lapsed long ago, but its drain lives: the others found nothing to claim; and before each later
    # mail the drain, its lease not renewed, confirmed in the database that the row was still its own.
    assert (report.sent, report.lost) == (3, 0)
    assert len(rivals) >= 10 and sum(r.claimed for r in rivals) == 0


def test_a_drain_killed_while_sending_gives_its_rows_up_with_its_process_and_they_go_out_one_lease_later(
    mail_app: Flask,
) -> None:
    # At least once after a crash: a drain killed outright (no ``finally`` runs) while the SMTP server holds its
    # mail gives up its lock with its process, and the next drain sends the same mail again when the lease ends.
    queue(mail_app, 1, template="auto_passed")
    killed = killed_midway(
        mail_app,
        lambda: run_drain(mail_app, lease_seconds=1.0),
        lambda callback: setattr(smtp(mail_app).mailbox, "on_accept", callback),
    )
    [first] = smtp(mail_app).mailbox.all()
    report = once_the_lease_lapsed(lambda: run_drain(mail_app, lease_seconds=1.0), killed)
    assert report.sent == 1
    received = smtp(mail_app).mailbox.all()
    assert [r.header("Message-ID") for r in received] == [first.header("Message-ID")] * 2  # the same mail
    assert [(m.status, m.attempts, m.claimed_by) for m in outbox(mail_app)] == [("sent", 2, None)]


def test_a_drain_that_fails_while_its_process_lives_on_gives_its_rows_back_at_once(mail_app: Flask) -> None:
    # Its process lives on (and, on PostgreSQL, holds its lock): no other process's drain may take the rows, and
    # without their return they would wait for the lease to lapse and a later drain of the same process.
    queue(mail_app, 3, template="auto_passed")

    class Unopenable:
        def open(self) -> Any:
            raise OSError("the relay's client certificate cannot be read")

    with pytest.raises(OSError):
        run_drain(mail_app, Unopenable())
    # Given back untried: due at once, the attempt not counted.
    assert [(m.status, m.attempts, m.claimed_by) for m in outbox(mail_app)] == [("pending", 0, None)] * 3
    assert run_drain(mail_app).sent == 3  # at once, well within the 20 s lease
    assert len(smtp(mail_app).mailbox.all()) == 3


def test_a_drain_that_fails_midway_gives_back_the_rows_it_had_not_begun_and_keeps_the_one_it_was_sending(
    mail_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue(mail_app, 3, template="auto_passed")
    send_one = drain_queue._send_one
    monkeypatch.setattr(drain_queue, "_send_one", failing_at_the_second(send_one))
    with pytest.raises(RuntimeError):
        run_drain(mail_app)
    monkeypatch.setattr(drain_queue, "_send_one", send_one)
    # The first went out and its outcome is stored; the second may have been with the SMTP server when the drain
    # failed, so it stays claimed (sent again only once its lease lapsed: at least once); the third is given back.
    held = [(m.status, m.attempts, m.claimed_by is not None) for m in outbox(mail_app)]
    assert held == [("sent", 1, False), ("pending", 1, True), ("pending", 0, False)]
    report = run_drain(mail_app)
    assert (report.claimed, report.sent) == (1, 1)
    assert len(smtp(mail_app).mailbox.all()) == 2


def only_the_turn_mail_due(app: Flask) -> tuple[int, OutboxMail]:
    """A new game whose mails but its first "your turn" went out already: that game and that mail (it carries the
    seat's signed turn link, whose token carries the time it was signed)."""
    game_id = new_game(app)
    [turn, *_] = outbox(app, "your_turn", game_id)
    with app.app_context():
        session = get_session()
        session.execute(sa.update(OutboxMail).where(OutboxMail.id != turn.id).values(status="sent"))  # type: ignore[arg-type]
        session.commit()
    return game_id, turn


def test_a_mail_sent_again_after_its_drain_was_killed_is_the_same_bytes(mail_app: Flask) -> None:
    # ARCHITECTURE §6: written once, before its first attempt, and stored; the copy sent after the crash is the stored
    # bytes, not a new rendering with its links signed anew (a second later, so other tokens), and a mail client
    # folds the two copies. Before, the copies had the same Message-ID but another unsubscribe link.
    queue(mail_app, 1, template="auto_passed")  # a notice: its one-click unsubscribe link is signed as it is sent
    killed = killed_midway(
        mail_app,
        lambda: run_drain(mail_app, lease_seconds=1.0),
        lambda callback: setattr(smtp(mail_app).mailbox, "on_accept", callback),
    )
    [first] = smtp(mail_app).mailbox.all()
    assert "/unsubscribe/" in first.text  # a signed link whose token carries the time it was signed
    [held] = outbox(mail_app)  # stored before it went out
    assert held.rendered is not None and held.rendered.replace(b"\r\n", b"\n") == first.content.replace(b"\r\n", b"\n")
    time.sleep(1.1)  # a signing now would carry another second
    report = once_the_lease_lapsed(lambda: run_drain(mail_app, lease_seconds=1.0), killed)
    assert (report.sent, report.maybe_sent) == (1, 0)
    first, again = smtp(mail_app).mailbox.all()
    [row] = outbox(mail_app)
    assert again.header("Message-ID") == first.header("Message-ID") == row.message_id
    assert again.content == first.content
    # Sent: the bytes are dropped, needed no more (a turn mail with its board picture is some 60 KB).
    assert (row.status, row.attempts, row.may_have_left, row.rendered) == ("sent", 2, True, None)


def test_a_mail_an_attempt_that_died_may_have_sent_is_never_recorded_skipped(mail_app: Flask) -> None:
    # The drain died after the SMTP server took the turn mail; before its lease lapsed, the player played that
    # turn. The mail is not sent again (its step is over), and not told as skipped either: it may have been sent.
    game_id, turn = only_the_turn_mail_due(mail_app)
    killed = killed_midway(
        mail_app,
        lambda: run_drain(mail_app, lease_seconds=1.0),
        lambda callback: setattr(smtp(mail_app).mailbox, "on_accept", callback),
    )
    with mail_app.app_context():
        session = get_session()
        session.execute(sa.update(Game).where(Game.id == game_id).values(step_key="a-later-step"))  # type: ignore[arg-type]
        session.commit()
    report = once_the_lease_lapsed(lambda: run_drain(mail_app, lease_seconds=1.0), killed)
    assert (report.claimed, report.sent, report.skipped, report.maybe_sent) == (1, 0, 0, 1)
    [row] = [m for m in outbox(mail_app) if m.id == turn.id]
    assert row.status == "maybe_sent" and row.claimed_by is None
    assert row.last_error is not None and "the step it was about is over" in row.last_error
    assert len(smtp(mail_app).mailbox.all()) == 1


def test_a_stale_mail_given_back_untried_is_skipped_not_maybe_sent(mail_app: Flask) -> None:
    # Only a drain that died holding a row whose bytes were written makes it "may have been sent": a row whose
    # drain gave it back untried (its process lives on) was not sent, and is skipped as before.
    game_id, turn = only_the_turn_mail_due(mail_app)

    class Unopenable:
        def open(self) -> Any:
            raise OSError("the relay's client certificate cannot be read")

    with pytest.raises(OSError):
        run_drain(mail_app, Unopenable())
    [row] = [m for m in outbox(mail_app) if m.id == turn.id]
    assert row.rendered is not None and row.claimed_by is None  # written, then given back
    with mail_app.app_context():
        session = get_session()
        session.execute(sa.update(Game).where(Game.id == game_id).values(step_key="a-later-step"))  # type: ignore[arg-type]
        session.commit()
    report = run_drain(mail_app)
    assert (report.skipped, report.maybe_sent) == (1, 0)
    assert [m.status for m in outbox(mail_app) if m.id == turn.id] == ["skipped"]
