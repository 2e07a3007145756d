"""Table talk (ARCHITECTURE §9): a message board per game, shown on its pages and mailed in its thread.

One operation per act, whoever triggers it: :func:`post_message` for a message written on a game's page or
sent as a reply to a table-talk mail (the inbound mail path calls it with ``source=MessageSource.MAIL`` and
the reply's Message-ID as ``source_key``), :func:`hide_message` for the host. Each commits.

What a message may be (:func:`checked_text`): 1 to :data:`~emails.table_talk.LONGEST` characters once its
ends are trimmed, with line breaks and tabs but no other character that names refuse
(:data:`service.domain.text.REFUSED_CATEGORIES`: other control characters, the format characters such as
zero-width spaces and the bidirectional overrides and isolates, private-use and unassigned code points), and
no personal link (:func:`holds_personal_link`). A seat may post :data:`RATE` messages in
any :data:`RATE_WINDOW`; past that, :class:`~service.domain.errors.TooMany` says when it may again.

Who gets a message by mail: every other seat of the game that still holds its seat and accepted its
invitation (or the game started: then every seat gets its mails), as a :class:`~emails.messages.TableTalk`
(one per message and reader); delivery then honours each reader's choices. Nobody else: a game that its
host has not confirmed mails nobody, and an invitee who never answered gets no talk (ARCHITECTURE §9, no relay to
strangers). The game's chat, if it has one, gets the message too: it is public at the table, and holds
nothing else.
"""

from __future__ import annotations

import html
import re
import unicodedata
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from emails.messages import TableTalk
from emails.table_talk import LONGEST, excerpt
from service.domain import chat_notices
from service.domain.errors import BadRequest, Conflict, Forbidden, NotFound, TooMany
from service.domain.models import Game, GameStatus, MessageSource, Player, Seat, TableMessage, utcnow
from service.domain.outbox import queue_mail
from service.domain.text import REFUSED_CATEGORIES

#: How many messages one seat may post within :data:`RATE_WINDOW`.
RATE = 10
RATE_WINDOW = timedelta(minutes=10)

#: Games whose table is open: from the invitations until some time after the end (a last word).
OPEN = (GameStatus.INVITING, GameStatus.ACTIVE, GameStatus.PAUSED, GameStatus.ENDING, GameStatus.FINISHED)

#: The field a refusal names (the page's textarea, the API's field).
FIELD = "text"

#: The paths of this service whose links act in their owner's name (a seat's, an invitation's, a host's, a
#: sign-in's…), followed by a token, perhaps after more path (``/admin/login/<token>``).
PERSONAL_LINK = re.compile(
    r"/(?:play|invite|admin|unsubscribe|choices|never|calendar|sign-in|games/confirm)/"
    r"(?:[A-Za-z0-9_\-]+/)*\.?[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-.]+",
    re.ASCII,
)

#: The shape of a signed token, whatever the path around it (ARCHITECTURE §7: ``itsdangerous`` output, see
#: service/domain/links.py): a base64url JSON object (``eyJ`` is ``{"``; a compressed one starts with a dot),
#: perhaps a timestamp, then the signature (27 characters for HMAC-SHA1; 20 or more taken).
SIGNED_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_\-.])(?:eyJ[A-Za-z0-9_\-]{4,}|\.[A-Za-z0-9_\-]{8,})(?:\.[A-Za-z0-9_\-]{4,12})?"
    r"\.[A-Za-z0-9_\-]{20,}",
    re.ASCII,
)


def decoded(text: str) -> str:
    """``text`` as a browser or mail reader could turn it into a link: percent-escapes and HTML entities
    undone until nothing changes (each pass shortens the text, so this ends), then NFKC (full-width letters).

    >>> decoded("/pl%2561y/")
    '/play/'
    >>> decoded("&#47;sign&#x2d;in&sol;")
    '/sign-in/'
    """
    while True:
        undone = html.unescape(urllib.parse.unquote(text))
        if undone == text:
            return unicodedata.normalize("NFKC", text)
        text = undone


def holds_personal_link(text: str) -> bool:
    """Whether ``text`` holds a link that acts in someone's name: by its path or by its token's shape, once
    decoded (:func:`decoded`).

    >>> holds_personal_link("see /pl%61y/eyJnIjoxLCJzIjowLCJrIjoiYWJjIn0.axcfUA.0Hct4lIPfWc7HoCveh16h7vqEWQ")
    True
    >>> holds_personal_link("token eyJnIjoxLCJzIjowLCJrIjoiYWJjIn0.axcfUA.0Hct4lIPfWc7HoCveh16h7vqEWQ, no path")
    True
    >>> holds_personal_link("I take Ratmen.Commando next turn; see rules.example.org/page.html")
    False
    """
    plain = decoded(text)
    return bool(PERSONAL_LINK.search(plain) or SIGNED_TOKEN.search(plain))


