"""Database tables (SQLModel). Alembic migrations in ``service/infra/migrations`` create them.

Request and response shapes live in ``service/domain/schemas.py``, never here. Times are aware UTC datetimes
(``service.infra.db.UTCDateTime``; ARCHITECTURE §5).
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from service.infra.db import EnumString, UTCDateTime


def utcnow() -> datetime:
    return datetime.now(UTC)


def _time(*, index: bool = False, nullable: bool = True) -> Any:
    return Field(default=None, sa_column=sa.Column(UTCDateTime(), index=index, nullable=nullable))


def _json(nullable: bool = False) -> Any:
    return Field(default=None, sa_column=sa.Column(sa.JSON(), nullable=nullable))


class GameStatus(StrEnum):
    """Where a game is in its life: unconfirmed → inviting → active ⇄ paused → ending → finished, or cancelled."""

    #: Made by someone who may not be its host: it mails nobody but its host (a link to confirm it) until
    #: the host confirms it (ARCHITECTURE §9); it lapses if they never do.
    UNCONFIRMED = "unconfirmed"
    #: Waiting for its players to accept their invitations.
    INVITING = "inviting"
    ACTIVE = "active"
    #: Stopped by an admin; the clock keeps the time left (``service.domain.clock``).
    PAUSED = "paused"
    #: Over by the rules (the last step was played) and waiting for the worker's tally (ARCHITECTURE §9): the
    #: results, ratings, records and the final table's mail are written in one transaction, which marks it
    #: finished (``service.domain.tally``). Coins stay hidden until then.
    ENDING = "ending"
    FINISHED = "finished"
    CANCELLED = "cancelled"


#: Every status of a game its host confirmed: the games others may see (in My games, by a watch link), an
#: unconfirmed one being its host's business alone (ARCHITECTURE §9).
CONFIRMED = tuple(status for status in GameStatus if status != GameStatus.UNCONFIRMED)


class MailStatus(StrEnum):
    """Where an outbox row is in its delivery (``service.domain.delivery``)."""

    #: To send: due at its ``next_attempt_at`` (a first attempt, a retry, or a claim that lapsed).
    PENDING = "pending"
    SENT = "sent"
    #: Refused for good, or given up after too many attempts; ``last_error`` says why.
    FAILED = "failed"
    #: Not sent on purpose: the player turned that kind of mail off, or its step is over.
    SKIPPED = "skipped"
    #: Not sent again on purpose (as ``skipped``), but an earlier attempt whose drain died before recording its
    #: outcome may have handed it to the SMTP server (``OutboxMail.may_have_left``): it may have been sent.
    MAYBE_SENT = "maybe_sent"


class NoticeStatus(StrEnum):
    """Where a chat notice is in its delivery (``service.domain.chat_notices``)."""

    #: To send: due at its ``next_attempt_at`` (a first attempt, a retry, or a claim that lapsed).
    PENDING = "pending"
    SENT = "sent"
    #: Refused for good, or given up after too many attempts; ``last_error`` says why.
    FAILED = "failed"
    #: Not sent on purpose: the game's chat was removed, or the turn it announced is over.
    SKIPPED = "skipped"


class SeatController(StrEnum):
    """Who plays a seat (ARCHITECTURE §10): its player, by their link, or the house bot, in the worker."""

    PERSON = "person"
    BOT = "bot"


class NotifyMode(StrEnum):
    """What mail a player wants about a game (ARCHITECTURE §9), beyond what always comes: invitations, the mails of
    their own turns, and the final results are sent whatever they choose."""

    #: Every event: table talk, notices (turns passed, the host's changes) as they happen.
    EVERY = "every"
    #: Only the mails of their own turns and the results; the rest stays on the game's pages.
    TURNS = "turns"
    #: Their turns and the results, and once a day, at an hour of their choosing, one mail listing every
    #: game that waits for them and what was said at the tables.
    DIGEST = "digest"


class MessageSource(StrEnum):
    """Where a table-talk message was written (``TableMessage.source``)."""

    PAGE = "page"
    #: A reply to a table-talk mail, posted through the inbound mail path.
    MAIL = "mail"


class ActionKind(StrEnum):
    """What an entry of a game's event log (``GameAction``) records."""

    #: A player's step, validated by the rules.
    ACTION = "action"
    #: The deadline's (or an admin's "pass now") completion of a step: ``rules.auto_pass``.
    AUTO_PASS = "auto_pass"
    #: A player took back their steps since the last undo point (those entries are marked ``undone``).
    UNDO = "undo"
    #: An admin changed a house option that is part of the rules state (replayed at this point).
    OPTIONS = "options"
    #: Any other admin act: it moves the version on, changes nothing in the rules state.
    ADMIN = "admin"


