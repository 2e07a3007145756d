"""emails.delivery: the SMTP backend against a real server (aiosmtpd), and the file backend."""

from __future__ import annotations

import doctest
import re
import smtplib
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emails import delivery
from emails.compose import _ADDRESS, Envelope, compose, to_bytes, write
from emails.delivery import DeliveryError, FileBackend, SMTPBackend, _plain, backend_from_config, quote_periods
from emails.samples import SAMPLES
from tests.smtp import SMTPServer


def mail(n: int, to: str = "bob@example.org") -> object:
    sample = SAMPLES["reminder"]
    rendered = sample.mail.render(now=sample.now, game_url=sample.game_url, unsubscribe_url=sample.unsubscribe_url)
    return compose(
        rendered,
        Envelope(
            message_id=f"<m{n}@smallworld.invalid>", to=to, sender="Small World <sw@example.org>", date=sample.now
        ),
    )


def test_one_connection_carries_a_whole_batch(smtp_server: SMTPServer) -> None:
    backend = SMTPBackend("127.0.0.1", smtp_server.port)
    with backend.open() as connection:
        for n in range(5):
            connection.send(mail(n))
    received = smtp_server.mailbox.all()
    assert [r.header("Message-ID") for r in received] == [f"<m{n}@smallworld.invalid>" for n in range(5)]
    assert len({r.session for r in received}) == 1
    assert backend.connections_opened == 1
    assert received[0].mail_from == "sw@example.org" and received[0].rcpt_tos == ("bob@example.org",)


def test_a_refused_recipient_is_a_permanent_failure_and_the_batch_goes_on(smtp_server: SMTPServer) -> None:
    smtp_server.mailbox.refuse["gone@example.org"] = "550 5.1.1 No such user"
    with SMTPBackend("127.0.0.1", smtp_server.port).open() as connection:
        with pytest.raises(DeliveryError) as refused:
            connection.send(mail(1, to="gone@example.org"))
        connection.send(mail(2))
    assert refused.value.permanent and not refused.value.connection_lost
    assert "550" in str(refused.value)
    assert [r.header("Message-ID") for r in smtp_server.mailbox.all()] == ["<m2@smallworld.invalid>"]


def test_a_temporary_refusal_is_transient(smtp_server: SMTPServer) -> None:
    smtp_server.mailbox.data_reply = "451 4.3.0 Try again later"
    with SMTPBackend("127.0.0.1", smtp_server.port).open() as connection, pytest.raises(DeliveryError) as error:
        connection.send(mail(1))
    assert not error.value.permanent and not error.value.connection_lost


def test_a_server_that_is_down_fails_the_batch_fast_and_transiently(smtp_server: SMTPServer) -> None:
    smtp_server.stop()
    backend = SMTPBackend("127.0.0.1", smtp_server.port, timeout=5)
    with backend.open() as connection:
        for n in range(3):
            with pytest.raises(DeliveryError) as error:
                connection.send(mail(n))
            assert not error.value.permanent and error.value.connection_lost
    assert backend.connections_opened == 1  # the rest of the batch was not tried


def test_the_file_backend_writes_one_eml_per_mail_and_the_same_file_again_on_a_resend(tmp_path: Path) -> None:
    backend = FileBackend(tmp_path / "mail")
    with backend.open() as files:
        files.send(mail(1))
        files.send(mail(1))
        files.send(mail(2))
    written = sorted((tmp_path / "mail").iterdir())
    assert len(written) == 2 and all(p.suffix == ".eml" for p in written)
    assert b"Message-ID: <m1@smallworld.invalid>" in b"".join(p.read_bytes() for p in written)


def test_the_configuration_names_the_backend(tmp_path: Path) -> None:
    assert isinstance(backend_from_config({"MAIL_BACKEND": "file", "MAIL_DIR": str(tmp_path)}), FileBackend)
    smtp = backend_from_config(
        {"MAIL_BACKEND": "smtp", "SMTP_HOST": "mail.example", "SMTP_PORT": 587, "SMTP_SECURITY": "starttls"}
    )
    assert isinstance(smtp, SMTPBackend) and (smtp.host, smtp.port, smtp.security) == ("mail.example", 587, "starttls")


def test_a_mail_smtp_cannot_carry_fails_for_good_and_the_connection_serves_the_next(smtp_server: SMTPServer) -> None:
    backend = SMTPBackend("127.0.0.1", smtp_server.port)
    unsayable = mail(1)
    unsayable.replace_header("To", "jörg@example.org")  # SMTPUTF8 would be needed: smtplib speaks ASCII
    with backend.open() as connection:
        with pytest.raises(DeliveryError) as error:
            connection.send(unsayable)
        connection.send(mail(2))
    assert error.value.permanent and not error.value.connection_lost
    assert [r.header("Message-ID") for r in smtp_server.mailbox.all()] == ["<m2@smallworld.invalid>"]


def test_the_file_backend_leaves_no_file_behind_for_a_mail_it_cannot_write(tmp_path: Path) -> None:
    backend = FileBackend(tmp_path / "mail")
    broken = mail(1)
    broken.replace_header("To", '"Ann\r\nBcc: eve@example.org" <ann@example.org>')  # past compose's checks
    with backend.open() as files:
        with pytest.raises(DeliveryError) as error:
            files.send(broken)
        files.send(mail(2))
    assert error.value.permanent
    assert [p.suffix for p in (tmp_path / "mail").iterdir()] == [".eml"]


