"""Request and response shapes of the JSON API (pydantic), kept apart from the table models.

The OpenAPI document at ``/api/openapi.json`` is generated from these.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema, field_validator, model_validator

from service.domain.models import GameStatus, MailStatus, NoticeStatus
from service.domain.text import known_zone, mail_address, printable_text
from service.infra.chat import check_chat_url

HOUR = 3600
#: The address of the player row that holds the seats the house bot has from a game's creation. ``.invalid``
#: (RFC 2606) can never receive mail; no mail is queued to a bot seat's address anyway.
HOUSE_BOT_EMAIL = "house-bot@smallworld.invalid"
#: The longest a player's name may be (characters), and a game's name.
NAME_LENGTH = 40
GAME_NAME_LENGTH = 60

#: A person's or a game's name, or a reason shown to the players: trimmed, printable, no invisible
#: characters (``service.domain.text.printable_text``).
PlayerName = Annotated[
    str,
    AfterValidator(lambda value: printable_text(value, longest=NAME_LENGTH)),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": NAME_LENGTH}),
]
GameName = Annotated[
    str,
    AfterValidator(lambda value: printable_text(value, longest=GAME_NAME_LENGTH)),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": GAME_NAME_LENGTH}),
]
Reason = Annotated[
    str,
    AfterValidator(lambda value: printable_text(value, longest=300, blank_ok=True)),
    WithJsonSchema({"type": "string", "maxLength": 300}),
]
#: An address this service can mail (``service.domain.text.mail_address``), in the form it is stored.
MailAddress = Annotated[
    str,
    AfterValidator(mail_address),
    WithJsonSchema({"type": "string", "format": "email", "maxLength": 254}),
]
#: An IANA time zone name such as ``Europe/Paris``.
TimeZone = Annotated[
    str, AfterValidator(known_zone), WithJsonSchema({"type": "string", "maxLength": 64, "example": "Europe/Paris"})
]
#: Reminder offsets and turn lengths are bounded by the longest turn (30 days).
LONGEST_TURN = 30 * 24 * HOUR

#: Every request model: unknown fields refused, and no type coercion (JSON ``true`` is not the seat 1,
#: ``"3"`` is not the number 3: what the OpenAPI document says is what is accepted).
REQUEST = ConfigDict(extra="forbid", strict=True)


class GameSettings(BaseModel):
    """A game's settings (ARCHITECTURE §1: turn length, reminders, house options)."""

    model_config = REQUEST

    turn_length_seconds: int = Field(48 * HOUR, ge=1, le=LONGEST_TURN, description="Time for one turn")
    defender_turn_length_seconds: int = Field(
        12 * HOUR, ge=1, le=7 * 24 * HOUR, description="Time for a defender's redeploy step (`ask` mode)"
    )
    reminders_before_seconds: list[Annotated[int, Field(ge=1, le=LONGEST_TURN)]] = Field(
        default_factory=lambda: [24 * HOUR, 2 * HOUR],
        max_length=5,
        description="Reminders this long before the deadline (those longer than the turn are skipped)",
    )
    redeploy: Literal["auto", "ask"] = Field("auto", description="Defenders' redeployment (ARCHITECTURE §4)")
    start_when_all_accepted: bool = Field(True, description="False: the game starts at once")
    auto_pass_alert_after: int = Field(2, ge=1, le=20, description="Consecutive auto-passes before the host hears")
    vacation_days: int = Field(7, ge=0, le=60, description="Vacation a player may take per game")
    resigned_seats: Literal["auto_pass", "bot"] = Field(
        "auto_pass",
        description="A seat whose player resigns: its steps passed at once (`auto_pass`), or played by the house "
        "bot (`bot`)",
    )
    bot_after_missed_turns: int = Field(
        3,
        ge=0,
        le=20,
        description="Missed turns in a row (auto-passes) after which the house bot plays the seat until its "
        "player takes it back; 0: never",
    )

    @field_validator("reminders_before_seconds")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        if any(v <= 0 for v in value):
            raise ValueError("reminder offsets are seconds before the deadline, greater than 0")
        return sorted(set(value), reverse=True)


