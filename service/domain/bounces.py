"""Bounces (ARCHITECTURE §10): each mail's own signed envelope sender, and what a delivery report to it does.

- Every outbox row goes out with its own envelope sender (SMTP ``MAIL FROM``, where a receiving server sends
  its delivery report): ``bounces+<row>-<mac>@<inbound domain>`` (VERP), the MAC an HMAC of the row's id with
  the app's secret (any key of the rotation verifies), 40 bits in lower-case hex: short, and what a report to
  it names is the row we sent, whatever the report says.
- A report is read only when it comes to such an address, its MAC holds, and its row was sent (or may have
  been). Anything else (a report to the ``From`` address, a forged or cut-short bounce address, a row never
  sent) is ignored and logged: it never marks anyone (anyone can write a delivery report).
- A report that says delivery failed for good (a DSN, RFC 3464, whose ``Action`` is ``failed`` or ``Status``
  5.x.x; or one of the common non-standard bounces, whose text gives a 5.x.x status or a 5xx SMTP code) marks
  the row's recipient as bouncing, in the fixed words of its status code (``emails.messages.bounce_reason``):
  the report's own text never reaches a mail nor a page. A delay or a 4.x.x failure marks nobody.
- A bouncing address gets no more mail (``service.domain.delivery`` skips it, with the reason) until its owner
  signs in again (``service.domain.sign_in``) or a site admin clears it (``smallworld admin clear-bounce``). Its
  seats play on meanwhile as any silent seat does: each step is auto-passed at its deadline, and after the
  game's missed-turn limit the house bot takes the seat (``service.domain.bot_seats``). The host of each of its
  running games is told once, when the address is marked.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from dataclasses import dataclass
from email.message import Message

import sqlalchemy as sa
from sqlmodel import Session, col, select

from emails.messages import bounce_reason
from service.domain.models import MailStatus, OutboxMail, Player
from service.infra.logfmt import log

logger = logging.getLogger(__name__)

#: The local part before the ``+`` of every bounce address.
LOCAL_PART = "bounces"
_TOKEN = re.compile(r"([0-9]{1,12})-([0-9a-f]{10})")
#: A status code (RFC 3463) or an SMTP reply code of a permanent failure, in a report's text.
_HARD_STATUS = re.compile(r"(?<![0-9.])5\.[0-9]{1,3}\.[0-9]{1,3}(?![0-9.])")
_HARD_REPLY = re.compile(r"(?<![0-9])5[0-5][0-9](?:[ -])")
#: Rows whose mail left, or may have: a report may be about them.
_SENT = (MailStatus.SENT, MailStatus.MAYBE_SENT)


@dataclass(frozen=True)
class BounceAddresses:
    """The signed envelope senders of the outbox's rows, on ``domain`` (``SMALLWORLD_INBOUND_DOMAIN``)."""

    keys: tuple[str | bytes, ...]
    domain: str

    def for_row(self, row_id: int) -> str:
        """The envelope sender of outbox row ``row_id``.

        >>> BounceAddresses(("k",), "play.example").for_row(42)
        'bounces+42-adcc7ee98b@play.example'
        """
        return f"{LOCAL_PART}+{row_id}-{self._mac(self.keys[-1], row_id)}@{self.domain}"

    def read(self, address: str) -> int | None:
        """The row ``address`` is the bounce address of, if it is one of ours and its MAC holds, else ``None``.

        >>> addresses = BounceAddresses(("k",), "play.example")
        >>> addresses.read("Bounces+42-ADCC7EE98B@Play.Example"), addresses.read("bounces+43-adcc7ee98b@play.example")
        (42, None)
        """
        local, _, domain = address.strip().strip("<>").rpartition("@")
        prefix, plus, tag = local.partition("+")
        if not plus or prefix.lower() != LOCAL_PART or domain.lower() != self.domain.lower():
            return None
        found = _TOKEN.fullmatch(tag.lower())
        if found is None:
            return None
        row_id, mac = int(found[1]), found[2]
        if not any(hmac.compare_digest(self._mac(key, row_id), mac) for key in self.keys):
            return None
        return row_id

    @staticmethod
    def _mac(key: str | bytes, row_id: int) -> str:
        raw = key.encode() if isinstance(key, str) else key
        return hmac.new(raw, f"smallworld.bounce:{row_id}".encode(), hashlib.sha256).hexdigest()[:10]


def rows_bounced_to(addresses: BounceAddresses, recipients: list[str]) -> list[int]:
    """The rows whose valid bounce addresses are among ``recipients``, once each, in order."""
    found: list[int] = []
    for address in recipients:
        row = addresses.read(address)
        if row is not None and row not in found:
            found.append(row)
    return found


def is_bounce_address(address: str, domain: str) -> bool:
    """Whether ``address`` has the shape of a bounce address on ``domain`` (its MAC unchecked)."""
    local, _, at = address.strip().strip("<>").rpartition("@")
    return at.lower() == domain.lower() and local.lower().startswith(LOCAL_PART + "+")


def hard_failure(report: Message, failed: list[tuple[str, str]] | None) -> str | None:
    """The fixed words of a report that says delivery failed for good, or ``None`` (a delay, a 4.x.x failure,
    no failure, or nothing read). ``failed`` is what a DSN's status blocks say (``inbound.bounced_addresses``:
    ``None`` for a report that is no DSN); a non-standard bounce is read for a 5.x.x status, or a 5xx SMTP reply,
    in its text parts (their first 20,000 characters)."""
    if failed is not None:
        hard = [reason for _, reason in failed if reason.startswith("5.") or reason == "undelivered"]
        return hard[0] if hard else None
    text = _text_of(report)
    status = _HARD_STATUS.search(text)
    if status is not None:
        return bounce_reason(status[0])
    reply = _HARD_REPLY.search(text)
    if reply is not None:
        return bounce_reason("5.0.0")
    return None


def _text_of(report: Message) -> str:
    parts: list[str] = []
    for part in report.walk():
        if part.get_content_maintype() != "text":
            continue
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            parts.append(payload[:20_000].decode("utf-8", "replace"))
    return "\n".join(parts)[:20_000]


def sent_row(session: Session, row_id: int) -> OutboxMail | None:
    """Outbox row ``row_id`` if its mail left (or may have)."""
    row = session.get(OutboxMail, row_id)
    return row if row is not None and row.status in _SENT else None


def player_of(session: Session, address: str) -> Player | None:
    return session.exec(select(Player).where(sa.func.lower(Player.email) == address.lower())).first()


def clear(session: Session, email: str) -> bool:
    """Clear ``email``'s bouncing mark (its owner signed in, or a site admin cleared it): it gets mail again.
    Whether it was marked. Not committed."""
    player = player_of(session, email)
    if player is None or player.bouncing_since is None:
        return False
    player.bouncing_since, player.bounce_reason = None, None
    session.add(player)
    log(logger, logging.INFO, "bounce.cleared", player=player.id)
    return True


def bouncing_addresses(session: Session) -> list[str]:
    """Every address marked as bouncing, in order."""
    rows = session.exec(select(Player.email).where(col(Player.bouncing_since).is_not(None)).order_by(Player.email))
    return list(rows.all())
