"""A real SMTP server for the tests (aiosmtpd), that records what it receives and can misbehave on demand.

``smtp_server`` is a fixture; test folders that need it import it into their ``conftest.py``.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage, Message
from functools import cached_property
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from emails.render import read_headline
from tests.processes import free_port


@dataclass(frozen=True)
class Received:
    mail_from: str
    rcpt_tos: tuple[str, ...]
    content: bytes
    #: Which SMTP session (connection) brought it.
    session: int

    # Parsed once, on first use: a test reads a mail's headers and parts many times (a whole game by mail
    # reads hundreds of mails), and each parse of a mail with its board picture takes milliseconds.
    @cached_property
    def message(self) -> EmailMessage:
        parsed: EmailMessage = email.message_from_bytes(self.content, policy=email.policy.default)  # type: ignore[assignment]
        return parsed

    @cached_property
    def text(self) -> str:
        part = self.message.get_body(preferencelist=("plain",))
        assert part is not None, "a mail without a plain-text part"
        return str(part.get_content())

    @cached_property
    def html(self) -> str:
        part = self.message.get_body(preferencelist=("html",))
        assert part is not None
        return str(part.get_content())

    def header(self, name: str) -> str | None:
        value = self.message[name]
        return None if value is None else str(value)

    @cached_property
    def headline(self) -> str:
        """What the mail is: its subject, or in a game's conversation (one subject for the whole game) the
        first line of its text."""
        return read_headline(self.header("Subject") or "", self.text)


def headline(message: Message) -> str:
    """:attr:`Received.headline` of a parsed mail."""
    if not isinstance(message, EmailMessage):
        message = email.message_from_bytes(message.as_bytes(), policy=email.policy.default)  # type: ignore[assignment]
    assert isinstance(message, EmailMessage)
    part = message.get_body(preferencelist=("plain",))
    return read_headline(str(message["Subject"] or ""), str(part.get_content()) if part is not None else "")


class Mailbox:
    """The server's record, and the switches that make it misbehave."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.lock = threading.Lock()
        #: Recipient address → reply to its RCPT TO (e.g. "550 5.1.1 No such user").
        self.refuse: dict[str, str] = {}
        #: A reply to every DATA instead of accepting (e.g. "451 4.3.0 Try again later").
        self.data_reply: str | None = None
        #: Recipient address → reply to the DATA of a mail to it (e.g. "554 5.7.1 Rejected as spam").
        self.data_refuse: dict[str, str] = {}
        #: Called with each accepted mail after it is recorded, before the server answers 250.
        self.on_accept: Callable[[Received], None] | None = None
        #: Recipient address → seconds the server waits before answering its RCPT TO, once (the sender
        #: holds the mail meanwhile: a test can kill it then). ``stalling`` lists the stalls begun.
        self.stall: dict[str, float] = {}
        self.stalling: list[str] = []

    # aiosmtpd handler hooks
    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: Any) -> str:
        if address in self.stall:
            seconds = self.stall.pop(address)
            self.stalling.append(address)
            await asyncio.sleep(seconds)
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.data_reply:
            return self.data_reply
        for address in envelope.rcpt_tos:
            if address in self.data_refuse:
                return self.data_refuse[address]
        received = Received(envelope.mail_from, tuple(envelope.rcpt_tos), bytes(envelope.content), id(session))
        with self.lock:
            self.received.append(received)
        if self.on_accept is not None:
            self.on_accept(received)
        return "250 Message accepted for delivery"

    # reading
    def to(self, address: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if address in r.rcpt_tos]

    def all(self) -> list[Received]:
        with self.lock:
            return list(self.received)

    def wait_for(self, condition: Callable[[list[Received]], Any], timeout: float = 15.0) -> Any:
        """Poll until ``condition(received)`` is truthy; return it, or fail the test after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            result = condition(self.all())
            if result:
                return result
            if time.monotonic() > deadline:
                subjects = [r.header("Subject") for r in self.all()]
                pytest.fail(f"the SMTP server did not receive the expected mail within {timeout} s; got {subjects}")
            time.sleep(0.02)


class SMTPServer:
    """An aiosmtpd server on 127.0.0.1 that can be stopped ("down") and started again on the same port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.mailbox = Mailbox()
        self._controller: Controller | None = None

    def start(self) -> None:
        if self._controller is None:
            self._controller = Controller(self.mailbox, hostname="127.0.0.1", port=self.port)
            self._controller.start()

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    @property
    def settings(self) -> dict[str, Any]:
        return {"MAIL_BACKEND": "smtp", "SMTP_HOST": "127.0.0.1", "SMTP_PORT": self.port}


@pytest.fixture
def smtp_server() -> Iterator[SMTPServer]:
    server = SMTPServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