class Player(SQLModel, table=True):
    __tablename__ = "players"

    id: int | None = Field(default=None, primary_key=True)
    email: str = Field(max_length=320, unique=True, index=True)
    #: The name this address chose for itself when it last accepted an invitation (its default on the next
    #: one); empty until then. A seat's name is the seat's own (``Seat.display_name``).
    display_name: str = Field(max_length=80)
    #: The player's own choice, made on their pages; nobody else sets it (ARCHITECTURE §9).
    time_zone: str = Field(default="UTC", max_length=64)
    #: Non-essential mail (reminders, notices) can be turned off with the one-click unsubscribe.
    wants_reminders: bool = True
    wants_notices: bool = True
    #: Table-talk mails; off with their own unsubscribe link (ARCHITECTURE §9: one kind at a time).
    wants_messages: bool = True
    #: The address's default choice for its games (a game's own choice, ``GameNotification``, comes first).
    notify: NotifyMode = Field(default=NotifyMode.EVERY, sa_type=EnumString(NotifyMode, 8))
    #: The local hour (0-23, in ``time_zone``) of the daily digest.
    digest_hour: int = 18
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))
    #: Since when mail to the address bounces (a delivery status notification said it failed), and why;
    #: cleared when the address answers a mail (``service.domain.inbound``).
    bouncing_since: datetime | None = _time()
    bounce_reason: str | None = Field(default=None, max_length=300)
    #: Moved on by "sign out everywhere" (``service.domain.sign_in``): every link of the address carries the
    #: serial it was made with (``service.domain.links.with_serial``), so the older ones stop working.
    links_serial: int = 0
    #: Moved on by "make a new calendar link" (``service.domain.calendar.new_calendar_link``): ends the address's
    #: calendar feed link, and no other (its link carries ``links_serial`` too).
    calendar_serial: int = 0


#: Only the games still inviting, by id: the deadline sweep's check for a game whose every seat accepted but
#: which did not start (``lobby.stuck_inviting``) reads these and the seats not yet accepted, not every game.
_INVITING = sa.text("status = 'inviting'")
#: Only the seats not yet accepted, by game (the same check).
_UNACCEPTED = sa.text("accepted_at IS NULL")
#: Only the games whose awaited step is not announced yet (``Game.announced_key`` null): the deadline sweep's
#: look for an announcement lost between a step's commit and its job (``service.domain.announce``) reads these,
#: a few games at most, not every game. A null, not a comparison of two columns: PostgreSQL knows how few rows
#: are null from its statistics, where it would take two columns' inequality for nearly every row and scan.
_UNANNOUNCED = sa.text("announced_key IS NULL AND step_key IS NOT NULL")


