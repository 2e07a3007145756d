"""The SMTP/LMTP listener for inbound mail (service/cli/inbound.py): no relay, LMTP, ``smallworld inbound``."""

from __future__ import annotations

import email.policy
import smtplib
import time
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

import pytest
from flask import Flask

from service.cli.inbound import listener
from tests.mail_players import MailTable, mail_settings, reply_to
from tests.processes import free_port, service_environment, start, stop
from tests.smtp import SMTPServer, smtp_server  # noqa: F401  (fixture)


@pytest.fixture
def app(make_app: Callable[..., Flask], smtp_server: SMTPServer) -> Flask:  # noqa: F811
    return make_app(**mail_settings(smtp_server))


def test_the_listener_is_no_relay(app: Flask) -> None:
    server = listener(app, port=free_port())
    server.start()
    try:
        with smtplib.SMTP("127.0.0.1", server.port, timeout=10) as client:
            client.ehlo()
            code, _ = client.mail("someone@example.org")
            assert code == 250
            code, reply = client.rcpt("victim@elsewhere.example")
            assert code == 550 and b"Relaying denied" in reply
            # Its own domain, and the sender's address (where bounces come), are taken.
            assert client.rcpt("play+anything@play.smallworld.example")[0] == 250
            assert client.rcpt("smallworld@smallworld.example")[0] == 250
    finally:
        server.stop()


def test_orders_by_lmtp(app: Flask, smtp_server: SMTPServer) -> None:  # noqa: F811
    table = MailTable(app, smtp_server, players=2)
    table.create()
    [turn] = [m for m in table.deliver() if "your turn" in (m.headline).lower()]
    server = listener(app, port=free_port(), lmtp=True)
    server.start()
    try:
        message = reply_to(turn, "pick 1")
        with smtplib.LMTP("127.0.0.1", server.port) as client:
            refused = client.send_message(message, to_addrs=[str(message["To"])])
        assert refused == {}
    finally:
        server.stop()
    [answer] = table.deliver()
    # The answer replies to the player's mail (its subject, "Re:" once); what it is, its heading says.
    assert answer.header("Subject") == f"Re: {turn.header('Subject')}"
    assert answer.headline == "Done in By mail"
    assert table.game().version > 0


def test_a_mail_over_the_limit_is_refused_at_data(make_app: Callable[..., Flask], smtp_server: SMTPServer) -> None:  # noqa: F811
    app = make_app(**mail_settings(smtp_server, INBOUND_MAX_BYTES=2000))
    server = listener(app, port=free_port())
    server.start()
    try:
        big = b"Subject: x\r\n\r\n" + b"y" * 5000
        with (
            smtplib.SMTP("127.0.0.1", server.port, timeout=10) as client,
            pytest.raises(smtplib.SMTPException) as refused,
        ):
            client.sendmail("a@example.org", ["play+x@play.smallworld.example"], big)
        assert "552" in str(refused.value)
    finally:
        server.stop()


def test_a_mail_over_the_inbound_limits_gets_an_smtp_refusal_and_is_recorded(
    make_app: Callable[..., Flask],
    smtp_server: SMTPServer,  # noqa: F811
) -> None:
    # Issue 32, finding 2: 554 for good (too many MIME parts), 450 and 451 for now (the seat's mails this hour,
    # the CPU budget); each recorded as refused, none answered.
    from tests.domain.test_inbound import wide_reply

    app = make_app(**mail_settings(smtp_server, INBOUND_MAILS_PER_SEAT_PER_HOUR=1))
    table = MailTable(app, smtp_server, players=2)
    table.create()
    [turn] = [m for m in table.deliver() if "your turn" in (m.headline).lower()]
    address = str(turn.header("Reply-To"))
    version = table.game().version
    server = listener(app, port=free_port())
    server.start()

    def refusal(mail: bytes | EmailMessage) -> tuple[int, str]:
        raw = mail.as_bytes(policy=email.policy.SMTP) if isinstance(mail, EmailMessage) else mail
        with smtplib.SMTP("127.0.0.1", server.port, timeout=30) as client:
            try:
                client.sendmail("p0@example.org", [address], raw)
            except smtplib.SMTPDataError as refused:
                return refused.smtp_code, refused.smtp_error.decode()
        return 250, ""

    try:
        assert refusal(reply_to(turn, "help")) == (250, "")
        code, text = refusal(wide_reply(turn, 20_000))
        assert code == 554 and text.startswith("5.6.0") and "MIME parts" in text
        code, text = refusal(reply_to(turn, "pick 1"))
        assert code == 450 and text.startswith("4.7.1")
        app.config.update(INBOUND_MAILS_PER_SEAT_PER_HOUR=10, INBOUND_CPU_SECONDS=0)
        code, text = refusal(reply_to(turn, "pick 1"))
        assert code == 451 and text.startswith("4.3.0") and "of CPU" in text
    finally:
        server.stop()
    assert [row.kind for row in table.inbound()] == ["orders", "refused", "refused", "refused"]
    assert table.game().version == version, "no refused mail's 'pick 1' was carried out"
    assert len(table.deliver()) == 1, "only the mail read was answered"


@pytest.mark.processes
def test_smallworld_inbound_runs_alone_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    env = service_environment(tmp_path / "instance", SMALLWORLD_INBOUND_PORT=str(port))
    log = tmp_path / "inbound.log"
    start(["db", "upgrade"], env, tmp_path / "db.log").wait(timeout=120)
    process = start(["inbound"], env, log)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with smtplib.SMTP("127.0.0.1", port, timeout=5) as client:
                    assert client.noop()[0] == 250
                break
            except OSError:
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "the listener did not answer within 60 s"
                time.sleep(0.3)
        assert f"by SMTP on 127.0.0.1:{port}" in log.read_text()
    finally:
        stop(process)
    assert process.returncode == 0, log.read_text()
