"""A rendered message as an RFC 5322 mail (``email.message.Message``), ready for SMTP or a file.

- One thread per game (ARCHITECTURE §1, item 3): every mail of a game says ``In-Reply-To`` and
  ``References`` a stable root id of that game, so mail clients file them together.
- ``Message-ID`` is the outbox row's own; with the ``Date`` and the MIME boundaries also derived from the
  row, sending the same row twice gives the same bytes twice (a receiving side that drops repeated
  ``Message-ID`` then keeps one).
- One conversation per game (ARCHITECTURE §6): the game's mails share one subject (``emails.render``), and a
  ``List-Id`` of the game (RFC 2919: ``"Small World: <name>" <game-N.<domain>>``) that a reader can filter on.
- ``Auto-Submitted: auto-generated`` (RFC 3834) and ``X-Auto-Response-Suppress: All`` (Exchange and Outlook's
  own): vacation responders and out-of-office notices keep to themselves.
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
from email import quoprimime
from email.generator import BytesGenerator
from email.header import Header
from email.message import Message
from email.mime.multipart import MIMEMultipart
from email.mime.nonmultipart import MIMENonMultipart
from email.mime.text import MIMEText
from email.policy import Compat32
from email.utils import format_datetime, formataddr, parseaddr
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
    #: The mails that ask for orders: the seat's signed reply address for the step (ARCHITECTURE §10).
    reply_to: str | None = None
    #: An answer to a person's mail: that mail's ``Message-ID`` (its ``In-Reply-To``) and the answer's
    #: ``References`` (the mail's, then its ``Message-ID``), in place of the game's thread root.
    in_reply_to: str | None = None
    references: tuple[str, ...] = ()
    #: A game's mail: its list, as a readable name and an id (:func:`list_id`), for ``List-Id``.
    list_id: tuple[str, str] | None = None
    #: The envelope's sender (SMTP ``MAIL FROM``, where delivery reports go) when it is not the ``From`` address:
    #: the row's own signed bounce address (ARCHITECTURE §10).
    return_path: str | None = None


def compose(rendered: Rendered, envelope: Envelope) -> Message:
    """The mail, built with the standard library's ``email.mime`` classes (the ``compat32`` policy: a
    few times quicker to build and flatten than ``EmailMessage``, which matters at a hundred mails a
    second). Delivery writes the same bytes without building it (:func:`write`)."""
    _check(envelope, rendered)
    boundaries = _boundaries(envelope.message_id)
    message = MIMEMultipart("alternative", boundary=next(boundaries))
    for name, value in _headers(rendered, envelope):
        message[name] = value  # type: ignore[assignment]  # compat32 takes a Header
    message.attach(_text_part(rendered.text, "plain"))
    html = _text_part(rendered.html, "html")
    if rendered.images:
        related = MIMEMultipart("related", boundary=next(boundaries))
        related.attach(html)
        for cid, data in sorted(rendered.images.items()):
            related.attach(_picture_with_id(cid, data))
        message.attach(related)
    else:
        message.attach(html)
    return message


def _headers(rendered: Rendered, envelope: Envelope) -> list[tuple[str, str | Header]]:
    """The mail's own headers, in order, after the ``Content-Type`` and ``MIME-Version`` of its root part."""
    to = formataddr((envelope.to_name, envelope.to), charset="utf-8") if envelope.to_name else envelope.to
    headers: list[tuple[str, str | Header]] = [
        ("From", envelope.sender),
        ("To", to),
        ("Subject", _header(rendered.subject)),
        ("Date", format_datetime(envelope.date)),
        ("Message-ID", envelope.message_id),
    ]
    if envelope.in_reply_to:
        headers += [("In-Reply-To", envelope.in_reply_to), ("References", " ".join(envelope.references))]
    elif envelope.thread_id and envelope.thread_id != envelope.message_id:
        headers += [("In-Reply-To", envelope.thread_id), ("References", envelope.thread_id)]
    if envelope.reply_to:
        headers.append(("Reply-To", envelope.reply_to))
    if envelope.list_id:
        headers.append(("List-Id", _list_id_header(*envelope.list_id)))
    # RFC 3834: an automatic mail; vacation responders should not answer it. Outlook and Exchange heed their
    # own header instead.
    headers += [("Auto-Submitted", "auto-generated"), ("X-Auto-Response-Suppress", "All")]
    if envelope.unsubscribe_url:
        headers += [
            ("List-Unsubscribe", f"<{envelope.unsubscribe_url}>"),
            ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
        ]
    return headers