class Game(SQLModel, table=True):
    __tablename__ = "games"
    __table_args__ = (
        sa.Index("ix_games_inviting", "id", postgresql_where=_INVITING, sqlite_where=_INVITING),
        sa.Index("ix_games_unannounced", "id", postgresql_where=_UNANNOUNCED, sqlite_where=_UNANNOUNCED),
    )

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=120)
    status: GameStatus = Field(default=GameStatus.INVITING, sa_type=EnumString(GameStatus, 16), index=True)
    settings: dict[str, Any] = _json()
    #: The rules state snapshot (``rules.GameState.to_json()``); a cache of seed + actions.
    state: dict[str, Any] | None = _json(nullable=True)
    version: int = Field(default=0)
    #: Secret until the game ends (ARCHITECTURE §3); then shown to everyone.
    seed: str = Field(max_length=64)
    admin_secret: str = Field(max_length=64)
    host_email: str = Field(max_length=320, index=True)
    #: The step awaited now, e.g. ``"3:1:-"`` (turn, seat on turn, defender); keys reminders and mails.
    step_key: str | None = Field(default=None, max_length=32)
    #: The step whose announcement (its turn mails, chat notice, bot wake-up) was made, by the job after the
    #: step's commit (``service.domain.announce``, ARCHITECTURE §2): set to None by the step that makes the
    #: game await a new step (``play.after_change``), and to ``step_key`` once that step is announced.
    announced_key: str | None = Field(default=None, max_length=32)
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))
    #: When the host confirmed the game (the invitations went out then).
    confirmed_at: datetime | None = _time()
    started_at: datetime | None = _time()
    finished_at: datetime | None = _time()
    step_started_at: datetime | None = _time()
    deadline_at: datetime | None = _time(index=True)
    reminders_due_at: datetime | None = _time(index=True)
    #: Seconds left on the clock while paused (ARCHITECTURE §5: resume sets deadline = now + remaining).
    paused_remaining: int | None = Field(default=None)
    pause_reason: str | None = Field(default=None, max_length=300)
    #: ``rules.final_standings`` once the game is over.
    result: list[dict[str, Any]] | None = _json(nullable=True)
    #: Where the game's chat notices go: an apprise URL (``service.infra.chat``). A secret (it holds the
    #: webhook's token): shown back only masked, never to players.
    chat_url: str | None = Field(default=None, max_length=2000)
    #: The host made the game public: anyone may watch it at ``/games/<id>/watch`` and find it in the list of
    #: public games (ARCHITECTURE §9). Watchers see what the rules make public, nothing more.
    public: bool = Field(default=False, index=True)
    #: Part of every watch link of the game (``service.domain.watching``); the host moves it on to end
    #: every watch link shared so far.
    watch_serial: int = 0


class Seat(SQLModel, table=True):
    __tablename__ = "seats"
    __table_args__ = (
        sa.UniqueConstraint("game_id", "seat", name="uq_seats_game_seat"),
        sa.Index("ix_seats_unaccepted", "game_id", postgresql_where=_UNACCEPTED, sqlite_where=_UNACCEPTED),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    player_id: int = Field(foreign_key="players.id", index=True)
    seat: int
    #: The seat's name in this game: the host proposes it, the player may change it when accepting.
    display_name: str = Field(max_length=80)
    #: Part of every link of this seat; replacing the player rotates it, so old links die.
    secret: str = Field(max_length=64)
    #: When the seat's player accepted (at creation for the house bot's seats). Indexed: the deadline sweep
    #: looks for games left inviting among the seats accepted since its previous sweep (``lobby.left_inviting``).
    accepted_at: datetime | None = _time(index=True)
    removed: bool = False
    #: Vacation taken in this game so far (seconds), against the game's ``vacation_days``.
    vacation_used_seconds: int = 0
    #: Who plays the seat now: its player, or the house bot (``service.domain.house_bot``), which its player
    #: may take back from their link.
    controller: SeatController = Field(default=SeatController.PERSON, sa_type=EnumString(SeatController, 8))
    #: When the player resigned the seat (``service.domain.resign``): its steps are completed without them
    #: from then on, as the host chose (``GameSettings.resigned_seats``).
    resigned_at: datetime | None = _time()


class InboundKind(StrEnum):
    """What a mail that came in was (``service.domain.inbound``)."""

    #: A reply with orders, or with none, to a turn mail or an answer (its reply address named a step).
    ORDERS = "orders"
    #: A reply to a step that was over when it came: nothing done, the player told.
    LATE = "late"
    #: A reply to a table-talk message: posted on the game's board.
    TALK = "talk"
    #: An automatic answer (RFC 3834 ``Auto-Submitted``, ``Precedence: bulk``, a vacation notice, a read
    #: receipt): never read as orders, never answered.
    AUTO_REPLY = "auto_reply"
    #: A delivery status notification (RFC 3464) or another bounce: the failed address is marked.
    BOUNCE = "bounce"
    #: No valid reply address: not read; its sender is told, within the answers per hour to an address.
    UNMATCHED = "unmatched"
    #: A reply to an invitation (its ``In-Reply-To`` names the invitation sent): the seat taken, or why not.
    INVITATION = "invitation"
    #: Mail to ``postmaster@`` or ``abuse@``: forwarded to the operator's address.
    FORWARDED = "forwarded"
    #: Not a mail that could be read at all.
    MALFORMED = "malformed"
    #: Over one of the inbound path's limits (``service.domain.inbound.Refusal`` says which): not read.
    REFUSED = "refused"


class InboundMail(SQLModel, table=True):
    """A mail that came in (by SMTP/LMTP or ``POST /inbound/mail``): what it was and what was done with it.

    ``message_key`` (its ``Message-ID`` and the address it came to, hashed) is unique, so the same mail
    delivered twice (an MTA's retry, or both ways in) is read once.
    """

    __tablename__ = "inbound_mail"
    #: Rows are deleted (retention, an erased address) and mails name a row by its id (an answer's dedupe key):
    #: SQLite must never hand a deleted row's id to a new one (PostgreSQL's sequences never do).
    __table_args__ = {"sqlite_autoincrement": True}

    id: int | None = Field(default=None, primary_key=True)
    message_key: str = Field(max_length=64, unique=True)
    #: Indexed: rows older than ``SMALLWORLD_MAIL_RETENTION_DAYS`` are deleted (``service.domain.retention``).
    received_at: datetime = Field(
        default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False, index=True)
    )
    #: ``smtp``, ``lmtp`` or ``http``.
    via: str = Field(max_length=8)
    kind: InboundKind = Field(sa_type=EnumString(InboundKind, 12))
    #: The From header's address, as written (never trusted: the reply address says who it is).
    sender: str = Field(default="", max_length=320)
    game_id: int | None = Field(default=None, foreign_key="games.id", index=True)
    seat: int | None = None
    #: The seat's player, whom the answer goes to.
    player_id: int | None = Field(default=None, foreign_key="players.id", index=True)
    #: What was done, in a line (for the logs and the admins).
    outcome: str = Field(default="", max_length=1000)
    #: Whether an answer mail was written (answers are limited per address and hour).
    answered: bool = False


