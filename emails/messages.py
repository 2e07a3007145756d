"""One typed message per kind of mail: its policy, its fields (the template's context) and its dedupe key.

A kind's policy (template, category, audience, picture, replies, calendar) is one :class:`~emails.render.MailKind`
on its class, and what its templates read is built by its :meth:`Message.values`, the one place (ARCHITECTURE
§6). The reader's seat link is no field: delivery mints it when the mail is sent.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal, NotRequired, Protocol, Self

from markupsafe import Markup
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

from . import admin_acts, times
from .admin_acts import Change
from .render import (
    ADDRESS,
    AT_THE_TABLE,
    DIGEST,
    ESSENTIAL,
    HOST,
    NOTICE,
    ORDERS,
    REMINDER,
    REPLY_PREFIX,
    TALK,
    MailKind,
    Rendered,
    RenderError,
    add_board,
    breakable,
    conversation_subject,
    deadline,
    ordinal,
    unsubscribe_label,
    webcal,
    write,
)
from .table_talk import excerpt, message_html


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
    #: "Seafaring Orcs" (``rules.combo_name``), or ``None`` before the first pick and after a decline.
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
    """A mail of one kind, as stored in the outbox and rendered from its template folder.

    A kind's policy is its :class:`~emails.render.MailKind` (``kind``), declared on its class and read from
    there by the renderer and by delivery (ARCHITECTURE §6). A message holds no link to the reader's seat: it is
    minted when the mail is sent (``game_url``), so that it is the seat's link as it is then.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: The kind's policy.
    kind: ClassVar[MailKind]
    #: The message's folder under ``emails/templates`` (``kind.template``).
    template: ClassVar[str]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            cls.template = cls.kind.template

    @property
    def dedupe_key(self) -> str:
        """Names the event the mail is about: one mail per event (the kind's ``dedupe``, of the fields).

        >>> TableTalk(game_id=3, game_name="g", player_name="Bob", seat=1, author="Ann", text="Hi",
        ...           posted_at="2026-03-01T09:00:00+00:00", talk_id=12).dedupe_key
        'game:3:talk:12:1'
        """
        return self.kind.dedupe.format_map(self.__dict__)

    @property
    def category(self) -> str:
        """``essential``, ``reminder``, ``notice``, ``talk`` or ``digest``: whether a player may turn it off."""
        return self.kind.category

    def context(self) -> dict[str, Any]:
        """The fields as JSON: what the outbox row stores and the template reads."""
        return self.model_dump(mode="json")

    @property
    def replying_to(self) -> Replying | None:
        """The mail this one answers, when it answers a person's mail (its ``In-Reply-To``, ``References``
        and ``Subject`` follow that mail's); None for the others, which follow their game's thread."""
        return None

    def values(
        self,
        *,
        now: datetime,
        time_zone: str | None = "UTC",
        game_url: str | None = None,
        unsubscribe_url: str | None = None,
        calendar_url: str | None = None,
        reply_address: str | None = None,
        choices_url: str | None = None,
    ) -> dict[str, Any]:
        """What the templates read for one reader: the fields, and the reader's links as delivery minted them at
        sending, each kept only where the kind's policy says; the one place a mail's values are built.

        ``now`` is when the mail is written (its ``Date``): time left is counted from it. ``time_zone`` is the
        reader's. ``game_url`` is the reader's link to their seat. ``unsubscribe_url`` turns off the kind's
        category, ``calendar_url`` is the ``https://`` address of the reader's calendar feed (offered in both its
        ``webcal://`` and ``https://`` forms), ``reply_address`` the mail's ``Reply-To`` (the kinds answered by
        mail say how), ``choices_url`` the reader's page of mail choices.
        """
        kind = self.kind
        fields = self.context()
        missing = [key for key in kind.required if fields.get(key) in (None, "")]
        if missing:
            raise RenderError(f"{kind.template}: the context lacks {', '.join(missing)}")
        values: dict[str, Any] = dict(fields)
        values.update(
            message=kind.template,
            category=kind.category,
            game_url=game_url,
            unsubscribe_url=unsubscribe_url if kind.unsubscribe else None,
            unsubscribe_label=unsubscribe_label(kind.category),
            calendar_url=calendar_url if kind.calendar else None,
            calendar_webcal=webcal(calendar_url) if calendar_url and kind.calendar else None,
            calendar_webcal_parts=breakable(webcal(calendar_url)) if calendar_url and kind.calendar else [],
            choices_url=choices_url if kind.choices else None,
            deadline=deadline(fields.get("deadline_at"), now, time_zone),
            time_zone=times.zone(time_zone).key,
            reply_address=reply_address if kind.replies else None,
        )
        values["personal_link"] = any(values.get(k) for k in ("invite_url", "admin_url", "game_url", "seats"))
        self._add_values(values)
        return values

    def _add_values(self, values: dict[str, Any]) -> None:
        """The values of the kind's own templates, beyond its fields (none by default)."""

    def render(self, *, pictures: bool = True, **reader: Any) -> Rendered:
        """The mail for one reader (the arguments of :meth:`values`), with the board in words and, with
        ``pictures``, its picture for the kinds that carry one: both drawn once per game state
        (:func:`~emails.render.add_board`)."""
        values = self.values(**reader)
        images = add_board(values, values.get("board"), pictures and self.kind.picture)
        return write(self.kind.template, values, images, subject=self.subject())

    def subject(self) -> str | None:
        """The mail's subject when it is not its template's (a game's conversation), else ``None``."""
        return None