def _list_id_header(name: str, identity: str) -> str | Header:
    """``List-Id``'s value (RFC 2919): the readable name as a phrase (quoted, or RFC 2047 encoded when it is
    not ASCII), then the id in angle brackets."""
    if name.isascii():
        return f"{quote_phrase(name)} <{identity}>"
    header = Header(name, _UTF8_QP)
    header.append(f" <{identity}>", "us-ascii")
    return header


def quote_phrase(text: str) -> str:
    """``text`` as an RFC 5322 quoted string.

    >>> print(quote_phrase('Ann "the bold"'))
    "Ann \\"the bold\\""
    """
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def list_id(game_id: int, game_name: str, domain: str) -> tuple[str, str]:
    """A game's list (RFC 2919), as :attr:`Envelope.list_id` holds it: its readable name and its id.

    >>> list_id(7, "Friday", "play.smallworld.example")
    ('Small World: Friday', 'game-7.play.smallworld.example')
    """
    return f"Small World: {game_name}", f"game-{game_id}.{domain}"


def _picture_with_id(cid: str, data: bytes) -> MIMENonMultipart:
    picture = _picture_part(data)
    picture["Content-ID"] = f"<{cid}>"
    picture.add_header("Content-Disposition", "inline", filename=_filename(cid))
    return picture


@dataclass(frozen=True)
class Mail:
    """A mail as it goes out (:func:`write`): its envelope and its bytes."""

    #: The envelope's sender and recipient addresses (SMTP's ``MAIL FROM`` and ``RCPT TO``).
    sender: str
    recipient: str
    #: Its ``Date`` and ``Message-ID`` headers.
    date: str
    message_id: str
    #: The mail as sent: what ``to_bytes(compose(rendered, envelope))`` gives.
    data: bytes
    #: Where ``data`` holds no ``.`` at all, as (start, end) byte offsets in order: its pictures' base64
    #: (``A-Z a-z 0-9 + / =`` and line ends). SMTP doubles a dot that starts a line, and looking for those
    #: in the pictures took more time than the rest of the mail's ``DATA`` (``emails.delivery.quote_periods``).
    dotless: tuple[tuple[int, int], ...] = ()


def write(rendered: Rendered, envelope: Envelope) -> Mail:
    """The mail :func:`compose` builds, written straight to its bytes: the same bytes, byte for byte
    (``tests/emails/test_compose.py`` compares them on every sample and on generated values).

    Building the ``email.mime`` parts and flattening them took a quarter of the time of sending a turn mail;
    most of a mail is the same in every mail of its kind (each part's headers) or of its game state (the
    picture, most lines of the text): those pieces are written once and kept (:func:`_part_head`,
    :func:`_qp_line`, the picture's shared body), and only the mail's own headers and lines are written here.
    """
    if not rendered.text or not rendered.html:
        # A part without a body is built otherwise by the standard library: written from it (never seen).
        return _mail(envelope, to_bytes(compose(rendered, envelope)))
    _check(envelope, rendered)
    boundaries = _boundaries(envelope.message_id)
    outer = next(boundaries)
    head = [_multipart_head("alternative", outer)]
    head += [WIRE.fold_binary(name, value) for name, value in _headers(rendered, envelope)]
    out = [*head, b"\r\n--", outer.encode(), b"\r\n", _part_head("plain"), _quoted_printable(rendered.text)]
    out += [b"\r\n--", outer.encode(), b"\r\n"]
    html = [_part_head("html"), _quoted_printable(rendered.html)]
    dotless: list[tuple[int, int]] = []
    if rendered.images:
        related = next(boundaries)
        inner = related.encode()
        out += [_multipart_head("related", related), b"\r\n--", inner, b"\r\n", *html]
        for cid, data in sorted(rendered.images.items()):
            out += [b"\r\n--", inner, b"\r\n", _part_head("picture", cid)]
            start = sum(map(len, out))
            wire = _encoded(data).wire
            out.append(wire)
            dotless.append((start, start + len(wire)))
        out += [b"\r\n--", inner, b"--\r\n"]
    else:
        out += html
    out += [b"\r\n--", outer.encode(), b"--\r\n"]
    return _mail(envelope, b"".join(out), tuple(dotless))