class GameAction(SQLModel, table=True):
    """The event log (ARCHITECTURE §2): every applied step in order, by the version it produced."""

    __tablename__ = "actions"
    __table_args__ = (
        sa.UniqueConstraint("game_id", "version", name="uq_actions_game_version"),
        sa.UniqueConstraint("game_id", "idempotency_key", name="uq_actions_game_idempotency"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    seat: int | None = None
    kind: ActionKind = Field(sa_type=EnumString(ActionKind, 16))
    action: dict[str, Any] | None = _json(nullable=True)
    version: int
    die: int | None = None
    undo_point: bool = False
    #: Set on the steps an undo took back; they stay in the log but are not replayed.
    undone: bool = False
    #: Played by the house bot for the seat (``service.domain.house_bot``), told as such in the history.
    by_bot: bool = False
    idempotency_key: str | None = Field(default=None, max_length=80)
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))


class TurnStart(SQLModel, table=True):
    """The game's state at the start of a seat's turn, as the step that ended the turn before made it.

    A cache (ARCHITECTURE §2: the log is the truth): "Since your last turn" replays the log from the reader's
    previous turn's start instead of from the seed (``service.domain.play.told_turns``), so its cost is about
    one round of turns whatever the game's length; without a row (games started before it existed) the log is
    replayed from the seed as before. Written only by a step that begins a turn; each seat keeps its latest
    two (the turn under way and the one before), and the game's rows go when it ends or is cancelled.
    """

    __tablename__ = "turn_starts"

    game_id: int = Field(foreign_key="games.id", primary_key=True)
    #: The game's version then: that of the log entry that ended the turn before.
    version: int = Field(primary_key=True)
    #: The seat on turn (``rules.GameState.current``).
    seat: int
    state: dict[str, Any] = _json()


#: Only the rows still to send, by game and recipient in the order written: a mail of a game to a reader waits
#: for those written before it (``service.domain.delivery``).
_MAIL_PENDING = sa.text("status = 'pending'")
#: Only the rows whose body is still kept, by age: the retention sweep finds those to purge among them alone
#: (``service.domain.retention``), not among every mail ever sent.
_MAIL_BODY_KEPT = sa.text("body_purged_at IS NULL")