class _Game(Protocol):
    """What :meth:`GameMessage.to_seat` reads of a game (its row or its record)."""

    @property
    def id(self) -> int | None: ...

    @property
    def name(self) -> str: ...


class _Seat(Protocol):
    """What :meth:`GameMessage.to_seat` reads of a seat: the name its player goes by in the game."""

    @property
    def display_name(self) -> str: ...


class GameMessage(Message):
    """A mail about one game (its row's ``game_id``; the mail belongs to the game's thread)."""

    game_id: int
    game_name: str

    @classmethod
    def to_seat(cls, game: _Game, reader: _Seat, /, **fields: Any) -> Self:
        """This kind of mail about ``game`` to the player of the seat ``reader``, greeted by the seat's name;
        ``fields`` are the kind's own."""
        named = {"game_id": game.id or 0, "game_name": game.name, "player_name": reader.display_name}
        return cls.model_validate(named | fields)

    def subject(self) -> str | None:
        """One subject for every mail of the game (ARCHITECTURE §6), but for a kind that keeps its own."""
        return None if self.kind.own_subject else conversation_subject(self.game_name)


class Invitation(GameMessage):
    """A seat in a game: at its creation, or taken over from another player (``replacing``)."""

    kind: ClassVar[MailKind] = MailKind("invitation", ESSENTIAL, required=("game_name", "player_name", "players"))

    player_name: str
    players: list[str]
    invite_url: str
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
        ...             turn_length_seconds=60, starts_at_once=False, seat=1)
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

    kind: ClassVar[MailKind] = MailKind(
        "confirm_game",
        ESSENTIAL,
        required=("game_name", "host_email", "players", "confirm_url", "block_url"),
        audience=ADDRESS,
        dedupe="game:{game_id}:confirm",
    )

    host_email: str
    players: list[ProposedSeat]
    confirm_url: str
    #: The game lapses this long after its creation if nobody confirms it.
    confirm_hours: int
    turn_length_seconds: int
    starts_at_once: bool
    block_url: str


class AdminLink(GameMessage):
    """The host's link to manage the game."""

    kind: ClassVar[MailKind] = MailKind(
        "admin_link", ESSENTIAL, required=("game_name", "admin_url"), audience=HOST, dedupe="game:{game_id}:admin-link"
    )

    admin_url: str