class PlayerIn(BaseModel):
    """A seat the host proposes: the name is the seat's (the player may change it when accepting); a
    player's time zone is their own choice, made on their pages, so the host gives none."""

    model_config = REQUEST

    name: PlayerName = Field(description="The seat's name, as the host proposes it")
    email: MailAddress | None = Field(None, description="The player's address (none for a seat of the house bot)")
    bot: bool = Field(False, description="The house bot plays this seat (play against bots): no address, no invitation")

    @model_validator(mode="after")
    def _an_address_unless_a_bot(self) -> PlayerIn:
        if self.bot and self.email is not None:
            raise ValueError("email: a seat of the house bot has no address (leave email out, or bot false)")
        if not self.bot and self.email is None:
            raise ValueError("email: each player needs an address (or bot: true for a seat of the house bot)")
        return self

    @property
    def address(self) -> str:
        """The address the seat's player row has: the player's, or the house bot's."""
        return self.email or HOUSE_BOT_EMAIL


CHAT_URL = (
    "Where the game's notices go (whose turn, deadlines, admin acts, the final table; nothing private): an "
    "apprise URL such as discord://webhook_id/webhook_token. A secret, never shown back in full"
)


def _chat_url(value: str | None) -> str | None:
    """A chat address apprise can read and the site allows (``service.infra.chat``); empty: no chat."""
    if value is None or not value.strip():
        return None
    return check_chat_url(value)


class CreateGame(BaseModel):
    model_config = REQUEST

    name: GameName
    players: list[PlayerIn] = Field(min_length=2, max_length=5, description="In seat order; seat 0 plays first")
    host_email: MailAddress | None = Field(None, description="Who manages the game; default: the first player")
    host_time_zone: TimeZone | None = Field(
        None, description="The host's own time zone, applied when the host confirms the game"
    )
    settings: GameSettings = Field(default_factory=GameSettings)
    chat_url: str | None = Field(None, max_length=2000, description=CHAT_URL)

    @field_validator("chat_url")
    @classmethod
    def _readable_chat(cls, value: str | None) -> str | None:
        return _chat_url(value)

    @model_validator(mode="after")
    def _distinct(self) -> CreateGame:
        emails = [p.email for p in self.players if not p.bot]
        if len(set(emails)) != len(emails):
            raise ValueError("each player needs a different email address")
        if self.host_email is None and self.players[0].email is None:
            raise ValueError("host_email: needed when the first seat is the house bot's")
        return self

    @property
    def host(self) -> str:
        """The host's address: ``host_email``, or the first player's."""
        host = self.host_email or self.players[0].email
        assert host is not None  # _distinct
        return host


class SeatOut(BaseModel):
    seat: int
    name: str
    accepted: bool
    removed: bool = False
    bot: bool = Field(False, description="The house bot plays the seat, until its player takes it back")


class GameCreated(BaseModel):
    id: int
    status: GameStatus = Field(description="`unconfirmed` until the host confirms it; then `inviting` or `active`")
    admin_url: str | None = Field(
        None, description="The host's signed admin link, once the host confirmed the game (also mailed to them)"
    )
    seats: list[SeatOut]


class ConfirmGame(BaseModel):
    """The host's confirmation of a new game (bearer: the token at the end of the mailed confirmation link)."""

    model_config = REQUEST

    time_zone: TimeZone | None = Field(
        None, description="The host's own time zone (default: the one given on creation)"
    )


class AcceptInvitation(BaseModel):
    """Accepting an invitation, optionally under another name than the host proposed, and in one's time zone."""

    model_config = REQUEST

    name: PlayerName | None = Field(None, description="Your name in this game (default: the one the host gave)")
    time_zone: TimeZone | None = Field(None, description="Your time zone, for every game of yours and every mail")