class OutboxMail(SQLModel, table=True):
    """A mail to send, written in the same transaction as the change that causes it (ARCHITECTURE §6)."""

    __tablename__ = "outbox"
    __table_args__ = (
        sa.Index(
            "ix_outbox_pending_by_reader",
            "game_id",
            "to_email",
            "id",
            postgresql_where=_MAIL_PENDING,
            sqlite_where=_MAIL_PENDING,
        ),
        sa.Index("ix_outbox_body_kept", "created_at", postgresql_where=_MAIL_BODY_KEPT, sqlite_where=_MAIL_BODY_KEPT),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int | None = Field(default=None, foreign_key="games.id", index=True)
    player_id: int | None = Field(default=None, foreign_key="players.id")
    to_email: str = Field(max_length=320)
    #: The message's folder under ``emails/templates``.
    template: str = Field(max_length=40)
    context: dict[str, Any] = _json()
    #: Stable per row, so a retried delivery never makes a second, different mail.
    message_id: str = Field(max_length=200, unique=True)
    #: One mail per event: a repeated event (a retried task) finds its row already written.
    dedupe_key: str | None = Field(default=None, max_length=200, unique=True)
    status: MailStatus = Field(default=MailStatus.PENDING, sa_type=EnumString(MailStatus, 12), index=True)
    attempts: int = 0
    last_error: str | None = Field(default=None, max_length=1000)
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))
    #: When the row is due. While a worker holds the row (``claimed_by``), the end of its lease: the worker
    #: renews it while it sends, so a row whose worker died is due again a lease later.
    next_attempt_at: datetime | None = _time(index=True)
    sent_at: datetime | None = _time()
    #: The drain holding the row (``host:pid:random``) while it sends it; ``None`` otherwise.
    claimed_by: str | None = Field(default=None, max_length=100)
    #: A mail about one step of a game (``Game.step_key``: "your turn", "redeploy needed", a reminder): it
    #: is dropped, not sent, once the game has moved past that step.
    step_key: str | None = Field(default=None, max_length=32)
    #: When the retention sweep emptied the mail's body (``context``) and last error, ``SMALLWORLD_MAIL_RETENTION_DAYS``
    #: after it was written (``service.domain.retention``); the row's kind, recipient and times stay.
    body_purged_at: datetime | None = _time()
    #: The mail as it goes to the SMTP server (headers and body, the bytes of ``emails.compose.Mail.data``),
    #: written once, just before its first attempt: every later attempt (after a crash, a retry) sends these
    #: very bytes (ARCHITECTURE §6). Dropped when the mail is recorded sent; kept while it may go out again.
    rendered: bytes | None = Field(default=None, sa_column=sa.Column(sa.LargeBinary(), nullable=True))
    #: A drain died while it held the row after its bytes were written (``rendered``), before it recorded an
    #: outcome: the mail may have reached the SMTP server. Set by the claim that takes the row over, and kept:
    #: such a row is sent again (the same bytes) or recorded ``maybe_sent``, never ``skipped``.
    may_have_left: bool = Field(
        default=False, sa_column=sa.Column(sa.Boolean(), nullable=False, server_default=sa.false())
    )


class ChatNotice(SQLModel, table=True):
    """A notice for the game's chat, written in the same transaction as the change it tells of, and sent by
    its own task (``service.domain.chat_notices``): a chat that fails never holds up mail.

    Public information only: no coins before the end, no signed link, no address.
    """

    __tablename__ = "chat_notices"

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    #: ``turn``, ``auto_pass``, ``result``, ``admin``, ``outage``, ``chat`` (the chat was connected) or
    #: ``talk`` (a message at the table).
    kind: str = Field(max_length=16)
    title: str = Field(max_length=250)
    body: str = Field(max_length=4000)
    #: apprise's notification type: ``info``, ``success``, ``warning`` or ``failure``.
    notify_type: str = Field(default="info", max_length=8)
    #: The step a turn notice announces: it is dropped, not sent, once the game has moved past it.
    step_key: str | None = Field(default=None, max_length=32)
    #: One notice per event: a repeated event (a retried task) finds its row already written.
    dedupe_key: str = Field(max_length=200, unique=True)
    status: NoticeStatus = Field(default=NoticeStatus.PENDING, sa_type=EnumString(NoticeStatus, 12), index=True)
    attempts: int = 0
    last_error: str | None = Field(default=None, max_length=1000)
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))
    #: When the row is due. While a drain holds the row (``claimed_by``), the end of its lease: the drain renews
    #: it while it sends, so a row whose drain died is due again a lease later.
    next_attempt_at: datetime | None = _time(index=True)
    sent_at: datetime | None = _time()
    #: The drain holding the row while it sends it (``service.drain.leases.drain_id``); ``None`` otherwise.
    claimed_by: str | None = Field(default=None, max_length=100)


