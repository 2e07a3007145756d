"""A rendered message as an RFC 5322 mail (``email.message.Message``), ready for SMTP or a file.

- One thread per game (DESIGN §1, item 3): every mail of a game says ``In-Reply-To`` and
  ``References`` a stable root id of that game, so mail clients file them together.
- ``Message-ID`` is the outbox row's own; with the ``Date`` and the MIME boundaries also derived from the
  row, sending the same row twice gives the same bytes twice (a receiving side that drops repeated
  ``Message-ID`` then keeps one).
- Reminders and notices carry ``List-Unsubscribe`` with ``List-Unsubscribe-Post: List-Unsubscribe=One-Click``
  (RFC 8058): mail providers then show an unsubscribe button that POSTs to the link.
- ``multipart/alternative``: the plain text first (complete on its own), then the HTML, with its pictures
  as ``multipart/related`` parts referenced by ``cid:``.
- A value that would make a malformed header (a line break in a player's name, a recipient that is not one
  plain address) is refused with :class:`ComposeError` before anything is written or sent: that one mail
  cannot go out, and the caller records why (``service.domain.delivery``).
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from email import charset as charsets
from email.generator import BytesGenerator
from email.header import Header
from email.message import Message
from email.mime.multipart import MIMEMultipart
from email.mime.nonmultipart import MIMENonMultipart
from email.mime.text import MIMEText
from email.policy import Compat32
from email.utils import format_datetime, formataddr
from typing import Any

from .render import Rendered

# Quoted-printable keeps every line 7-bit and short, whatever the relay supports (RFC 5321 4.5.3.1.6),
# and the text stays readable in the raw mail.
_UTF8_QP = charsets.Charset("utf-8")
_UTF8_QP.header_encoding = charsets.QP
_UTF8_QP.body_encoding = charsets.QP


class ComposeError(ValueError):
    """The mail cannot be written as it stands (a malformed header value): a permanent failure of that mail."""


#: A recipient we send to: one plain ``local@domain`` address in ASCII (RFC 5321's dot-atom local part and a
#: host name). Anything else (a list, a display name, a quoted local part, an internationalised address that
#: needs SMTPUTF8, a line break that would start a second header or SMTP command) is refused.
_ADDRESS = re.compile(
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
)
#: Characters no header value of ours may hold: line breaks would end the header (or start another one),
#: and the other control characters have no business in a name or a link.
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


@dataclass(frozen=True)
class Envelope:
    """Who a mail goes to and the headers that do not come from its templates."""

    message_id: str
    to: str
    sender: str
    date: datetime
    to_name: str | None = None
    #: The game's thread root (``<game-…@…>``); ``None`` for a mail that belongs to no game.
    thread_id: str | None = None
    #: Reminders and notices only: the one-click unsubscribe link (RFC 8058).
    unsubscribe_url: str | None = None
    #: The mails that ask for orders: the seat's signed reply address for the step (DESIGN §10).
    reply_to: str | None = None


def compose(rendered: Rendered, envelope: Envelope) -> Message:
    """The mail, built with the standard library's ``email.mime`` classes (the ``compat32`` policy: a
    few times quicker to build and flatten than ``EmailMessage``, which matters at a hundred mails a
    second)."""
    _check(envelope, rendered)
    boundaries = _boundaries(envelope.message_id)
    message = MIMEMultipart("alternative", boundary=next(boundaries))
    message["From"] = envelope.sender
    message["To"] = formataddr((envelope.to_name, envelope.to), charset="utf-8") if envelope.to_name else envelope.to
    message["Subject"] = _header(rendered.subject)  # type: ignore[assignment]  # compat32 takes a Header
    message["Date"] = format_datetime(envelope.date)
    message["Message-ID"] = envelope.message_id
    if envelope.thread_id and envelope.thread_id != envelope.message_id:
        message["In-Reply-To"] = envelope.thread_id
        message["References"] = envelope.thread_id
    if envelope.reply_to:
        message["Reply-To"] = envelope.reply_to
    # RFC 3834: an automatic mail; vacation responders should not answer it.
    message["Auto-Submitted"] = "auto-generated"
    if envelope.unsubscribe_url:
        message["List-Unsubscribe"] = f"<{envelope.unsubscribe_url}>"
        message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"

    message.attach(_text_part(rendered.text, "plain"))
    html = _text_part(rendered.html, "html")
    if rendered.images:
        related = MIMEMultipart("related", boundary=next(boundaries))
        related.attach(html)
        for cid, data in sorted(rendered.images.items()):
            picture = _picture_part(data)
            picture["Content-ID"] = f"<{cid}>"
            picture.add_header("Content-Disposition", "inline", filename=_filename(cid))
            related.attach(picture)
        message.attach(related)
    else:
        message.attach(html)
    return message


def check_address(address: str) -> str:
    """``address`` if it is one plain ASCII address we can send to, else :class:`ComposeError`.

    >>> check_address("ann@example.org")
    'ann@example.org'
    >>> check_address("ann@example.org\\r\\nRCPT TO:<eve@x.org>")
    Traceback (most recent call last):
    ...
    emails.compose.ComposeError: the recipient 'ann@example.org\\r\\nRCPT TO:<eve@x.org>' is not one plain mail address
    """
    if not _ADDRESS.fullmatch(address) or len(address) > 254:
        raise ComposeError(f"the recipient {address!r} is not one plain mail address")
    return address


def _check(envelope: Envelope, rendered: Rendered) -> None:
    check_address(envelope.to)
    if envelope.reply_to:
        check_address(envelope.reply_to)
    values = {
        "recipient's name": envelope.to_name,
        "sender": envelope.sender,
        "Message-ID": envelope.message_id,
        "thread id": envelope.thread_id,
        "unsubscribe link": envelope.unsubscribe_url,
        "subject": rendered.subject,
    }
    for what, value in values.items():
        if value and _CONTROL.search(value):
            raise ComposeError(f"the {what} {value!r} contains a line break or a control character")


class _Wire(Compat32):
    """``compat32``, writing a header that fits on its line as it is, without building an
    ``email.header.Header`` to find that out (which was a third of the time of writing a mail). The bytes
    are those the ``Header`` would give: compared on 200,000 random ASCII values."""

    def fold_binary(self, name: str, value: Any) -> bytes:
        if (
            isinstance(value, str)
            and value.isascii()
            and "\n" not in value
            and "\r" not in value
            and len(name) + 2 + len(value) <= (self.max_line_length or 78)
        ):
            return f"{name}: {value}{self.linesep}".encode("ascii")
        return super().fold_binary(name, value)


#: How a mail is written out: CRLF line ends (RFC 5322; smtplib does not convert the line ends of bytes),
#: and no header folded short of the 998-character limit (a folded ``List-Unsubscribe`` would start with
#: an empty line, which some readers mishandle).
WIRE = _Wire(linesep="\r\n", max_line_length=998)


def to_bytes(message: Message) -> bytes:
    """The mail as sent: the same bytes for the same row, every time (what ``message.as_bytes(policy=WIRE)``
    gives, written by :class:`_WireGenerator`)."""
    out = io.BytesIO()
    _WireGenerator(out, mangle_from_=False, policy=WIRE).flatten(message, unixfrom=False)
    return out.getvalue()


#: Any line end, as ``email.generator`` splits lines.
_NLCRE = re.compile(r"\r\n|\r|\n")


class _WireGenerator(BytesGenerator):
    """The standard ``BytesGenerator``, writing a body's lines with their line ends changed in one piece
    instead of two writes a line (the board picture's base64 is about a thousand lines, and writing them one
    by one was a third of the time of sending a turn mail). The bytes are the same: every line end becomes
    the policy's, and the last line keeps having none if it had none."""

    def _write_lines(self, lines: str) -> None:
        if lines:
            self.write(_NLCRE.sub(self._NL, lines))  # type: ignore[attr-defined]

    def _handle_text(self, msg: Message) -> None:
        # A board picture's body, written once per picture (as _write_lines would write it).
        if isinstance(msg, _Picture) and msg.wire_ready(self._NL):  # type: ignore[attr-defined]
            self._fp.write(msg.encoded.wire)  # type: ignore[attr-defined]
        else:
            super()._handle_text(msg)  # type: ignore[misc]

    _writeBody = _handle_text