class SubmitAction(BaseModel):
    model_config = REQUEST

    version: int = Field(ge=0, description="The game version the action was made against")
    action: dict[str, Any] = Field(description="One action (rules/README.md); `player` defaults to your seat")
    idempotency_key: str | None = Field(None, min_length=1, max_length=80)


class UndoRequest(BaseModel):
    model_config = REQUEST

    version: int = Field(ge=0)
    steps: int | None = Field(
        None, ge=1, description="How many of your latest steps to take back (`GET .../undo` lists them); all by default"
    )


class ExplainAction(BaseModel):
    model_config = REQUEST

    action: dict[str, Any] = Field(description="One action (rules/README.md); `player` defaults to your seat")
    board: bool = Field(False, description="Also give the map as you will see it after the step (no die)")


class AuditOut(BaseModel):
    at: datetime
    actor: str
    act: str
    details: dict[str, Any]


class GameView(BaseModel):
    id: int
    name: str
    status: GameStatus = Field(
        description="`unconfirmed`, `inviting`, `active`, `paused`, `ending` (over by the rules; the final table is "
        "being tallied and mailed, coins still hidden), `finished` or `cancelled`"
    )
    version: int
    you: int | None = Field(None, description="Your seat, or null for a spectator")
    seats: list[SeatOut]
    awaiting: list[int]
    deadline_at: datetime | None
    paused_remaining_seconds: int | None = None
    pause_reason: str | None = None
    state: dict[str, Any] | None = Field(description="rules.player_view for you (others' coins hidden)")
    seed: str | None = Field(None, description="Revealed when the game is finished (tallied)")
    result: list[dict[str, Any]] | None = Field(None, description="The final table, once the game is finished")
    audit: list[AuditOut] = Field(default_factory=list, description="Admin acts and vacations, oldest first")


class LegalActions(BaseModel):
    version: int
    actions: list[dict[str, Any]]
    previews: list[dict[str, Any] | None] = Field(
        default_factory=list,
        description="What each action of `actions` will do, in the same order, computed by the rules engine: "
        "one outcome, or one per value of the die; null for a choice still to make (a redeployment)",
    )


class StepOut(BaseModel):
    version: int
    replayed: bool = Field(False, description="True when this idempotency key was already applied")
    last: dict[str, Any] = Field(default_factory=dict, description="What the step did (die roll, score…)")
    game: GameView
    legal_actions: LegalActions | None = Field(
        None,
        description="What you may do next when the game awaits you again after this step, as "
        "`GET .../legal-actions` answers it (previews only with `?previews=true`); null when it awaits "
        "another seat, or is over",
    )


class Explained(BaseModel):
    """Whether an action is offered now, why not, its conquest cost and its preview."""

    version: int
    action: dict[str, Any]
    offered: bool
    reason: str | None
    cost: dict[str, Any] | None
    preview: dict[str, Any] | None
    board: dict[str, Any] | None = None


class RegionExplained(BaseModel):
    """What the caller may do on one region now, with previews, and why a conquest of it is not offered."""

    version: int
    region: int
    offered: list[Explained]
    conquest: Explained | None


class UndoStep(BaseModel):
    version: int = Field(description="The game version the step made")
    kind: str
    words: str = Field(description="The step in a sentence (rules.tell)")
    back: int = Field(description="The `steps` of an undo that takes back this step and those after it")


class UndoSteps(BaseModel):
    """The caller's steps an undo may take back now, latest first: undoing step k takes back it and every
    step listed before it."""

    version: int
    steps: list[UndoStep]


class HistoryEntry(BaseModel):
    version: int
    seat: int | None
    kind: str
    action: dict[str, Any] | None
    die: int | None
    undone: bool
    at: datetime


class History(BaseModel):
    entries: list[HistoryEntry]


class Accepted(BaseModel):
    game_id: int
    seat: int
    status: GameStatus
    turn_url: str = Field(description="This seat's signed link; also the bearer token of the JSON API")