class GameNotification(SQLModel, table=True):
    """A player's own choice for one game, over their address's default (``Player.notify``)."""

    __tablename__ = "notification_choices"

    player_id: int = Field(foreign_key="players.id", primary_key=True)
    game_id: int = Field(foreign_key="games.id", primary_key=True, index=True)
    mode: NotifyMode = Field(sa_type=EnumString(NotifyMode, 8))


class DigestSent(SQLModel, table=True):
    """The daily digest of one address on one of its local days: written once, in the transaction that queues
    the digest's mail (or finds nothing to tell), so that each address gets at most one a day."""

    __tablename__ = "digests_sent"

    player_id: int = Field(foreign_key="players.id", primary_key=True)
    #: The day in the player's time zone, ``YYYY-MM-DD``.
    local_date: str = Field(max_length=10, primary_key=True)
    #: How many games and messages it listed (0 and 0: nothing to tell, no mail).
    games: int = 0
    messages: int = 0
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))


class TableMessage(SQLModel, table=True):
    """A message at a game's table (table talk, ARCHITECTURE §9): shown on the game's pages, mailed to the players
    who want it. Its text is as written (plain text or a small Markdown subset, ``emails.table_talk``)."""

    __tablename__ = "table_messages"
    __table_args__ = (sa.UniqueConstraint("game_id", "source_key", name="uq_table_messages_game_source"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    seat: int
    #: The seat's name when it wrote (a seat may change hands later).
    author_name: str = Field(max_length=80)
    text: str = Field(sa_column=sa.Column(sa.Text(), nullable=False))
    source: MessageSource = Field(default=MessageSource.PAGE, sa_type=EnumString(MessageSource, 8))
    #: What names the message where it came from (a reply's Message-ID): the same reply posts once.
    source_key: str | None = Field(default=None, max_length=200)
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))
    #: Hidden by the host: shown to everyone as "hidden by the host", its text never again.
    hidden_at: datetime | None = _time()
    hidden_by: str | None = Field(default=None, max_length=360)


class ReminderSent(SQLModel, table=True):
    """A reminder of one step, recorded by the deadline sweep in the transaction that queues its mail.

    Unique per game, step (``Game.step_key``) and reminder, so a late, repeated or concurrent sweep finds
    the record and neither loses nor repeats it (ARCHITECTURE §5). A reminder is named by how long before the
    deadline it comes (one of the game's ``reminders_before_seconds``), which stays true when the host
    edits the list, where a position in the list would not.
    """

    __tablename__ = "reminders_sent"
    __table_args__ = (
        sa.UniqueConstraint("game_id", "step_key", "before_seconds", name="uq_reminders_sent_game_step_reminder"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id")
    step_key: str = Field(max_length=32)
    before_seconds: int
    sent_at: datetime = Field(sa_column=sa.Column(UTCDateTime(), nullable=False))
    #: False when a later reminder of the same step, due at the same sweep, went out in its place.
    mailed: bool = True


class AuditEntry(SQLModel, table=True):
    """One admin act (or a player's vacation) on a game, shown on the game page (ARCHITECTURE §1, item 4)."""

    __tablename__ = "audit"

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    #: Who acted: ``host``, ``site admin <email>``, ``seat <n>`` or ``system``.
    actor: str = Field(max_length=360)
    act: str = Field(max_length=40)
    details: dict[str, Any] = _json()
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))