#: The most a mail may weigh as sent (ARCHITECTURE §6: a player gets dozens of mails per game, many on a phone).
MOST_BYTES = 30 * 1024


def _mail(envelope: Envelope, data: bytes, dotless: tuple[tuple[int, int], ...] = ()) -> Mail:
    return Mail(
        sender=envelope.return_path or _address_of(envelope.sender),
        recipient=envelope.to,
        date=format_datetime(envelope.date),
        message_id=envelope.message_id,
        data=data,
        dotless=dotless,
    )


@functools.lru_cache(maxsize=16)
def _address_of(sender: str) -> str:
    """The address in a ``From`` value (``Name <address>``), as the envelope's sender."""
    return parseaddr(sender)[1]


def _multipart_head(subtype: str, boundary: str) -> bytes:
    """The two headers ``MIMEMultipart(subtype, boundary=boundary)`` starts with (``Content-Type`` with its
    boundary, ``MIME-Version``), as :func:`to_bytes` writes them."""
    content_type = WIRE.fold_binary("Content-Type", f'multipart/{subtype}; boundary="{boundary}"')
    return content_type + b"MIME-Version: 1.0\r\n"


@functools.lru_cache(maxsize=16)
def _part_head(kind: str, detail: str = "") -> bytes:
    """The headers of a part of one kind, and the blank line after them, as :func:`to_bytes` writes them
    (taken from a part the standard library builds): a text part (``plain``, ``html``), or a ``picture``
    with its Content-ID ``detail``."""
    part = _picture_with_id(detail, b"-") if kind == "picture" else _text_part("-", kind)
    written = to_bytes(part)
    return written[: written.index(b"\r\n\r\n") + 4]


def _quoted_printable(text: str) -> bytes:
    """``text`` in UTF-8, quoted-printable, with CRLF line ends: the body :func:`_text_part` gives, as
    :func:`to_bytes` writes it. The standard library encodes each line apart from the others
    (``email.quoprimime.body_encode``), so each line is encoded once and kept (:func:`_qp_line`)."""
    latin = text.encode("utf-8").decode("latin-1")
    lines = _LINE_END.split(latin) if "\r" in latin else latin.split("\n")
    if lines[-1] == "":  # a text that ends with a line end (they all do): it is written after the last line
        lines.pop()
        return b"\r\n".join(map(_qp_line, lines)) + b"\r\n"
    return b"\r\n".join(map(_qp_line, lines))


#: What ``email.quoprimime.body_encode`` splits lines at (after it has quoted every other control character).
_LINE_END = re.compile(r"\r\n|\r|\n")


@functools.lru_cache(maxsize=8192)
def _qp_line(line: str) -> bytes:
    """One line (UTF-8 bytes read as Latin-1) in quoted-printable, with CRLF soft line breaks."""
    return quoprimime.body_encode(line, eol="\r\n").encode("ascii")


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
    if envelope.return_path:
        check_address(envelope.return_path)
    values = {
        "recipient's name": envelope.to_name,
        "sender": envelope.sender,
        "Message-ID": envelope.message_id,
        "thread id": envelope.thread_id,
        "mail answered": envelope.in_reply_to,
        "references": " ".join(envelope.references),
        "unsubscribe link": envelope.unsubscribe_url,
        "subject": rendered.subject,
        "list's name": envelope.list_id[0] if envelope.list_id else None,
        "list's id": envelope.list_id[1] if envelope.list_id else None,
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


def to_bytes(message: Message | Mail) -> bytes:
    """The mail as sent: the same bytes for the same row, every time (what ``message.as_bytes(policy=WIRE)``
    gives, written by :class:`_WireGenerator`; a :class:`Mail` is written already)."""
    if isinstance(message, Mail):
        return message.data
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