class AdminLogin(Message):
    """A site admin's sign-in link (to an address, about no game)."""

    kind: ClassVar[MailKind] = MailKind(
        "admin_login",
        ESSENTIAL,
        required=("login_url", "valid_minutes"),
        audience=ADDRESS,
        dedupe="site-admin:{account_id}:sign-in:{window}",
    )

    login_url: str
    valid_minutes: int
    account_id: int
    #: Which sign-in interval it was asked in (seconds since the epoch // the interval): one mail each.
    window: int


class SignInLink(Message):
    """An address's sign-in link (ARCHITECTURE §9: an address is an identity), and nothing else: no game, no
    other link. Mailed only to an address the service has mailed before (``service.domain.sign_in``)."""

    kind: ClassVar[MailKind] = MailKind(
        "sign_in",
        ESSENTIAL,
        required=("sign_in_url", "valid_minutes"),
        audience=ADDRESS,
        dedupe="address-sign-in:{sign_in_id}",
    )

    sign_in_url: str
    valid_minutes: int
    #: The sign-in row the link names: one mail per sign-in asked for.
    sign_in_id: int


@with_config(ConfigDict(extra="forbid"))
class SeatLink(TypedDict):
    """One seat of the reader in a game, with its own link: the turn link, or the invitation to accept."""

    name: str
    url: str
    accepted: bool


class YourLinks(GameMessage):
    """Mail me my links: the reader's links to one game, asked for on its public page (ARCHITECTURE §9)."""

    kind: ClassVar[MailKind] = MailKind(
        "your_links",
        ESSENTIAL,
        required=("game_name", "seats"),
        dedupe="game:{game_id}:links:{player_id}:{window}",
        own_subject=True,
    )

    seats: list[SeatLink]
    player_id: int
    #: Which interval it was asked in (seconds since the epoch // the interval): at most one mail each.
    window: int


#: What a mail asking for a step cannot go out without, beyond its fields' types; and its dedupe key (one mail
#: per step).
_STEP_FIELDS = ("game_name", "player_name", "turn", "turns")
_STEP = "game:{game_id}:step:{step_key}"


class _StepMessage(GameMessage):
    """A mail asking a seat for the step the game now waits for (``Game.step_key``)."""

    player_name: str
    turn: int
    turns: int
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
    #: Each region the seat may conquer now, its cost with its parts and what holds it (``rules.orders.conquests``):
    #: text play needs no picture.
    conquests: list[str] = []
    #: "Since your last turn": each other player's turn since the reader's previous one (for a defender, the
    #: attack too), a sentence of public facts each (``service.domain.story``), in order; mails written
    #: before it have none.
    since: list[str] = []
    #: The "how a turn goes" page (``/how-to-play``): the steps of a turn and every race and power in its own
    #: words; mails written before it have none.
    guide_url: str = ""


class YourTurn(_StepMessage):
    kind: ClassVar[MailKind] = MailKind(
        "your_turn", ESSENTIAL, required=_STEP_FIELDS, dedupe=_STEP, picture=True, replies=ORDERS, calendar=True
    )


class RedeployNeeded(_StepMessage):
    """A defender's redeployment, in the ``ask`` redeploy mode (ARCHITECTURE §4)."""

    kind: ClassVar[MailKind] = MailKind(
        "redeploy_needed", ESSENTIAL, required=_STEP_FIELDS, dedupe=_STEP, picture=True, replies=ORDERS
    )


class Reminder(GameMessage):
    """One reminder of a step, ``before_seconds`` before its deadline (ARCHITECTURE §5)."""

    kind: ClassVar[MailKind] = MailKind(
        "reminder",
        REMINDER,
        required=("game_name", "player_name", "deadline_at"),
        replies=ORDERS,
        calendar=True,
        dedupe="game:{game_id}:reminder:{step_key}:{before_seconds}:{seat}",
    )

    player_name: str
    deadline_at: Instant
    step_key: str
    before_seconds: int
    defending: bool
    turn: int
    turns: int
    seat: int
    #: The same orders and conquests as the step's turn mail lists (``service.domain.turn_mail.orders_of``);
    #: reminders written before have none.
    orders: list[str] = []
    conquests: list[str] = []

    def _add_values(self, values: dict[str, Any]) -> None:
        if values["deadline"] is None:  # required, so only a malformed date gets here
            raise RenderError("reminder: the deadline is missing")


