"""One typed message per kind of mail: its template, its fields (the template's context) and its dedupe key.

The service builds a message where an event happens (``YourTurn(...)``) and hands it to
``service.domain.outbox.queue_mail``, which stores the template name, the fields as JSON (``context``)
and the dedupe key in one outbox row. Delivery rebuilds the message from that row (:func:`from_json`)
and renders it (:meth:`Message.render`); a row that does not make a valid message (an unknown template,
an unknown or a missing field, a field of the wrong type) raises :class:`MessageError`, which fails that
one mail with the reason.

The dedupe key names the event a mail is about, so that the same event (a retried task, two sweeps at
once) writes its mail once. Existing rows rely on the keys: they must never change shape.

>>> mail = AutoPassed(game_id=7, game_name="Friday", player_name="Ann", reason="deadline", defending=False,
...                   version=12)
>>> mail.template, mail.dedupe_key
('auto_passed', 'game:7:auto-pass:12')
>>> from_json(mail.template, mail.context()) == mail
True
>>> from_json("auto_passed", {**mail.context(), "coins": 12})
Traceback (most recent call last):
...
emails.messages.MessageError: auto_passed: unknown field coins
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal, NotRequired

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    PlainSerializer,
    ValidationError,
    field_validator,
    model_validator,
    with_config,
)
from typing_extensions import TypedDict

from .admin_acts import Change
from .render import MESSAGES, Rendered, RenderError, render


def _iso(moment: datetime) -> str:
    return moment.isoformat()


#: A moment, as an aware datetime; stored as ISO 8601 (``datetime.isoformat``), as the templates read it.
Instant = Annotated[AwareDatetime, PlainSerializer(_iso, return_type=str, when_used="json")]


class MessageError(RenderError):
    """An outbox row that is not a valid message: a permanent failure of that one mail."""


# -- the pieces of a board and of a final table -----------------------------------------------------------
@with_config(ConfigDict(extra="forbid"))
class BoardPlayer(TypedDict):
    name: str
    #: "Orcs (Seafaring)", or ``None`` before the first pick and after a decline.
    active: str | None
    declined: list[str]


@with_config(ConfigDict(extra="forbid"))
class BoardRegion(TypedDict):
    """One region as the mail shows it (public information only, ARCHITECTURE §4); absent keys are absent pieces."""

    terrain: str
    race: NotRequired[str]
    tokens: NotRequired[int]
    owner: NotRequired[int]
    declined: NotRequired[bool]
    marks: NotRequired[list[str]]
    encampments: NotRequired[int]


@with_config(ConfigDict(extra="forbid"))
class Board(TypedDict):
    """The public board of a turn mail, for its picture (``emails.board``) and its words
    (``emails.board.public.PublicBoard.to_mail``)."""

    #: Which board ("2-players" … "5-players"); mails written before it was named have none (their region
    #: count says which).
    board: NotRequired[str]
    players: list[BoardPlayer]
    regions: list[BoardRegion]
    #: The reader's seat.
    you: int | None
    turn: int
    turns: int


@with_config(ConfigDict(extra="forbid"))
class Standing(TypedDict):
    """One row of the final table (``rules.final_standings`` and the player's name)."""

    player: int
    coins: int
    tokens_on_board: int
    place: int
    tie_break: bool
    name: str


# -- the messages ----------------------------------------------------------------------------------------
class Message(BaseModel):
    """A mail of one kind, as stored in the outbox and rendered from its template folder."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: The message's folder under ``emails/templates``.
    template: ClassVar[str]

    @property
    def dedupe_key(self) -> str:
        """Names the event the mail is about: one mail per event."""
        raise NotImplementedError

    @property
    def category(self) -> str:
        """``essential``, ``reminder`` or ``notice`` (``emails.render``): whether a player may turn it off."""
        return MESSAGES[self.template]

    def context(self) -> dict[str, Any]:
        """The fields as JSON: what the outbox row stores and the template reads."""
        return self.model_dump(mode="json")

    def render(
        self,
        *,
        now: datetime,
        time_zone: str | None = "UTC",
        game_url: str | None = None,
        unsubscribe_url: str | None = None,
        pictures: bool = True,
        calendar_url: str | None = None,
        reply_address: str | None = None,
        choices_url: str | None = None,
    ) -> Rendered:
        """The mail for one reader (``emails.render.render``)."""
        return render(
            self.template,
            self.context(),
            now=now,
            time_zone=time_zone,
            game_url=game_url,
            unsubscribe_url=unsubscribe_url,
            pictures=pictures,
            calendar_url=calendar_url,
            reply_address=reply_address,
            choices_url=choices_url,
        )


class GameMessage(Message):
    """A mail about one game (its row's ``game_id``; the mail belongs to the game's thread)."""

    game_id: int
    game_name: str


class Invitation(GameMessage):
    """A seat in a game: at its creation, or taken over from another player (``replacing``)."""

    template: ClassVar[str] = "invitation"

    player_name: str
    players: list[str]
    invite_url: str
    turn_url: str
    turn_length_seconds: int
    starts_at_once: bool
    seat: int
    #: Who had the seat, when it changed hands.
    replacing: str | None = None
    #: The newcomer's seat is the one the game waits for.
    your_turn: bool = False
    #: When the seat changed hands: its new secret, which names that change (each one rotates it).
    seat_secret: str | None = None
    #: The reader's "never invite me again" link (ARCHITECTURE §9).
    block_url: str | None = None
    #: Each player's record beside their name, in seat order ("Bob: 12 games, missed 2 % of deadlines,
    #: rating 21"; ``service.domain.records``): finished games only, nothing of a game under way.
    records: list[str] = []

    @property
    def dedupe_key(self) -> str:
        """One invitation per seat of a new game, and one per change of hands.

        >>> seat = dict(game_id=3, game_name="g", player_name="Ann", players=["Ann"], invite_url="u",
        ...             turn_url="u", turn_length_seconds=60, starts_at_once=False, seat=1)
        >>> Invitation(**seat).dedupe_key, Invitation(**seat, seat_secret="s3cr3t").dedupe_key
        ('game:3:invite:1', 'game:3:replace:1:s3cr3t')
        """
        if self.seat_secret is not None:
            return f"game:{self.game_id}:replace:{self.seat}:{self.seat_secret}"
        return f"game:{self.game_id}:invite:{self.seat}"


@with_config(ConfigDict(extra="forbid"))
class ProposedSeat(TypedDict):
    """A seat of a game waiting for its host's confirmation: the name and address the creator gave."""

    name: str
    email: str


class GameToConfirm(GameMessage):
    """To the host of a new game, and to nobody else until they confirm it (ARCHITECTURE §9): the game as its
    invitations would go, the link to confirm or discard it, and "never mail me again"."""

    template: ClassVar[str] = "confirm_game"

    host_email: str
    players: list[ProposedSeat]
    confirm_url: str
    #: The game lapses this long after its creation if nobody confirms it.
    confirm_hours: int
    turn_length_seconds: int
    starts_at_once: bool
    block_url: str

    @property
    def dedupe_key(self) -> str:
        return f"game:{self.game_id}:confirm"


class AdminLink(GameMessage):
    """The host's link to manage the game."""

    template: ClassVar[str] = "admin_link"

    admin_url: str

    @property
    def dedupe_key(self) -> str:
        return f"game:{self.game_id}:admin-link"


class AdminLogin(Message):
    """A site admin's sign-in link (to an address, about no game)."""

    template: ClassVar[str] = "admin_login"

    login_url: str
    valid_minutes: int
    account_id: int
    #: Which sign-in interval it was asked in (seconds since the epoch // the interval): one mail each.
    window: int

    @property
    def dedupe_key(self) -> str:
        return f"site-admin:{self.account_id}:sign-in:{self.window}"


class SignInLink(Message):
    """An address's sign-in link (ARCHITECTURE §9: an address is an identity), and nothing else: no game, no
    other link. Mailed only to an address the service has mailed before (``service.domain.sign_in``)."""

    template: ClassVar[str] = "sign_in"

    sign_in_url: str
    valid_minutes: int
    #: The sign-in row the link names: one mail per sign-in asked for.
    sign_in_id: int

    @property
    def dedupe_key(self) -> str:
        return f"address-sign-in:{self.sign_in_id}"


@with_config(ConfigDict(extra="forbid"))
class SeatLink(TypedDict):
    """One seat of the reader in a game, with its own link: the turn link, or the invitation to accept."""

    name: str
    url: str
    accepted: bool


class YourLinks(GameMessage):
    """Mail me my links: the reader's links to one game, asked for on its public page (ARCHITECTURE §9)."""

    template: ClassVar[str] = "your_links"

    seats: list[SeatLink]
    player_id: int
    #: Which interval it was asked in (seconds since the epoch // the interval): at most one mail each.
    window: int

    @property
    def dedupe_key(self) -> str:
        return f"game:{self.game_id}:links:{self.player_id}:{self.window}"


class _StepMessage(GameMessage):
    """A mail asking a seat for the step the game now waits for (``Game.step_key``)."""

    player_name: str
    turn: int
    turns: int
    turn_url: str
    #: ``None`` while the game is paused: the clock starts when it resumes.
    deadline_at: Instant | None
    version: int
    step_key: str
    seat: int
    defending: bool
    #: Tokens in the seat's hand (to redeploy).
    hand: int
    board: Board
    #: What the seat may do, as orders to write in a reply (``rules.orders.describe``); mails written before
    #: orders by mail have none.
    orders: list[str] = []
    #: "Since your last turn": each other player's turn since the reader's previous one (for a defender, the
    #: attack too), a sentence of public facts each (``service.domain.story``), in order; mails written
    #: before it have none.
    since: list[str] = []
    #: The "how a turn goes" page (``/how-to-play``): the steps of a turn and every race and power in its own
    #: words; mails written before it have none.
    guide_url: str = ""

    @property
    def dedupe_key(self) -> str:
        return f"game:{self.game_id}:step:{self.step_key}"


class YourTurn(_StepMessage):
    template: ClassVar[str] = "your_turn"


class RedeployNeeded(_StepMessage):
    """A defender's redeployment, in the ``ask`` redeploy mode (ARCHITECTURE §4)."""

    template: ClassVar[str] = "redeploy_needed"


class Reminder(GameMessage):
    """One reminder of a step, ``before_seconds`` before its deadline (ARCHITECTURE §5)."""

    template: ClassVar[str] = "reminder"

    player_name: str
    turn_url: str
    deadline_at: Instant
    step_key: str
    before_seconds: int
    defending: bool
    turn: int
    turns: int
    seat: int

    @property
    def dedupe_key(self) -> str:
        return f"game:{self.game_id}:reminder:{self.step_key}:{self.before_seconds}:{self.seat}"


class AutoPassed(GameMessage):
    """A seat's step was completed for it: its deadline passed, or an admin passed it."""

    template: ClassVar[str] = "auto_passed"

    player_name: str
    #: ``deadline``, or the admin who passed the step (an audit actor, ``host`` or ``site admin …``).
    reason: str
    defending: bool
    #: The game's version the pass made.
    version: int

    @property
    def dedupe_key(self) -> str:
        return f"game:{self.game_id}:auto-pass:{self.version}"


class HostAlert(GameMessage):
    """To the host: a player missed ``auto_passes`` turns in a row."""

    template: ClassVar[str] = "host_alert"

    #: The player who missed their turns, in ``seat``.
    player_name: str
    auto_passes: int
    admin_url: str
    seat: int

    @property
    def dedupe_key(self) -> str:
        return f"game:{self.game_id}:alert:{self.seat}:{self.auto_passes}"


class GameOver(GameMessage):
    """The final table, to one seat (ARCHITECTURE §4, "End of game"): every coin count is public now."""

    template: ClassVar[str] = "game_over"

    player_name: str
    standings: list[Standing]
    seed: str
    your_seat: int

    @property
    def dedupe_key(self) -> str:
        return f"game:{self.game_id}:over:{self.your_seat}"


#: What an :class:`OrdersAnswer` answers: orders carried out (or refused), a reply to a step that was over,
#: a reply to a game that is not running, a reply without an order in it, a reply for a seat the house bot
#: plays now.
Answered = Literal["orders", "late", "not_running", "no_orders", "bot_seat"]
#: The step a reply answered, that ended before all of the reply was carried out: a defender's redeployment,
#: or the seat's turn.
StepOver = Literal["redeployment", "turn"]


class OrdersAnswer(GameMessage):
    """The answer to a reply with orders (ARCHITECTURE §10): what was done, the order that failed and why, the
    legal actions from there, the board as it stands; to the seat's own address, never the ``From`` of the
    mail answered."""

    template: ClassVar[str] = "orders_answer"

    player_name: str
    seat: int
    #: The inbound mail answered (``InboundMail.id``): one answer per mail.
    inbound_id: int
    answered: Answered
    #: Each step carried out, told in a sentence (``rules.tell``).
    done: list[str] = []
    #: The order that failed, as written, and why.
    failed: str | None = None
    reason: str | None = None
    #: The orders after the one that failed, not tried.
    not_tried: list[str] = []
    #: The step the reply answered ended before the end of the reply (ARCHITECTURE §10: a reply address names one
    #: step): the order that went no further into the next step, as written, and the orders not applied.
    step_over: StepOver | None = None
    cut: str | None = None
    left: list[str] = []
    #: The first line that was not read as an order.
    stopped_at: str | None = None
    #: What the seat may do now, as orders (empty when nothing is awaited from it).
    orders: list[str] = []
    #: The grammar in a line or two, when the mail had no order to read.
    grammar: list[str] = []
    #: The step the seat is awaited for now (its reply address), or None.
    step_key: str | None = None
    turn_url: str
    #: The reader's own coins (theirs only, ARCHITECTURE §4).
    coins: int | None = None
    board: Board | None = None
    turn: int
    turns: int

    @property
    def dedupe_key(self) -> str:
        return f"inbound:{self.inbound_id}:answer"


#: What a delivery status code (RFC 3463) says, in a host's words: by the whole code, else by its class and
#: subject. A delivery report's own text (its ``Diagnostic-Code``, its human part) never reaches a mail nor a
#: page: anyone can send a report, and a forged one carried "re-confirm your seat at https://evil.example".
BOUNCE_STATUSES = {
    "1.1": "mailbox unknown",
    "1.2": "domain unknown",
    "1.3": "address malformed",
    "1.6": "mailbox moved",
    "1.10": "domain takes no mail",
    "2.1": "mailbox disabled",
    "2.2": "mailbox full",
    "2.3": "message too large for the mailbox",
    "4.4": "no route to the domain's mail server",
    "4.7": "delivery timed out",
    "7.1": "refused by the receiving server",
}
BOUNCE_SUBJECTS = {
    "0": "undelivered",
    "1": "address problem",
    "2": "mailbox problem",
    "3": "receiving mail system problem",
    "4": "network or routing problem",
    "5": "mail delivery protocol problem",
    "6": "message content problem",
    "7": "refused by policy",
}
_STATUS = re.compile(r"(?<![0-9.])([245])\.([0-9]{1,3})\.([0-9]{1,3})(?![0-9.])")


def bounce_reason(status: str) -> str:
    """The fixed words for the first delivery status code (RFC 3463) in ``status``: never ``status``'s other
    text.

    >>> bounce_reason("5.1.1"), bounce_reason("550 5.1.1 No such user"), bounce_reason("5.3.9")
    ('5.1.1 mailbox unknown', '5.1.1 mailbox unknown', '5.3.9 receiving mail system problem')
    >>> bounce_reason("re-confirm your seat at https://evil.example/login")
    'undelivered'
    """
    found = _STATUS.search(status)
    if found is None:
        return "undelivered"
    kind, subject, detail = found.groups()
    code = f"{kind}.{subject}.{detail}"
    return f"{code} {BOUNCE_STATUSES.get(f'{subject}.{detail}') or BOUNCE_SUBJECTS.get(subject, 'undelivered')}"


class BounceAlert(GameMessage):
    """To the host: mail to a player's address bounces (a delivery status notification said so)."""

    template: ClassVar[str] = "bounce_alert"

    player_name: str
    seat: int
    address: str
    #: Why, as :func:`bounce_reason` words it from the report's status code: whatever is given here is
    #: reduced to those words (a mail queued before held the report's own text).
    reason: str
    admin_url: str
    #: The bounce (``InboundMail.id``) that marked the address.
    inbound_id: int

    @field_validator("reason", mode="before")
    @classmethod
    def _fixed_words(cls, reason: object) -> str:
        return bounce_reason(str(reason))

    @property
    def dedupe_key(self) -> str:
        return f"game:{self.game_id}:bounce:{self.seat}:{self.inbound_id}"


class SeatToBot(GameMessage):
    """To a seat's player: the house bot plays their seat from now on (the host gave it the seat, or they
    missed ``missed`` turns in a row), and the link to take it back. Essential: it is how they get their
    seat back, and no turn mail comes while the bot plays it (ARCHITECTURE §10)."""

    template: ClassVar[str] = "seat_to_bot"

    player_name: str
    seat: int
    #: Why, in words for the player: ``"the host gave it the seat"``, ``"you missed 3 turns in a row"``...
    reason: str
    #: The seat's link: its turn page has the button that takes the seat back.
    take_back_url: str
    #: The audit entry of the change: one mail per change.
    event: int

    @property
    def dedupe_key(self) -> str:
        return f"game:{self.game_id}:seat-to-bot:{self.event}"


class TableTalk(GameMessage):
    """A message written at the game's table (ARCHITECTURE §9), to one other seat (``seat``) who wants it."""

    template: ClassVar[str] = "table_talk"

    #: The reader.
    player_name: str
    seat: int
    #: The message: who wrote it (their seat's name then), when, and its text as written (plain text or the
    #: small Markdown subset of ``emails.table_talk``).
    author: str
    text: str
    posted_at: Instant
    talk_id: int

    @property
    def dedupe_key(self) -> str:
        """One mail per message and reader.

        >>> TableTalk(game_id=3, game_name="g", player_name="Bob", seat=1, author="Ann", text="Hi",
        ...           posted_at="2026-03-01T09:00:00+00:00", talk_id=12).dedupe_key
        'game:3:talk:12:1'
        """
        return f"game:{self.game_id}:talk:{self.talk_id}:{self.seat}"


@with_config(ConfigDict(extra="forbid"))
class DigestGame(TypedDict):
    """A game the daily digest lists: one that waits for the reader (their turn, or an invitation)."""

    game_name: str
    #: The reader's own link to it (their turn link, or the invitation).
    url: str
    #: ``turn``, ``redeploy`` or ``invitation``.
    waiting: str
    deadline_at: str | None
    turn: int | None
    turns: int | None


@with_config(ConfigDict(extra="forbid"))
class DigestTalk(TypedDict):
    """A message said at one of the reader's tables since their last digest."""

    game_name: str
    author: str
    text: str
    posted_at: str


class DailyDigest(Message):
    """Once a day, at the local hour the reader chose (ARCHITECTURE §9): every game that waits for them, and what
    was said at the tables of the games they follow by digest. About no one game: it has its own thread."""

    template: ClassVar[str] = "daily_digest"

    player_name: str
    player_id: int
    #: The reader's local day, ``YYYY-MM-DD``: one digest per address and day.
    local_date: str
    games: list[DigestGame]
    talk: list[DigestTalk]
    #: Messages left out of ``talk`` (it holds the latest few only).
    more_talk: int = 0

    @property
    def dedupe_key(self) -> str:
        """
        >>> DailyDigest(player_name="Ann", player_id=4, local_date="2026-03-01", games=[], talk=[]).dedupe_key
        'digest:4:2026-03-01'
        """
        return f"digest:{self.player_id}:{self.local_date}"


#: What an :class:`AdminChange` announces.


class AdminChange(GameMessage):
    """An admin act (or a player's vacation) announced to a player; or, with ``change="outage"``, the
    deadline sweep's notice that the service was away and the deadline moved."""

    template: ClassVar[str] = "admin_change"

    player_name: str
    change: Change
    #: Who acted, as the audit log names them.
    actor: str
    details: dict[str, Any]
    deadline_at: Instant | None
    pause_reason: str | None = None
    #: An act: the game's version it made, and the reader's player id (one mail per act and reader).
    version: int | None = None
    player_id: int | None = None
    #: The reader's seat, told "you" (none for a player whose seat was given away); an outage's mail is one
    #: per outage and seat (``details["from"]`` is when it began).
    seat: int | None = None
    #: The seats' names in seat order, for the act's words (``emails.admin_acts``).
    names: list[str] = []

    @model_validator(mode="after")
    def _names_its_event(self) -> AdminChange:
        if self.change == "outage":
            if self.seat is None or not isinstance(self.details.get("from"), str):
                raise ValueError("an outage notice needs the reader's seat and details['from']")
        elif self.version is None or self.player_id is None:
            raise ValueError("an admin act's notice needs the game's version and the reader's player_id")
        return self

    @property
    def dedupe_key(self) -> str:
        if self.change == "outage":
            return f"game:{self.game_id}:outage:{self.details['from']}:{self.seat}"
        return f"game:{self.game_id}:admin:{self.version}:{self.player_id}"


#: Every kind of message, by template name.
KINDS: dict[str, type[Message]] = {
    kind.template: kind
    for kind in (
        Invitation,
        GameToConfirm,
        AdminLink,
        AdminLogin,
        SignInLink,
        YourLinks,
        YourTurn,
        RedeployNeeded,
        Reminder,
        AutoPassed,
        AdminChange,
        HostAlert,
        GameOver,
        OrdersAnswer,
        BounceAlert,
        SeatToBot,
        TableTalk,
        DailyDigest,
    )
}


def from_json(template: str, context: Mapping[str, Any]) -> Message:
    """The message an outbox row stores: its template name and its fields as JSON.

    Raises :class:`MessageError`, naming what is wrong, when they do not make a valid message.
    """
    kind = KINDS.get(template)
    if kind is None:
        raise MessageError(f"unknown message {template!r}")
    if not isinstance(context, Mapping):
        raise MessageError(f"{template}: the context is not a JSON object")
    try:
        return kind.model_validate(context)
    except ValidationError as error:
        raise MessageError(f"{template}: {_explain(error)}") from None


def _explain(error: ValidationError) -> str:
    """The validation errors in a line: unknown fields, missing fields, then the others."""
    unknown, missing, other = [], [], []
    for problem in error.errors(include_url=False):
        where = ".".join(str(part) for part in problem["loc"])
        if problem["type"] == "extra_forbidden":
            unknown.append(where)
        elif problem["type"] == "missing":
            missing.append(where)
        else:
            other.append(f"{where}: {problem['msg']}" if where else problem["msg"])
    parts = []
    if unknown:
        parts.append(f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}")
    if missing:
        parts.append(f"missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    return "; ".join(parts + other)