def test_lines_that_start_with_a_dot_and_the_board_picture_arrive_byte_for_byte(smtp_server: SMTPServer) -> None:
    # RFC 5321 4.5.2: the client doubles a dot that starts a line and the server removes it again.
    sample = SAMPLES["your_turn"]
    rendered = sample.mail.render(now=sample.now, game_url=sample.game_url)
    assert rendered.images  # the board picture, in base64 lines
    dotted = replace(rendered, text=".\n.. two dots\n.one\nmiddle . dot\n" + rendered.text + "\n.")
    message = compose(
        dotted,
        Envelope(
            message_id="<dots@smallworld.invalid>", to="bob@example.org", sender="sw@example.org", date=sample.now
        ),
    )
    with SMTPBackend("127.0.0.1", smtp_server.port).open() as connection:
        connection.send(message)
    (received,) = smtp_server.mailbox.all()
    assert received.content == to_bytes(message)
    assert received.text.replace("\r\n", "\n").startswith(".\n.. two dots\n.one\nmiddle . dot\n")


def test_a_written_mail_arrives_byte_for_byte_from_its_envelope(smtp_server: SMTPServer) -> None:
    sample = SAMPLES["your_turn"]
    rendered = sample.mail.render(now=sample.now, game_url=sample.game_url)
    envelope = Envelope(
        message_id="<w@smallworld.invalid>",
        to="jorg.o'neil+sw@example.org",
        to_name="Jörg",
        sender="Small World <sw@example.org>",
        date=sample.now,
    )
    with SMTPBackend("127.0.0.1", smtp_server.port).open() as connection:
        connection.send(write(rendered, envelope))
    (received,) = smtp_server.mailbox.all()
    assert received.content == to_bytes(compose(rendered, envelope))
    assert received.mail_from == "sw@example.org" and received.rcpt_tos == ("jorg.o'neil+sw@example.org",)


@settings(max_examples=500, deadline=None)
@given(st.from_regex(_ADDRESS, fullmatch=True))
def test_a_plain_address_is_quoted_as_smtplib_quotes_it(address: str) -> None:
    # MAIL and RCPT write a plain address in angle brackets without parsing it: what quoteaddr gives.
    if len(address) <= 254:
        assert _plain(address)
        assert smtplib.quoteaddr(address) == f"<{address}>"


@st.composite
def data_with_dotless_ranges(draw: st.DrawFn) -> tuple[bytes, list[tuple[int, int]]]:
    """Lines of dots, line ends and letters, some of them ranges without a dot, as a mail's pictures are."""
    pieces = draw(
        st.lists(st.tuples(st.booleans(), st.binary(max_size=12).map(lambda b: b.translate(_FEW))), max_size=12)
    )
    data, ranges = b"", []
    for dotless, piece in pieces:
        if dotless:
            piece = piece.replace(b".", b"A")
            if piece:
                ranges.append((len(data), len(data) + len(piece)))
        data += piece
    return data, ranges


#: Bytes mapped onto the few that matter to SMTP's dots: the dot, both line ends and a letter.
_FEW = bytes(b".\r\nA"[n % 4] for n in range(256))


@settings(max_examples=1000, deadline=None)
@given(data_with_dotless_ranges())
def test_dots_are_doubled_as_smtplib_doubles_them_with_or_without_the_dotless_ranges(
    case: tuple[bytes, list[tuple[int, int]]],
) -> None:
    data, ranges = case
    expected = re.sub(rb"(?m)^\.", b"..", data)  # smtplib's _quote_periods
    assert quote_periods(data) == expected
    assert quote_periods(data, ranges) == expected


def test_the_examples_of_emails_delivery_hold() -> None:
    assert doctest.testmod(delivery).failed == 0


def test_a_turn_mail_goes_out_as_written_its_picture_not_searched_for_dots(smtp_server: SMTPServer) -> None:
    # The picture's base64 is skipped when dots are doubled (Mail.dotless): the server receives the mail's
    # bytes, and a text with lines that start with a dot arrives whole.
    sample = SAMPLES["your_turn"]
    rendered = sample.mail.render(now=sample.now, game_url=sample.game_url)
    rendered = replace(rendered, text=".one\n..two\n.\n" + rendered.text)
    envelope = Envelope(message_id="<t@smallworld.invalid>", to="bob@example.org", sender="sw@x.org", date=sample.now)
    written = write(rendered, envelope)
    assert written.dotless
    with SMTPBackend("127.0.0.1", smtp_server.port).open() as connection:
        connection.send(written)
    (received,) = smtp_server.mailbox.all()
    assert received.content == written.data == to_bytes(compose(rendered, envelope))


def test_an_address_that_is_not_plain_is_left_to_smtplib() -> None:
    for address in ("Ann <ann@example.org>", "ann@example.org ", "", "a@b, c@d"):
        assert not _plain(address)


def test_the_file_backend_names_a_written_mail_as_the_mail_it_writes(tmp_path: Path) -> None:
    sample = SAMPLES["reminder"]
    rendered = sample.mail.render(now=sample.now, game_url=sample.game_url)
    envelope = Envelope(message_id="<f@smallworld.invalid>", to="bob@example.org", sender="sw@x.org", date=sample.now)
    backend = FileBackend(tmp_path / "mail")
    written = write(rendered, envelope)
    assert backend.path_for(written) == backend.path_for(compose(rendered, envelope))
    with backend.open() as files:
        files.send(written)
    assert backend.path_for(written).read_bytes() == written.data