class AutoPassed(GameMessage):
    """A seat's step was completed for it: its deadline passed, or an admin passed it."""

    kind: ClassVar[MailKind] = MailKind(
        "auto_passed", NOTICE, required=("game_name", "player_name"), dedupe="game:{game_id}:auto-pass:{version}"
    )

    player_name: str
    #: ``deadline``, or the admin who passed the step (an audit actor, ``host`` or ``site admin …``).
    reason: str
    defending: bool
    #: The game's version the pass made.
    version: int


class HostAlert(GameMessage):
    """To the host: a player missed ``auto_passes`` turns in a row."""

    kind: ClassVar[MailKind] = MailKind(
        "host_alert",
        NOTICE,
        required=("game_name", "player_name", "auto_passes"),
        audience=HOST,
        dedupe="game:{game_id}:alert:{seat}:{auto_passes}",
    )

    #: The player who missed their turns, in ``seat``.
    player_name: str
    auto_passes: int
    admin_url: str
    seat: int
    #: The host is that player: the mail says "you".
    yourself: bool = False


class GameOver(GameMessage):
    """The final table, to one seat (ARCHITECTURE §4, "End of game"): every coin count is public now."""

    kind: ClassVar[MailKind] = MailKind(
        "game_over",
        ESSENTIAL,
        required=("game_name", "player_name", "standings"),
        dedupe="game:{game_id}:over:{your_seat}",
    )

    player_name: str
    standings: list[Standing]
    seed: str
    your_seat: int

    def _add_values(self, values: dict[str, Any]) -> None:
        """The table in seat order of places, the verdict, and how a tie was broken."""
        places: dict[int, int] = {}
        for row in self.standings:
            places[row["place"]] = places.get(row["place"], 0) + 1
        rows = [
            dict(
                row,
                you=row.get("player") == self.your_seat,
                shared=places[row["place"]] > 1,
                name=row.get("name") or "?",
            )
            for row in sorted(values["standings"], key=lambda r: (r["place"], r.get("player", 0)))
        ]
        values["rows"] = rows
        values["your_row"] = next((r for r in rows if r["you"]), None)
        winners = [r for r in rows if r["place"] == 1]
        names = _and([w["name"] for w in winners])
        top = winners[0]
        if len(winners) > 1:
            values["verdict"] = (
                f"{names} share the victory with {top['coins']} coins each and {top['tokens_on_board']} race tokens "
                "on the map each: the tie-break could not part them."
            )
            values["verdict_short"] = f"{names} share the victory"
        else:
            values["verdict"] = f"{top['name']} wins with {top['coins']} coins."
            values["verdict_short"] = f"{top['name']} wins"
        tied = [r for r in rows if r["coins"] == top["coins"]]
        if len(tied) > 1 and len(winners) == 1:
            others = [r for r in tied if r is not top]
            values["tie_break_note"] = (
                f"Tie-break: {_and([r['name'] for r in tied])} {'both' if len(tied) == 2 else 'all'} had "
                f"{top['coins']} coins; the tie goes to the most race tokens on the map (Active and In Decline): "
                f"{top['name']} had {top['tokens_on_board']}, "
                + _and([f"{r['name']} {r['tokens_on_board']}" for r in others])
                + "."
            )
        elif any(r["tie_break"] for r in rows if r["place"] != 1):
            values["tie_break_note"] = (
                "Players with the same coins are ranked by race tokens on the map (Active and In Decline)."
            )
        values["table_text"] = _table(rows)


def _table(rows: list[dict[str, Any]]) -> str:
    width = max(6, *(len(r["name"]) + (6 if r["you"] else 0) for r in rows))
    lines = [f"  {'Place':<6} {'Player':<{width}} {'Coins':>5}  Tokens on the map"]
    for r in rows:
        place = ordinal(r["place"]) + ("=" if r["shared"] else "")
        name = r["name"] + (" (you)" if r["you"] else "")
        lines.append(f"  {place:<6} {name:<{width}} {r['coins']:>5}  {r['tokens_on_board']:>5}")
    return "\n".join(lines)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