@dataclass(frozen=True)
class _Encoded:
    #: The picture in base64 lines of 76 characters, as ``email.encoders.encode_base64`` writes it.
    text: str
    #: The same with CRLF line ends, as bytes: the body as :func:`to_bytes` writes it.
    wire: bytes


class _Picture(MIMENonMultipart):
    """An inline picture whose encoded body is shared by every mail that carries it."""

    encoded: _Encoded

    def wire_ready(self, linesep: str) -> bool:
        """Whether the shared CRLF body is this part's body as a generator with ``linesep`` writes it."""
        return self._payload is self.encoded.text and linesep == "\r\n"  # type: ignore[attr-defined]


def _text_part(text: str, subtype: str) -> Message:
    """What ``MIMEText(text, subtype, _UTF8_QP)`` builds, its headers copied from one built once (working
    out the ``Content-Type`` parameters took more time than encoding the text)."""
    if not text:
        return MIMEText(text, subtype, _UTF8_QP)  # type: ignore[arg-type]
    part = copy.copy(_empty_text(subtype))
    part._headers = list(part._headers)  # type: ignore[attr-defined]
    part.defects = []
    part._payload = _UTF8_QP.body_encode(text.encode("utf-8"))  # type: ignore[attr-defined]
    return part


@functools.cache
def _empty_text(subtype: str) -> MIMEText:
    # typeshed says str, but MIMEText takes a Charset (it calls set_payload with it), which is how the
    # quoted-printable encoding is chosen.
    return MIMEText("", subtype, _UTF8_QP)  # type: ignore[arg-type]


