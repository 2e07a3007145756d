"""A rendered message as an RFC 5322 mail (``email.message.EmailMessage``), ready for SMTP or a file.

- One thread per game (DESIGN §3 of the user's view): every mail of a game says ``In-Reply-To`` and
  ``References`` a stable root id of that game, so mail clients file them together.
- ``Message-ID`` is the outbox row's own; with the ``Date`` and the MIME boundaries also derived from the
  row, sending the same row twice gives the same bytes twice (a receiving side that drops repeated
  ``Message-ID`` then keeps one).
- Reminders and notices carry ``List-Unsubscribe`` with ``List-Unsubscribe-Post: List-Unsubscribe=One-Click``
  (RFC 8058): mail providers then show an unsubscribe button that POSTs to the link.
- ``multipart/alternative``: the plain text first (complete on its own), then the HTML, with its pictures
  as ``multipart/related`` parts referenced by ``cid:``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, formataddr

from .render import Rendered


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


def compose(rendered: Rendered, envelope: Envelope) -> EmailMessage:
    message = EmailMessage(policy=SMTP)
    message["From"] = envelope.sender
    message["To"] = formataddr((envelope.to_name, envelope.to)) if envelope.to_name else envelope.to
    message["Subject"] = rendered.subject
    message["Date"] = format_datetime(envelope.date)
    message["Message-ID"] = envelope.message_id
    if envelope.thread_id and envelope.thread_id != envelope.message_id:
        message["In-Reply-To"] = envelope.thread_id
        message["References"] = envelope.thread_id
    # RFC 3834: an automatic mail; vacation responders should not answer it.
    message["Auto-Submitted"] = "auto-generated"
    if envelope.unsubscribe_url:
        message["List-Unsubscribe"] = f"<{envelope.unsubscribe_url}>"
        message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"

    # Quoted-printable keeps every line 7-bit and short, whatever the relay supports (RFC 5321 4.5.3.1.6).
    message.set_content(rendered.text, subtype="plain", charset="utf-8", cte="quoted-printable")
    message.add_alternative(rendered.html, subtype="html", charset="utf-8", cte="quoted-printable")
    if rendered.images:
        html_part = message.get_payload()[1]  # type: ignore[index]
        assert isinstance(html_part, EmailMessage)
        for cid, data in sorted(rendered.images.items()):
            html_part.add_related(data, maintype="image", subtype="png", cid=f"<{cid}>", filename=_filename(cid))
    _fix_boundaries(message, envelope.message_id)
    return message


def _filename(cid: str) -> str:
    return cid.split("@", 1)[0] + ".png"


def _fix_boundaries(message: EmailMessage, message_id: str) -> None:
    """Boundaries derived from the Message-ID instead of random ones: the same row, the same bytes."""
    seed = hashlib.sha256(message_id.encode()).hexdigest()[:24]
    for index, part in enumerate(message.walk()):
        if part.is_multipart():
            part.set_boundary(f"=_smallworld_{seed}_{index}")


def thread_id(game_id: int, created: datetime, domain: str) -> str:
    """The stable root id of a game's thread: the same for every mail of the game, unique across sites
    (the game's creation time tells two games numbered alike apart).

    >>> from datetime import UTC, datetime
    >>> thread_id(7, datetime(2026, 3, 1, 9, 30, 5, 120000, tzinfo=UTC), "smallworld.invalid")
    '<game-7.20260301093005120000@smallworld.invalid>'
    """
    return f"<game-{game_id}.{created:%Y%m%d%H%M%S%f}@{domain}>"