#: What an :class:`OrdersAnswer` answers: orders carried out (or refused), a reply to a step that was over,
#: a reply to a game that is not running, a reply without an order in it, a reply for a seat the house bot
#: plays now.
Answered = Literal["orders", "late", "not_running", "no_orders", "bot_seat"]
#: The step a reply answered, that ended before all of the reply was carried out: a defender's redeployment,
#: or the seat's turn.
StepOver = Literal["redeployment", "turn"]


@dataclass(frozen=True)
class Replying:
    """A person's mail an answer replies to (RFC 5322 §3.6.4): its ``Message-ID``, the ``References`` of the
    answer (the mail's own, then its ``Message-ID``) and the answer's ``Subject`` (``Re:`` once, then the
    mail's subject without its own ``Re:``, ``AW:``, ``RE:`` prefixes).

    >>> Replying.to("<a@x>", ["<root@x>"], "Re: AW: Your turn").subject
    'Re: Your turn'
    """

    message_id: str
    references: tuple[str, ...]
    subject: str

    @classmethod
    def to(cls, message_id: str, references: Sequence[str], subject: str) -> Replying:
        bare = REPLY_PREFIX.sub("", " ".join(subject.split()))
        return cls(message_id, (*[r for r in references if r != message_id], message_id), f"Re: {bare}".strip())


class OrdersAnswer(GameMessage):
    """The answer to a reply with orders (ARCHITECTURE §10): what was done, the order that failed and why, the
    legal actions from there, the board as it stands; to the seat's own address, never the ``From`` of the
    mail answered."""

    kind: ClassVar[MailKind] = MailKind(
        "orders_answer",
        ESSENTIAL,
        required=("game_name", "player_name"),
        replies=ORDERS,
        dedupe="inbound:{inbound_id}:answer",
    )

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
    #: What the seat may do now, as orders (empty when nothing is awaited from it), and each region it may
    #: conquer, with its cost and holder (``rules.orders.conquests``).
    orders: list[str] = []
    conquests: list[str] = []
    #: The grammar in a line or two, when the mail had no order to read.
    grammar: list[str] = []
    #: The step the seat is awaited for now (its reply address), or None.
    step_key: str | None = None
    #: The reader's own coins (theirs only, ARCHITECTURE §4).
    coins: int | None = None
    board: Board | None = None
    turn: int
    turns: int
    #: The player's mail answered: its ``Message-ID``, its ``References`` and its subject, as they were read
    #: (``service.domain.inbound``), so that the answer replies to it (:attr:`replying_to`).
    their_message_id: str | None = None
    their_references: list[str] = []
    their_subject: str | None = None
    #: The address the mail came from, when it is not the seat's own (ARCHITECTURE §10: the reply address is
    #: the credential; the seat's owner is told who used it). The answer then follows the game's thread.
    sent_by: str | None = None

    @property
    def replying_to(self) -> Replying | None:
        if not self.their_message_id:
            return None
        return Replying.to(self.their_message_id, self.their_references, self.their_subject or self.game_name)


#: What became of a reply to an invitation: the seat accepted; no "yes" read in it (it is told how); the
#: invitation no longer open (accepted before, the game started, cancelled, the seat changed hands); a reply
#: from another address than the one invited (only the invited address accepts by mail).
InvitationOutcome = Literal["accepted", "how", "closed", "other_address"]


class InvitationAnswer(GameMessage):
    """The answer to a reply to an invitation (ARCHITECTURE §10): the seat taken, or why not and how; to the
    invited address, never the ``From`` of the mail answered."""

    kind: ClassVar[MailKind] = MailKind(
        "invitation_answer",
        ESSENTIAL,
        required=("game_name", "player_name"),
        dedupe="inbound:{inbound_id}:invitation",
    )

    player_name: str
    seat: int
    #: The inbound mail answered (``InboundMail.id``): one answer per mail.
    inbound_id: int
    outcome: InvitationOutcome
    #: The address the reply came from, when it is not the invited one.
    sent_by: str | None = None
    #: Every seat has accepted: the game starts (its first turn mail follows).
    started: bool = False
    #: The reply's first line, when no "yes" was read in it.
    first_line: str | None = None
    #: The site's page on how a game goes and how to play it by mail.
    guide_url: str


