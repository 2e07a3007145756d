"""service/domain/bounces.py: each mail's own signed bounce address, and what a delivery report to it does. Over real
SMTP both ways: the service's mail to aiosmtpd, the reports to the inbound listener (``smallworld inbound``), on
SQLite and PostgreSQL."""

from __future__ import annotations

import doctest
from collections.abc import Callable, Iterator

import pytest
from flask import Flask
from sqlmodel import select

from emails.messages import YourLinks
from service.cli.inbound import InboundController, listener
from service.domain import bounces
from service.domain.models import InboundMail, MailStatus, OutboxMail, Player
from service.domain.outbox import queue_mail
from service.infra.db import get_session
from tests.mail_players import INBOUND_DOMAIN, MailTable, dsn, mail_settings, send_smtp_bytes, sign_in_again
from tests.processes import free_port
from tests.smtp import Received, SMTPServer, smtp_server  # noqa: F401  (fixture)

PHISHING = "550 5.1.1 re-confirm your seat at https://evil.example/login"


@pytest.fixture(params=["sqlite", "postgres"])
def table(request: pytest.FixtureRequest, make_app: Callable[..., Flask], smtp_server: SMTPServer) -> MailTable:  # noqa: F811
    extra = {}
    if request.param == "postgres":
        extra = {
            "DATABASE_URL": request.getfixturevalue("postgres_url"),
            "BROKER_URL": request.getfixturevalue("redis_url"),
        }
    table = MailTable(make_app(**mail_settings(smtp_server, **extra)), smtp_server, players=2)
    table.create()
    return table


