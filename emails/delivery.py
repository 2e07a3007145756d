"""Sending composed mails: over SMTP (``smtplib``), or as ``.eml`` files for the embedded mode (ARCHITECTURE §6).

A backend's :meth:`open` gives a connection for one batch: the SMTP connection is made at the first mail
and reused for the rest of the batch (one TCP and TLS handshake per batch, not per mail). Failures come
out as :class:`DeliveryError`, saying whether trying again later may help (``permanent``) and whether the
connection is gone (then the rest of the batch is not tried: a server that is down would make each mail
wait for its own timeout).
"""

from __future__ import annotations

import contextlib
import email.errors
import hashlib
import os
import smtplib
import ssl
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from email.message import Message
from email.utils import parseaddr, parsedate_to_datetime
from pathlib import Path
from typing import Any, Protocol

from .compose import ComposeError, Mail, check_address, to_bytes

SECURITY = ("none", "starttls", "ssl")


class DeliveryError(Exception):
    """A mail was not delivered. ``permanent``: the server refused it for good (5xx); otherwise retry."""

    def __init__(self, message: str, *, permanent: bool = False, connection_lost: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent
        self.connection_lost = connection_lost


class Connection(Protocol):
    def send(self, message: Message | Mail) -> None: ...


class Backend(Protocol):
    def open(self) -> Any:
        """A context manager giving a :class:`Connection` for one batch."""
        ...


def envelope_addresses(message: Message | Mail) -> tuple[str, list[str]]:
    if isinstance(message, Mail):
        return message.sender, [message.recipient]
    return parseaddr(str(message["From"]))[1], [parseaddr(str(message["To"]))[1]]


class SMTPBackend:
    """An SMTP relay: ``security`` is ``none``, ``starttls`` (port 587) or ``ssl`` (implicit TLS, port 465)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        username: str | None = None,
        password: str | None = None,
        security: str = "none",
        timeout: float = 30.0,
    ) -> None:
        if security not in SECURITY:
            raise ValueError(f"SMTP security is one of {', '.join(SECURITY)}, not {security!r}")
        self.host, self.port = host, port
        self.username, self.password = username, password
        self.security = security
        self.timeout = timeout
        #: How many SMTP connections this backend opened (the benchmark and tests read it).
        self.connections_opened = 0

    @contextmanager
    def open(self) -> Iterator[SMTPConnection]:
        connection = SMTPConnection(self)
        try:
            yield connection
        finally:
            connection.close()

    def _connect(self) -> smtplib.SMTP:
        self.connections_opened += 1
        if self.security == "ssl":
            smtp: smtplib.SMTP = _SMTP_SSL(
                self.host, self.port, timeout=self.timeout, context=ssl.create_default_context()
            )
        else:
            smtp = _SMTP(self.host, self.port, timeout=self.timeout)
            if self.security == "starttls":
                smtp.starttls(context=ssl.create_default_context())
        if self.username:
            smtp.login(self.username, self.password or "")
        return smtp


def quote_periods(data: bytes, dotless: Sequence[tuple[int, int]] = ()) -> bytes:
    r"""``data`` with a dot doubled at the start of every line (RFC 5321 4.5.2), the bytes smtplib's
    ``_quote_periods`` gives (``re.sub(rb"(?m)^\.", b"..", data)``), several times quicker on a mail
    that carries a picture. ``dotless``: ranges of ``data`` (start, end, in order) that hold no dot at all
    (a picture's base64, :attr:`emails.compose.Mail.dotless`), which are not searched.

    >>> quote_periods(b".a\r\nb.\r\n.\r\n..c")
    b'..a\r\nb.\r\n..\r\n...c'
    >>> quote_periods(b"a\r\nQUJD\r\n.b\r\n.c", dotless=[(3, 9)])
    b'a\r\nQUJD\r\n..b\r\n..c'
    """
    pieces = []
    at = 0
    for start, end in (*dotless, (len(data), len(data))):
        if start > at:
            piece = data[at:start].replace(b"\n.", b"\n..")
            # A piece starts a line if it starts the data or follows a line end (in the range before it).
            if piece.startswith(b".") and (at == 0 or data[at - 1] == 0x0A):
                piece = b"." + piece
            pieces.append(piece)
        pieces.append(data[start:end])
        at = end
    return b"".join(pieces)


class _MailBytes(bytes):
    """A mail's bytes as smtplib's ``sendmail`` takes them, with the ranges that hold no dot
    (:attr:`emails.compose.Mail.dotless`) for :meth:`_QuickData.data`."""

    dotless: tuple[tuple[int, int], ...] = ()


class _QuickData:
    """smtplib's ``DATA`` for the bytes :func:`emails.compose.to_bytes` writes (CRLF line ends): the same
    bytes on the wire, with the dots doubled by :func:`quote_periods`. And its ``MAIL`` and ``RCPT`` for a
    plain address (:func:`emails.compose.check_address`), which smtplib's ``quoteaddr`` would parse only to
    write it back in angle brackets: the same commands, without parsing the address twice a mail."""

    def mail(self, sender: str, options: Any = ()) -> tuple[int, bytes]:
        smtp: Any = self
        if not _plain(sender) or any(option.lower() == "smtputf8" for option in options):
            return smtplib.SMTP.mail(smtp, sender, options)
        optionlist = " " + " ".join(options) if options and smtp.does_esmtp else ""
        smtp.putcmd("mail", f"FROM:<{sender}>{optionlist}")
        return smtp.getreply()

    def rcpt(self, recip: str, options: Any = ()) -> tuple[int, bytes]:
        smtp: Any = self
        if not _plain(recip):
            return smtplib.SMTP.rcpt(smtp, recip, options)
        optionlist = " " + " ".join(options) if options and smtp.does_esmtp else ""
        smtp.putcmd("rcpt", f"TO:<{recip}>{optionlist}")
        return smtp.getreply()

    def data(self, msg: Any) -> tuple[int, bytes]:
        smtp: Any = self
        if not isinstance(msg, bytes):
            return smtplib.SMTP.data(smtp, msg)
        smtp.putcmd("data")
        code, reply = smtp.getreply()
        if code != 354:
            raise smtplib.SMTPDataError(code, reply)
        quoted = quote_periods(msg, msg.dotless if isinstance(msg, _MailBytes) else ())
        if quoted[-2:] != b"\r\n":
            quoted += b"\r\n"
        smtp.send(quoted + b".\r\n")
        code, reply = smtp.getreply()
        return code, reply


def _plain(address: str) -> bool:
    """Whether ``address`` is one plain address, which ``smtplib.quoteaddr`` writes as ``<address>``."""
    try:
        return check_address(address) == address
    except ComposeError:
        return False


class _SMTP(_QuickData, smtplib.SMTP):
    pass


class _SMTP_SSL(_QuickData, smtplib.SMTP_SSL):  # noqa: N801
    pass


class SMTPConnection:
    """One batch's SMTP session: connects at the first mail, then reuses the connection."""

    def __init__(self, backend: SMTPBackend) -> None:
        self.backend = backend
        self.smtp: smtplib.SMTP | None = None
        self.broken: str | None = None

    def send(self, message: Message | Mail) -> None:
        if self.broken:
            raise DeliveryError(f"not tried: {self.broken}", connection_lost=True)
        sender, recipients, raw = _wire(message)
        try:
            if self.smtp is None:
                self.smtp = self.backend._connect()
            refused = self.smtp.sendmail(sender, recipients, raw)
        except smtplib.SMTPRecipientsRefused as error:
            code, reply = next(iter(error.recipients.values()))
            raise DeliveryError(_reply("recipient refused", code, reply), permanent=_permanent(code)) from None
        except (smtplib.SMTPSenderRefused, smtplib.SMTPDataError) as error:
            raise DeliveryError(
                _reply("refused", error.smtp_code, error.smtp_error), permanent=_permanent(error.smtp_code)
            ) from None
        except smtplib.SMTPAuthenticationError as error:
            # The relay's credentials are the operator's to fix; the mail itself is fine: retry later.
            self._break(_reply("SMTP login refused", error.smtp_code, error.smtp_error))
        except smtplib.SMTPResponseException as error:  # greeting, HELO, STARTTLS: the session is unusable
            self._break(_reply("SMTP session failed", error.smtp_code, error.smtp_error))
        except (smtplib.SMTPException, OSError) as error:  # disconnected, refused, timed out, TLS failed
            self._break(f"SMTP server {self.backend.host}:{self.backend.port} unreachable: {error!r}")
        except ValueError as error:
            # The mail itself cannot be said in SMTP (smtplib encodes commands as ASCII). The session may be
            # left midway through a transaction: start the next mail on a new one.
            self._drop()
            raise DeliveryError(f"cannot send this mail over SMTP: {error!r}", permanent=True) from None
        if refused:  # some recipients refused but not all: there is only one, so this does not happen
            code, reply = next(iter(refused.values()))
            raise DeliveryError(_reply("recipient refused", code, reply), permanent=_permanent(code))

    def _break(self, reason: str) -> None:
        self.broken = reason
        self._drop()
        raise DeliveryError(reason, connection_lost=True) from None

    def _drop(self) -> None:
        if self.smtp is not None:
            try:
                self.smtp.close()
            finally:
                self.smtp = None

    def close(self) -> None:
        if self.smtp is not None:
            try:
                self.smtp.quit()
            except (smtplib.SMTPException, OSError):
                pass
            finally:
                self._drop()


def _wire(message: Message | Mail) -> tuple[str, list[str], bytes]:
    """The envelope and the bytes of ``message``; a mail that cannot be written is a permanent failure."""
    try:
        sender, recipients = envelope_addresses(message)
        if isinstance(message, Mail) and message.dotless:
            raw = _MailBytes(message.data)
            raw.dotless = message.dotless
            return sender, recipients, raw
        return sender, recipients, to_bytes(message)  # 7-bit: quoted-printable bodies, encoded headers
    except (ValueError, TypeError, LookupError, email.errors.MessageError) as error:
        raise DeliveryError(f"cannot write the mail: {error!r}", permanent=True) from None


def _permanent(code: int) -> bool:
    return 500 <= code < 600


def _reply(what: str, code: int, reply: bytes | str) -> str:
    text = reply.decode(errors="replace") if isinstance(reply, bytes) else str(reply)
    return f"{what}: {code} {text}"[:900]


class FileBackend:
    """Writes each mail as an ``.eml`` file into ``directory`` (the embedded mode's mailbox).

    The file is named from the mail's ``Date`` and ``Message-ID``, and written atomically: delivering the
    same mail again replaces its file instead of adding a second one.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    @contextmanager
    def open(self) -> Iterator[FileBackend]:
        self.directory.mkdir(parents=True, exist_ok=True)
        yield self

    def path_for(self, message: Message | Mail) -> Path:
        headers = (
            (message.date, message.message_id)
            if isinstance(message, Mail)
            else (message["Date"], message["Message-ID"])
        )
        date = parsedate_to_datetime(str(headers[0]))
        digest = hashlib.sha256(str(headers[1]).encode()).hexdigest()[:16]
        return self.directory / f"{date:%Y%m%d-%H%M%S}-{digest}.eml"

    def send(self, message: Message | Mail) -> None:
        # The bytes and the name first: a mail that cannot be written leaves no file behind.
        try:
            target = self.path_for(message)
        except (ValueError, TypeError, LookupError) as error:
            raise DeliveryError(f"cannot name the mail's file: {error!r}", permanent=True) from None
        _, _, raw = _wire(message)
        temporary: str | None = None
        try:
            handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".writing-", suffix=".eml")
            with os.fdopen(handle, "wb") as out:
                out.write(raw)
            os.replace(temporary, target)
            temporary = None
        except OSError as error:
            raise DeliveryError(f"cannot write {target}: {error}") from None
        finally:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)


def backend_from_config(config: Mapping[str, Any]) -> Backend:
    """The backend the configuration names (``MAIL_BACKEND``: ``file`` or ``smtp``; see service/infra/config.py)."""
    if config["MAIL_BACKEND"] == "file":
        return FileBackend(config["MAIL_DIR"])
    return SMTPBackend(
        config["SMTP_HOST"],
        int(config["SMTP_PORT"]),
        username=config.get("SMTP_USERNAME") or None,
        password=config.get("SMTP_PASSWORD") or None,
        security=config.get("SMTP_SECURITY") or "none",
        timeout=float(config.get("SMTP_TIMEOUT") or 30),
    )