class ErrorOut(BaseModel):
    error: str
    version: int | None = None


class ExtendDeadline(BaseModel):
    model_config = REQUEST

    hours: float | None = Field(
        None, gt=0, le=24 * 60, allow_inf_nan=False, description="Push the deadline back by this long"
    )
    to: datetime | None = Field(
        None, strict=False, description="Or set it to this moment (ISO 8601 with its time zone)"
    )

    @model_validator(mode="after")
    def _one(self) -> ExtendDeadline:
        if (self.hours is None) == (self.to is None):
            raise ValueError("give either 'hours' or 'to'")
        if self.to is not None and self.to.tzinfo is None:
            raise ValueError("'to' needs a time zone, e.g. 2026-12-01T18:00:00+01:00")
        return self


class PauseGame(BaseModel):
    model_config = REQUEST

    reason: Reason = Field(description="Shown to the players")

    @field_validator("reason")
    @classmethod
    def _given(cls, value: str) -> str:
        if not value:
            raise ValueError("say why the game is paused; the players will see it")
        return value


class ChangeSettings(BaseModel):
    model_config = REQUEST

    turn_length_seconds: int | None = Field(None, ge=1, le=LONGEST_TURN)
    defender_turn_length_seconds: int | None = Field(None, ge=1, le=7 * 24 * HOUR)
    reminders_before_seconds: list[Annotated[int, Field(ge=1, le=LONGEST_TURN)]] | None = Field(None, max_length=5)
    redeploy: Literal["auto", "ask"] | None = None
    vacation_days: int | None = Field(None, ge=0, le=60)


class ReplacePlayer(BaseModel):
    model_config = REQUEST

    seat: int = Field(ge=0, le=4)
    email: MailAddress
    name: PlayerName


class SeatRef(BaseModel):
    model_config = REQUEST

    seat: int = Field(ge=0, le=4)


class CancelGame(BaseModel):
    model_config = REQUEST

    reason: Reason = ""


class Vacation(BaseModel):
    model_config = REQUEST

    days: float = Field(gt=0, le=60, allow_inf_nan=False)


class MailOut(BaseModel):
    id: int
    to: str
    template: str
    status: MailStatus
    attempts: int
    last_error: str | None
    created_at: datetime
    sent_at: datetime | None


class SetChat(BaseModel):
    model_config = REQUEST

    chat_url: str | None = Field(max_length=2000, description=CHAT_URL + "; null or empty: no chat")

    @field_validator("chat_url")
    @classmethod
    def _readable_chat(cls, value: str | None) -> str | None:
        return _chat_url(value)


class SetWatching(BaseModel):
    """Who may watch the game (ARCHITECTURE §9): ``public`` to make it public or private; ``new_link`` to end every
    watch link shared so far."""

    model_config = REQUEST

    public: bool | None = Field(
        None, description="true: anyone may watch the game, and it is listed; false: only by link"
    )
    new_link: bool = Field(False, description="true: a new watch link; the ones shared before stop working")


class WatchingOut(BaseModel):
    public: bool = Field(description="Whether anyone may watch the game, and find it on the list of public games")
    watch_url: str = Field(description="The game's read-only watch link, to share")
    public_url: str | None = Field(description="Where anyone may watch the game, while it is public")


class NoticeOut(BaseModel):
    id: int
    kind: str
    title: str
    status: NoticeStatus
    attempts: int
    last_error: str | None
    created_at: datetime
    sent_at: datetime | None


class ChatOut(BaseModel):
    url: str | None = Field(description="The chat's address, masked (its secret parts are never shown)")
    service: str | None = Field(description="The chat service (Discord, Slack…)")
    notices: list[NoticeOut] = Field(default_factory=list, description="Failed first, then the newest")


class AdminGameView(BaseModel):
    game: GameView
    settings: GameSettings
    audit: list[AuditOut]
    outbox: list[MailOut]
    chat: ChatOut | None = None