class NotRead(Message):
    """The answer to a mail that came to an address the service does not read (ARCHITECTURE §10): what it
    reads, and how to play. To the mail's ``From``, at most a few an hour (``InboundSettings``)."""

    kind: ClassVar[MailKind] = MailKind(
        "not_read", ESSENTIAL, required=("address",), audience=ADDRESS, dedupe="inbound:{inbound_id}:not-read"
    )

    #: The address the mail came to.
    address: str
    inbound_id: int
    #: The site's page on how a game goes and how to play it by mail.
    guide_url: str
    #: It was a reply address of ours that no longer works (its seat changed hands, or its player signed out
    #: everywhere since).
    expired: bool = False


class OperatorForward(Message):
    """A mail to ``postmaster@`` or ``abuse@`` the inbound domain, forwarded to the operator's address
    (``SMALLWORLD_OPERATOR_EMAIL``; RFC 2142): who sent it, when, and its text."""

    kind: ClassVar[MailKind] = MailKind(
        "operator_forward",
        ESSENTIAL,
        required=("address", "sender"),
        audience=ADDRESS,
        dedupe="inbound:{inbound_id}:forward",
    )

    #: The address the mail came to (``postmaster@…``, ``abuse@…``).
    address: str
    sender: str
    #: The forwarded mail's subject (``subject`` is the forward's own).
    their_subject: str
    received_at: str
    #: Its text (the plain-text part, else its HTML as text), cut at :data:`FORWARDED_CHARS`.
    text: str
    inbound_id: int
    #: The site admins' list of games (``/admin/games``).
    admin_url: str


#: The characters of a forwarded mail's text that reach the operator.
FORWARDED_CHARS = 20_000


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

    kind: ClassVar[MailKind] = MailKind(
        "bounce_alert",
        ESSENTIAL,
        required=("game_name", "player_name", "address", "admin_url"),
        audience=HOST,
        dedupe="game:{game_id}:bounce:{seat}:{inbound_id}",
    )

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


class SeatToBot(GameMessage):
    """To a seat's player: the house bot plays their seat from now on (the host gave it the seat, or they
    missed ``missed`` turns in a row), and the link to take it back. Essential: it is how they get their
    seat back, and no turn mail comes while the bot plays it (ARCHITECTURE §10)."""

    kind: ClassVar[MailKind] = MailKind(
        "seat_to_bot",
        ESSENTIAL,
        required=("game_name", "player_name", "take_back_url"),
        dedupe="game:{game_id}:seat-to-bot:{event}",
    )

    player_name: str
    seat: int
    #: Why, in words for the player: ``"the host gave it the seat"``, ``"you missed 3 turns in a row"``...
    reason: str
    #: The seat's link: its turn page has the button that takes the seat back.
    take_back_url: str
    #: The audit entry of the change: one mail per change.
    event: int