def checked_text(text: object) -> str:
    """``text`` as it will be stored: line ends made ``\\n``, NFC, its ends trimmed; or :class:`BadRequest`.

    >>> checked_text("  Hello\\r\\nthere  ")
    'Hello\\nthere'
    >>> checked_text("x" * 2001)
    Traceback (most recent call last):
    ...
    service.domain.errors.BadRequest: Your message: at most 2,000 characters (this one has 2,001).
    """
    if not isinstance(text, str):
        raise BadRequest("Your message: write it as text.", field=FIELD)
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n")).strip()
    if not text:
        raise BadRequest("Your message: write something first.", field=FIELD)
    if len(text) > LONGEST:
        raise BadRequest(
            f"Your message: at most {LONGEST:,} characters (this one has {len(text):,}).", field=FIELD, longest=LONGEST
        )
    for character in text:
        if character in "\n\t":
            continue
        # As names (service/domain/text.py): format characters (zero-width, bidi controls) hide or turn text.
        if unicodedata.category(character) in REFUSED_CATEGORIES:
            raise BadRequest(
                f"Your message: it contains an invisible character, U+{ord(character):04X}; remove it.", field=FIELD
            )
    if holds_personal_link(text):
        raise BadRequest(
            "Your message: it holds a personal link (one from your mails); whoever has it can act in your name. "
            "Remove it, then send.",
            field=FIELD,
        )
    return text


def post_message(
    session: Session,
    game: Game,
    seat: int,
    text: str,
    source: MessageSource | str = MessageSource.PAGE,
    *,
    now: datetime | None = None,
    source_key: str | None = None,
) -> TableMessage:
    """Post ``text`` at ``game``'s table from ``seat``, mail it to the other players, tell the game's chat;
    commit. Returns the stored message.

    Refusals (nothing is stored): :class:`BadRequest` naming the ``text`` field; :class:`Conflict` when the
    game's table is closed (unconfirmed, cancelled); :class:`Forbidden` for a seat that is removed or has
    not accepted its invitation; :class:`TooMany` past the rate limit (``retry_after`` in its extras).
    With ``source_key`` (a reply's Message-ID), the same key posts once: the second time returns the
    message already posted.
    """
    source = MessageSource(source)
    body = checked_text(text)
    now = now or utcnow()
    game_id = game.id or 0
    if source_key is not None:
        done = session.exec(
            select(TableMessage).where(TableMessage.game_id == game_id, TableMessage.source_key == source_key)
        ).first()
        if done is not None:
            return done
    if game.status not in OPEN:
        raise Conflict("This game's table is closed: nothing can be posted to it.")
    query = select(Seat).where(Seat.game_id == game_id, Seat.seat == seat)
    if session.get_bind().dialect.name == "postgresql":
        # One post at a time per seat, so that two at once cannot both pass the rate limit.
        query = query.with_for_update()
    writer = session.exec(query).first()
    if writer is None or writer.removed:
        raise Forbidden("This seat is not at the table.")
    if not _at_the_table(game, writer):
        raise Forbidden("Accept your invitation first, then you can write at the table.")
    since = now - RATE_WINDOW
    recent = list(
        session.exec(
            select(TableMessage.created_at)
            .where(TableMessage.game_id == game_id, TableMessage.seat == seat, col(TableMessage.created_at) > since)
            .order_by(col(TableMessage.created_at))
        ).all()
    )
    if len(recent) >= RATE:
        wait = int((recent[-RATE] + RATE_WINDOW - now).total_seconds()) + 1
        raise TooMany(
            f"You have written {RATE} messages in {int(RATE_WINDOW.total_seconds() // 60)} minutes: "
            f"wait {max(1, (wait + 59) // 60)} minute(s) before the next one.",
            field=FIELD,
            retry_after=max(1, wait),
        )
    message = TableMessage(
        game_id=game_id,
        seat=seat,
        author_name=writer.display_name,
        text=body,
        source=source,
        source_key=source_key,
        created_at=now,
    )
    session.add(message)
    try:
        session.flush()
    except sa.exc.IntegrityError:
        # The same reply, posted by another worker a moment ago.
        session.rollback()
        if source_key is None:
            raise
        return session.exec(
            select(TableMessage).where(TableMessage.game_id == game_id, TableMessage.source_key == source_key)
        ).one()
    _mail_the_table(session, game, message, now)
    chat_notices.queue_notice(session, game, chat_notices.talk_notice(game, message.author_name, body, message.id or 0))
    session.commit()
    return message