class SiteAdmin(SQLModel, table=True):
    """An account that manages every game (``smallworld admin create EMAIL``); logs in by emailed link."""

    __tablename__ = "site_admins"

    id: int | None = Field(default=None, primary_key=True)
    email: str = Field(max_length=320, unique=True, index=True)
    #: Part of every login link; rotating it logs the admin out everywhere.
    secret: str = Field(max_length=64)
    #: Each sign-in link carries the value this had when it was made; signing in moves it on, so a link
    #: works once, and every link made before a sign-in stops working.
    sign_in_serial: int = 0
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))


class SignIn(SQLModel, table=True):
    """A sign-in by mail (ARCHITECTURE §9): the link mailed to an address, then the browser session it opened.

    The link names the row and carries ``link_secret``; it works once (``used_at``) and for a short while.
    Using it makes ``session_secret``, which the session cookie keeps: every signed-in page checks it again,
    so signing out (``ended_at``) ends that session for good, not only in the browser that signed out.
    """

    __tablename__ = "sign_ins"
    #: Rows are deleted (an erased address) and the sign-in mail's dedupe key names the row's id: SQLite must
    #: never hand a deleted row's id to a new one, whose mail would be taken for the old one's and never sent.
    __table_args__ = {"sqlite_autoincrement": True}

    id: int | None = Field(default=None, primary_key=True)
    #: The address signing in, as addresses are stored (lower case).
    email: str = Field(max_length=320, index=True)
    link_secret: str = Field(max_length=64)
    session_secret: str | None = Field(default=None, max_length=64)
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))
    used_at: datetime | None = _time()
    ended_at: datetime | None = _time()


class BlockedAddress(SQLModel, table=True):
    """An address that asked never to be invited again ("never invite me again" in every invitation).

    No game may name it, as a player or as the host; the lobby says so to the host.
    """

    __tablename__ = "blocked_addresses"

    email: str = Field(primary_key=True, max_length=320)
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))


class ErasedAddress(SQLModel, table=True):
    """An address whose owner had it erased ("Delete my address", ``service.domain.privacy``), kept only as a
    digest (``block_list.address_digest``): no game may name it again, as a player or as the host, and no mail
    goes to it, until its owner allows invitations again by the "never invite me again" link of an old mail."""

    __tablename__ = "erased_addresses"

    digest: str = Field(primary_key=True, max_length=64)
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))


class ServiceStatus(SQLModel, table=True):
    """When something the whole service does last happened, by name.

    The deadline sweep records itself here (``service.domain.status.LAST_DEADLINE_SWEEP``), so
    ``/health`` can show it and the sweep can tell how long the service was down.
    """

    __tablename__ = "service_status"

    name: str = Field(primary_key=True, max_length=64)
    at: datetime = Field(sa_type=UTCDateTime)


class GameResult(SQLModel, table=True):
    """One seat's line of a finished game's final table, written by the tally (``service.domain.tally``).

    Unique per (game, seat): the tally writes a game's lines once, whoever runs it and however often.
    """

    __tablename__ = "game_results"
    __table_args__ = (sa.UniqueConstraint("game_id", "seat", name="uq_game_results_game_seat"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    seat: int
    player_id: int = Field(foreign_key="players.id", index=True)
    #: 1 for the winner; tied players share a place (``rules.final_standings``).
    place: int
    coins: int
    tokens_on_board: int
    tie_break: bool = False
    resigned: bool = False
    #: Steps this seat was given a deadline for, and how many of them it let pass.
    deadlines: int = 0
    deadlines_missed: int = 0
    #: The address's rating (openskill, Plackett–Luce) before and after this game.
    rating_mu_before: float
    rating_sigma_before: float
    rating_mu: float
    rating_sigma: float
    created_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))


class PlayerRecord(SQLModel, table=True):
    """An address's rating and record over every finished game (ARCHITECTURE §9), updated by the tally only."""

    __tablename__ = "player_records"

    player_id: int = Field(foreign_key="players.id", primary_key=True)
    rating_mu: float
    rating_sigma: float
    games_finished: int = 0
    #: Steps given a deadline, over every finished game, and how many of them passed unplayed.
    deadlines: int = 0
    deadlines_missed: int = 0
    resigned: int = 0
    updated_at: datetime = Field(default_factory=utcnow, sa_column=sa.Column(UTCDateTime(), nullable=False))