class TableTalk(GameMessage):
    """A message written at the game's table (ARCHITECTURE §9), to one other seat (``seat``) who wants it."""

    kind: ClassVar[MailKind] = MailKind(
        "table_talk",
        TALK,
        required=("game_name", "player_name", "author", "text"),
        replies=AT_THE_TABLE,
        dedupe="game:{game_id}:talk:{talk_id}:{seat}",
    )

    #: The reader.
    player_name: str
    seat: int
    #: The message: who wrote it (their seat's name then), when, and its text as written (plain text or the
    #: small Markdown subset of ``emails.table_talk``).
    author: str
    text: str
    posted_at: Instant
    talk_id: int

    def _add_values(self, values: dict[str, Any]) -> None:
        # The message's HTML is cleaned by emails.table_talk (an allow-list): it goes into the mail as it is.
        values["text_html"] = Markup(message_html(self.text))
        values["excerpt"] = excerpt(self.text, 60)
        values["posted_local"] = times.local_time(self.posted_at, values["time_zone"])


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

    kind: ClassVar[MailKind] = MailKind(
        "daily_digest", DIGEST, required=("player_name", "local_date"), dedupe="digest:{player_id}:{local_date}"
    )

    player_name: str
    player_id: int
    #: The reader's local day, ``YYYY-MM-DD``: one digest per address and day.
    local_date: str
    games: list[DigestGame]
    talk: list[DigestTalk]
    #: Messages left out of ``talk`` (it holds the latest few only).
    more_talk: int = 0

    def _add_values(self, values: dict[str, Any]) -> None:
        tz = values["time_zone"]
        day = datetime.fromisoformat(self.local_date)
        values["day"] = f"{day:%A} {day.day} {day:%B %Y}"
        games = []
        for game in values["games"]:
            at = times.parse(game.get("deadline_at"))
            games.append(dict(game, deadline=times.local_time(at, tz) if at else None))
        values["game_rows"] = games
        talk = []
        for said in values["talk"]:
            at = times.parse(said.get("posted_at"))
            talk.append(dict(said, at=times.local_time(at, tz) if at else "", html=Markup(message_html(said["text"]))))
        values["talk_rows"] = talk
        # The digest says itself that its links are personal (of several games, not of one).
        values["personal_link"] = False


#: What an :class:`AdminChange` announces.


class AdminChange(GameMessage):
    """An admin act (or a player's vacation) announced to a player; or, with ``change="outage"``, the
    deadline sweep's notice that the service was away and the deadline moved."""

    kind: ClassVar[MailKind] = MailKind("admin_change", NOTICE, required=("game_name", "player_name", "change"))

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

    def _add_values(self, values: dict[str, Any]) -> None:
        """The act in words, as ``emails.admin_acts`` tells it to this reader."""
        kind = admin_acts.CHANGES[self.change]
        act = admin_acts.AdminAct(kind, self.actor, self.details, deadline=times.parse(values["deadline_at"]))
        reader = admin_acts.Reader("mail", names=self.names or (), viewer=self.seat, time_zone=values["time_zone"])
        values["change_title"] = admin_acts.title(kind)
        values["change_text"] = admin_acts.told(act, reader)


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
        InvitationAnswer,
        NotRead,
        OperatorForward,
    )
}


#: The category of each kind of mail, by template name (a row of an unknown kind is essential: it is never
#: skipped for a reader's choices, it fails).
CATEGORIES: dict[str, str] = {template: kind.kind.category for template, kind in KINDS.items()}

#: Fields that rows written by earlier releases hold and that no message has now; they are dropped as the row
#: is read. ``turn_url``: the reader's seat link, minted since when the mail is sent (``game_url``), as the
#: seat and its player's ``links_serial`` are then.
RETIRED = frozenset({"turn_url"})


def from_json(template: str, context: Mapping[str, Any]) -> Message:
    """The message an outbox row stores: its template name and its fields as JSON.

    Raises :class:`MessageError`, naming what is wrong, when they do not make a valid message. The
    :data:`RETIRED` fields of a row written by an earlier release are ignored.

    >>> step = dict(game_id=7, game_name="Friday", player_name="Ann", deadline_at="2026-03-03T13:00:00+00:00",
    ...             step_key="4:1:-", before_seconds=3600, defending=False, turn=4, turns=10, seat=1,
    ...             orders=[], conquests=[])
    >>> from_json("reminder", {**step, "turn_url": "https://smallworld.example/play/old"}).context() == step
    True
    """
    kind = KINDS.get(template)
    if kind is None:
        raise MessageError(f"unknown message {template!r}")
    if not isinstance(context, Mapping):
        raise MessageError(f"{template}: the context is not a JSON object")
    if any(key in context for key in RETIRED):
        context = {key: value for key, value in context.items() if key not in RETIRED}
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