def _mail_the_table(session: Session, game: Game, message: TableMessage, now: datetime) -> None:
    readers = session.exec(
        select(Seat, Player)
        .where(
            Seat.game_id == message.game_id,
            Seat.player_id == Player.id,
            Seat.seat != message.seat,
            col(Seat.removed).is_(False),
        )
        .order_by(col(Seat.seat))
    ).all()
    for seat, player in readers:
        if not _at_the_table(game, seat):
            continue
        queue_mail(
            session,
            player,
            TableTalk(
                game_id=message.game_id,
                game_name=game.name,
                player_name=seat.display_name,
                seat=seat.seat,
                author=message.author_name,
                text=message.text,
                posted_at=message.created_at,
                talk_id=message.id or 0,
            ),
            now=now,
        )


def _at_the_table(game: Game, seat: Seat) -> bool:
    """A seat takes part in the talk once it accepted its invitation, or once the game started (a game
    that starts at once mails every seat its turns without asking them to accept)."""
    return not seat.removed and (seat.accepted_at is not None or game.started_at is not None)


def hide_message(
    session: Session, game: Game, message_id: int, actor: str, *, now: datetime | None = None
) -> TableMessage:
    """Hide a message of ``game`` for everyone (the host's act; ``actor`` as the audit log names them);
    commit. Hiding twice changes nothing. Mails already sent cannot be taken back."""
    message = session.get(TableMessage, message_id)
    if message is None or message.game_id != game.id:
        raise NotFound("There is no such message in this game.")
    if message.hidden_at is None:
        message.hidden_at = now or utcnow()
        message.hidden_by = actor
        session.add(message)
        session.commit()
    return message


@dataclass(frozen=True)
class Shown:
    """A message as the pages show it: a hidden one has no text."""

    id: int
    seat: int
    author: str
    at: datetime
    #: ``None`` when the host hid it.
    text: str | None
    source: MessageSource

    @property
    def hidden(self) -> bool:
        return self.text is None

    def excerpt(self, longest: int = 200) -> str:
        return excerpt(self.text or "", longest)


#: How many messages a page shows (the latest).
SHOWN = 100


def messages_of(session: Session, game_id: int, limit: int = SHOWN) -> list[Shown]:
    """The latest ``limit`` messages of a game, oldest first; a hidden one without its text."""
    if session.autoflush:  # as the ORM's own queries do: what this transaction added is seen
        session.flush()
    # The shown columns in a Core statement built once, not the ORM's objects: every page of a seat reads them.
    rows = session.connection().execute(_LATEST, {"latest_game": game_id, "latest_limit": limit}).all()
    return [_shown(row) for row in reversed(rows)]


_MESSAGES: sa.Table = TableMessage.__table__  # type: ignore[attr-defined]
#: :func:`messages_of`'s statement: what :class:`Shown` reads of the latest messages, latest first.
_LATEST = (
    sa.select(
        _MESSAGES.c.id,
        _MESSAGES.c.seat,
        _MESSAGES.c.author_name,
        _MESSAGES.c.created_at,
        _MESSAGES.c.text,
        _MESSAGES.c.hidden_at,
        _MESSAGES.c.source,
    )
    .where(_MESSAGES.c.game_id == sa.bindparam("latest_game"))
    .order_by(_MESSAGES.c.created_at.desc(), _MESSAGES.c.id.desc())
    .limit(sa.bindparam("latest_limit"))
)


def _shown(row: TableMessage | sa.Row[Any]) -> Shown:
    """A message as shown, from its ORM object or a row of its columns (:data:`_LATEST`'s)."""
    return Shown(
        id=row.id or 0,
        seat=row.seat,
        author=row.author_name,
        at=row.created_at,
        text=None if row.hidden_at is not None else row.text,
        source=row.source,
    )


def messages_since(session: Session, game_ids: Sequence[int], since: datetime) -> dict[int, list[Shown]]:
    """The messages not hidden in each of ``game_ids`` posted after ``since``, oldest first (for digests)."""
    if not game_ids:
        return {}
    rows = session.exec(
        select(TableMessage)
        .where(
            col(TableMessage.game_id).in_(list(game_ids)),
            col(TableMessage.created_at) > since,
            col(TableMessage.hidden_at).is_(None),
        )
        .order_by(col(TableMessage.created_at), col(TableMessage.id))
    ).all()
    found: dict[int, list[Shown]] = {}
    for row in rows:
        found.setdefault(row.game_id, []).append(_shown(row))
    return found