@pytest.fixture
def inbound(table: MailTable) -> Iterator[InboundController]:
    server = listener(table.app, port=free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


def mark_of(table: MailTable, email: str) -> tuple[object, str | None]:
    with table.app.app_context():
        player = get_session().exec(select(Player).where(Player.email == email)).one()
        return player.bouncing_since, player.bounce_reason


def last_outcome(table: MailTable) -> str:
    return table.inbound()[-1].outcome


def mails_to(table: MailTable, email: str) -> list[Received]:
    return [m for m in table.smtp.mailbox.all() if m.rcpt_tos == (email,)]


def test_the_addresses_examples_hold() -> None:
    assert doctest.testmod(bounces).failed == 0


def test_each_mail_goes_out_with_its_own_signed_bounce_address(table: MailTable) -> None:
    table.deliver()
    senders = [m.mail_from for m in table.smtp.mailbox.all()]
    assert len(senders) >= 3 and len(set(senders)) == len(senders)
    with table.app.app_context():
        addresses = bounces.BounceAddresses(tuple(table.app.extensions["smallworld.links"].signer.keys), INBOUND_DOMAIN)
        rows = {row.message_id: row.id for row in get_session().exec(select(OutboxMail)).all()}
    for mail in table.smtp.mailbox.all():
        assert mail.mail_from.endswith(f"@{INBOUND_DOMAIN}")
        assert addresses.read(mail.mail_from) == rows[mail.header("Message-ID")]


def test_a_forged_report_is_ignored_and_marks_nobody(table: MailTable, inbound: InboundController) -> None:
    table.deliver()
    [sent] = mails_to(table, "p1@example.org")[-1:]
    forged_mac = sent.mail_from.split("-")[0] + "-0123456789@" + INBOUND_DOMAIN
    cases = [
        # To the From address, naming the mail it returns: anyone can write that.
        ("smallworld@smallworld.example", sent.header("Message-ID")),
        # To a bounce address whose signature does not hold.
        (forged_mac, None),
        # To the signed bounce address of a row that was never sent (a row id of the future, signed right).
        (bounces.BounceAddresses(_keys(table), INBOUND_DOMAIN).for_row(10_000), None),
    ]
    for to, returned in cases:
        send_smtp_bytes(inbound.port, dsn(to, "p1@example.org", diagnostic=PHISHING, returned=returned), to)
        assert table.inbound()[-1].kind == "bounce"
        assert "ignored" in last_outcome(table) or "not sent" in last_outcome(table), last_outcome(table)
    assert mark_of(table, "p1@example.org") == (None, None)
    assert not table.deliver(), "the host was not told"


def test_a_report_to_a_sent_mails_address_marks_it_and_a_marked_address_gets_no_mail_until_its_owner_signs_in(
    table: MailTable, inbound: InboundController
) -> None:
    table.deliver()
    [sent] = mails_to(table, "p1@example.org")[-1:]
    send_smtp_bytes(inbound.port, dsn(sent.mail_from, "p1@example.org", diagnostic=PHISHING), sent.mail_from)
    since, reason = mark_of(table, "p1@example.org")
    assert since is not None and reason == "5.1.1 mailbox unknown"
    # The host is told once, in fixed words: never the report's own text.
    [alert] = table.deliver()
    assert alert.rcpt_tos == ("p0@example.org",) and "mail to Player 1 bounces" in alert.headline
    for text in (alert.text, alert.html):
        assert "evil.example" not in text and "re-confirm" not in text
    send_smtp_bytes(inbound.port, dsn(sent.mail_from, "p1@example.org", status="5.2.1"), sent.mail_from)
    assert not table.deliver(), "told once"

    # A marked address gets no mail: the outbox skips it, and says why.
    with table.app.app_context():
        links = table.app.extensions["smallworld.links"]
        session = get_session()
        player = session.exec(select(Player).where(Player.email == "p1@example.org")).one()
        seats = [{"name": "Player 1", "url": links.base_url + "/x", "accepted": True}]
        queue_mail(
            session,
            player,
            YourLinks(game_id=table.game_id, game_name="By mail", seats=seats, player_id=player.id or 0, window=1),
        )
        session.commit()
    assert not table.deliver()
    with table.app.app_context():
        skipped = get_session().exec(select(OutboxMail).where(OutboxMail.template == "your_links")).one()
        assert skipped.status == MailStatus.SKIPPED and "bounces" in (skipped.last_error or "")

    # Its owner signs in again (the sign-in link is the one mail it still gets): it takes mail again.
    sign_in_again(table, "p1@example.org")
    assert mark_of(table, "p1@example.org") == (None, None)


def test_a_common_non_standard_bounce_marks_and_a_delay_does_not(table: MailTable, inbound: InboundController) -> None:
    table.deliver()
    [sent] = mails_to(table, "p1@example.org")[-1:]
    delayed = dsn(sent.mail_from, "p1@example.org", diagnostic="452 4.2.2 Mailbox full", status="4.2.2")
    send_smtp_bytes(inbound.port, delayed.replace(b"Action: failed", b"Action: delayed"), sent.mail_from)
    assert mark_of(table, "p1@example.org") == (None, None)
    # A qmail bounce: no multipart/report, the status in its text.
    qmail = (
        f"From: MAILER-DAEMON@mx.example.org\r\nTo: {sent.mail_from}\r\nSubject: failure notice\r\n"
        f"Message-ID: <qmail-1@mx.example.org>\r\n\r\n"
        "Hi. This is the qmail-send program at mx.example.org.\r\n"
        "I'm afraid I wasn't able to deliver your message to the following addresses.\r\n"
        "This is a permanent error; I've given up. Sorry it didn't work out.\r\n\r\n"
        "<p1@example.org>:\r\n192.0.2.1 does not like recipient.\r\n"
        "Remote host said: 550 5.1.1 <p1@example.org>: Recipient address rejected\r\n"
    ).encode()
    send_smtp_bytes(inbound.port, qmail, sent.mail_from)
    since, reason = mark_of(table, "p1@example.org")
    assert since is not None and reason == "5.1.1 mailbox unknown"
    with table.app.app_context():
        kinds = [row.kind for row in get_session().exec(select(InboundMail).order_by(InboundMail.id)).all()]  # type: ignore[arg-type]
    assert kinds == ["bounce", "bounce"], "never read as orders"


def _keys(table: MailTable) -> tuple[str | bytes, ...]:
    return tuple(table.app.extensions["smallworld.links"].signer.keys)


def test_a_site_admin_lists_and_clears_a_bouncing_address_from_the_shell(
    table: MailTable, inbound: InboundController
) -> None:
    table.deliver()
    [sent] = mails_to(table, "p1@example.org")[-1:]
    send_smtp_bytes(inbound.port, dsn(sent.mail_from, "p1@example.org"), sent.mail_from)
    runner = table.app.test_cli_runner()
    listed = runner.invoke(args=["admin", "bouncing"])
    assert listed.exit_code == 0 and listed.output.split() == ["p1@example.org"]
    cleared = runner.invoke(args=["admin", "clear-bounce", "p1@example.org"])
    assert cleared.exit_code == 0, cleared.output
    assert mark_of(table, "p1@example.org") == (None, None)
    again = runner.invoke(args=["admin", "clear-bounce", "p1@example.org"])
    assert again.exit_code != 0 and "not marked" in again.output