def _picture_part(data: bytes) -> MIMENonMultipart:
    """What ``MIMEImage(data, "png")`` builds, with the base64 of the picture shared by every mail that
    carries it (one picture per game state, sent to each of its readers)."""
    part = _Picture("image", "png")
    part.encoded = _encoded(data)
    part.set_payload(part.encoded.text)
    part["Content-Transfer-Encoding"] = "base64"
    return part


@functools.lru_cache(maxsize=64)
def _encoded(data: bytes) -> _Encoded:
    text = base64.encodebytes(data).decode("ascii")
    return _Encoded(text, text.replace("\n", "\r\n").encode("ascii"))


def _header(text: str) -> str | Header:
    return text if text.isascii() else Header(text, _UTF8_QP)


def _filename(cid: str) -> str:
    return cid.split("@", 1)[0] + ".png"


def _boundaries(message_id: str) -> Iterator[str]:
    """Boundaries derived from the Message-ID instead of random ones: the same row, the same bytes."""
    seed = hashlib.sha256(message_id.encode()).hexdigest()[:24]
    return (f"=_smallworld_{seed}_{index}" for index in range(10))


def thread_id(game_id: int, created: datetime, domain: str) -> str:
    """The stable root id of a game's thread: the same for every mail of the game, unique across sites
    (the game's creation time tells two games numbered alike apart).

    >>> from datetime import UTC, datetime
    >>> thread_id(7, datetime(2026, 3, 1, 9, 30, 5, 120000, tzinfo=UTC), "smallworld.invalid")
    '<game-7.20260301093005120000@smallworld.invalid>'
    """
    return f"<game-{game_id}.{created:%Y%m%d%H%M%S%f}@{domain}>"
