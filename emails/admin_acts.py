"""An admin act in words: the one writer of every sentence that tells who changed a game, and how.

An act (the host's or a site admin's: a deadline moved, a pause, a seat given away…; a player's own: a
vacation, a resignation; the service's: a deadline moved by an outage) is told to four audiences:

- ``log``: the game's audit log, on the game page every player sees and on the admin page
  (``service.web.admin_pages.audit_log``); the admin page alone names a site admin and a mail's address;
- ``story``: the game's history and each "your turn" mail's "Since your last turn" (``service.domain.story``),
  told to one seat ("you"), without times (the story has no reader's time zone);
- ``chat``: the game's chat (``service.domain.chat_notices``), read by people we do not know, times in UTC;
- ``mail``: the ``admin_change`` mail to the players concerned (``emails.render``), in the reader's time zone.

Story, chat and the players' log are public (ARCHITECTURE §4): an actor is told by role ("The host", "A site
admin"), never by address; no link, no coin. The mail goes to one player, and says no more than the chat.

Each act is one row of :data:`ACTS`: its title (a chat notice's and a mail's subject), the past-tense phrase
told for an act logged before its details were kept, the mail's ``change`` that names it
(``emails.messages.Change``), the audiences it is told to, and its sentence. An act is never told to an
audience it does not list, nor is an unknown act ever given a sentence by default for the public.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from emails import times

Audience = Literal["log", "story", "chat", "mail"]
AUDIENCES: tuple[Audience, ...] = ("log", "story", "chat", "mail")
EVERYONE = frozenset(AUDIENCES)
LOG_ONLY = frozenset({"log"})

#: How an ``admin_change`` mail names the act it announces (``Act.change``; kept in the mails' stored context).
Change = Literal[
    "deadline_extended",
    "paused",
    "resumed",
    "settings",
    "player_replaced",
    "player_removed",
    "cancelled",
    "vacation",
    "outage",
    "resigned",
]


@dataclass(frozen=True)
class AdminAct:
    """One act: its kind (``AuditEntry.act``), who did it (``AuditEntry.actor``: "host", "site admin a@b.org",
    "seat 2", "system"; ``None`` for a story entry logged without it) and its details (``AuditEntry.details``)."""

    kind: str
    actor: str | None
    details: Mapping[str, Any]
    #: The game's deadline after the act (the chat's "Deadline: …" after a resume; an outage's new deadline).
    deadline: datetime | None = None
    #: The seats the game waited for when the act came (the story's "moved Cy's deadline").
    awaited: Sequence[int] = ()


@dataclass(frozen=True)
class Reader:
    """Who reads, and what they may see."""

    audience: Audience
    #: The seats' names, in seat order.
    names: Sequence[str] = ()
    #: The reader's seat, told "you" (the story's reader; the mail's, when seated).
    viewer: int | None = None
    time_zone: str = "UTC"
    #: The admin page's log: a site admin and a mail's address are named.
    for_admins: bool = False


@dataclass(frozen=True)
class _Told:
    """An act as one sentence is built from it: the act, the reader, and the words every sentence shares."""

    act: AdminAct
    reader: Reader

    @property
    def details(self) -> Mapping[str, Any]:
        return self.act.details

    @property
    def audience(self) -> Audience:
        return self.reader.audience

    def seat(self, seat: Any) -> str:
        return seat_words(seat, self.reader.names, self.reader.viewer)

    def their(self, seat: Any) -> str:
        return "your" if isinstance(seat, int) and seat == self.reader.viewer else "their"

    def when(self, at: str | datetime | None) -> str:
        moment = times.parse(at)
        return times.local_time(moment, self.reader.time_zone) if moment else "a later time"

    def left(self) -> str:
        seconds = self.details.get("remaining_seconds")
        return f" with {times.time_left(timedelta(seconds=seconds))} left on the clock" if seconds else ""

    def reason(self) -> str:
        reason = str(self.details.get("reason") or "").strip()
        return f": {reason}" if reason else ""


# -- who acted ---------------------------------------------------------------------------------------------
def who(
    actor: str | None,
    names: Sequence[str] = (),
    *,
    viewer: int | None = None,
    for_admins: bool = False,
    capital: bool = True,
) -> str:
    """Who did an act (or passed a turn), as the reader reads it: by role, never by address, except a site
    admin on the admin page.

    >>> who("host"), who("site admin boss@example.org"), who("seat 1", ["Ann", "Bob"]), who("system")
    ('The host', 'A site admin', 'Bob', 'The service')
    >>> who("seat 1", ["Ann", "Bob"], viewer=1), who("seat 4", capital=False)
    ('You', 'the player in seat 5')
    >>> who("site admin boss@example.org", for_admins=True)
    'Site admin boss@example.org'
    """
    actor = actor or ""
    if actor == "host":
        words = "the host"
    elif actor.startswith("site admin"):
        address = actor.removeprefix("site admin").strip()
        words = f"site admin {address}" if for_admins and address else "a site admin"
    elif actor.startswith("seat ") and actor[5:].isdigit():
        words = seat_words(int(actor[5:]), names, viewer)
    elif actor == "system":
        words = "the service"
    else:
        words = actor if for_admins and actor else "an admin"
    return words[:1].upper() + words[1:] if capital else words


def seat_words(seat: Any, names: Sequence[str], viewer: int | None = None) -> str:
    """A seat as the reader names it: "you", its player's name, or "the player in seat 3"."""
    if not isinstance(seat, int) or seat < 0:
        return "a player"
    if seat == viewer:
        return "you"
    return names[seat] if seat < len(names) else f"the player in seat {seat + 1}"


# -- each act's sentence (without its actor) ---------------------------------------------------------------
def _extend(told: _Told) -> str:
    if told.audience == "story":  # the story tells no times: whose deadline moved
        awaited = sorted(told.act.awaited)
        whose = ", ".join("your" if s == told.reader.viewer else f"{told.seat(s)}'s" for s in awaited) or "the"
        return f"moved {whose} deadline"
    return f"moved the deadline to {told.when(told.details.get('to'))}"


def _pause(told: _Told) -> str:
    return f"paused the game{told.left()}{told.reason()}"


def _resume(told: _Told) -> str:
    # As for an outage: the chat says the deadline the mail shows in its box.
    deadline = f". Deadline: {told.when(told.act.deadline)}" if told.audience == "chat" else ""
    return f"resumed the game{told.left()}{deadline}"


def _settings(told: _Told) -> str:
    return f"changed the game's settings: {settings_words(told.details)}"


def _replace(told: _Told) -> str:
    seat = told.details.get("seat")
    number = f"seat {seat + 1}" if isinstance(seat, int) else "a seat"
    return f"gave {number} ({told.details.get('from') or 'a player'}) to {told.details.get('to') or 'a new player'}"


def _remove(told: _Told) -> str:
    seat = told.details.get("seat")
    return f"removed {told.seat(seat)} from the game: {told.their(seat)} turns are passed automatically"


def _cancel(told: _Told) -> str:
    return f"cancelled the game{told.reason()}"


def _vacation(told: _Told) -> str:
    days = told.details.get("days")
    took = f"took {days:g} day(s) of vacation" if isinstance(days, int | float) else "took some vacation"
    if told.audience == "story":
        return took
    return f"{took}: the deadline is now {told.when(told.details.get('until'))}"


def _resign(told: _Told) -> str:
    their = told.their(told.details.get("seat"))
    then = (
        f"the house bot plays {their} seat"
        if told.details.get("then") == "bot"
        else f"{their} turns are passed automatically"
    )
    return f"resigned from the game: {then}"


def _outage(told: _Told) -> str:
    return (
        f"was unavailable from {told.when(told.details.get('from'))} to {told.when(told.details.get('to'))}. "
        "The deadline fell in that time, so it was pushed back by as long"
        # The chat has no deadline box under its text, as the mail has: it says the new deadline itself.
        + (f": it is now {told.when(told.act.deadline)}" if told.audience == "chat" else "")
    )


def _pass(told: _Told) -> str:
    return f"passed {told.seat(told.details.get('seat'))}'s turn"


def _bot(told: _Told) -> str:
    seat = told.seat(told.details.get("seat"))
    return f"gave {seat}'s seat to the house bot, which plays it until its player takes it back"


def _unbot(told: _Told) -> str:
    return "took their seat back from the house bot"


def _chat(told: _Told) -> str:
    service = told.details.get("service")
    return f"connected the game to a chat ({service})" if service else "disconnected the game's chat"


def _watching(told: _Told) -> str:
    if "public" not in told.details:
        return "made a new watch link: the ones shared before no longer work"
    if told.details["public"]:
        return "made the game public: anyone may watch it (the map and the steps, never a player's coins)"
    return "made the game private: only those with its watch link may watch it"


def _resend(told: _Told) -> str:
    mail = MAIL_NAMES.get(str(told.details.get("template")), "mail")
    return f"sent a failed {mail} again" + (f" (to {told.details.get('to')})" if told.reader.for_admins else "")


def _rematch(told: _Told) -> str:
    return "started a rematch: a new game with the same players and settings"


@dataclass(frozen=True)
class Act:
    """How one kind of act is told."""

    sentence: Callable[[_Told], str]
    audiences: frozenset[str] = LOG_ONLY
    #: A chat notice's and a mail's subject (after the game's name).
    title: str | None = None
    #: The mail's ``change`` (``emails.messages.Change``) that announces it.
    change: Change | None = None
    #: The story's sentence for the act logged before its actor and details were kept with it.
    plain: str | None = None
    #: Told by the service rather than by a person: the sentence names no actor.
    impersonal: bool = False
    #: How loud its chat notice is (apprise's type: "info", "warning", "failure").
    notify_type: str = "info"


#: Every act, by its kind (``AuditEntry.act``; the ``act`` of an ``admin`` or ``options`` event in the log).
ACTS: dict[str, Act] = {
    "extend": Act(_extend, EVERYONE, "the deadline moved", "deadline_extended", "The deadline was moved"),
    "pause": Act(_pause, EVERYONE, "the game is paused", "paused", "The game was paused", notify_type="warning"),
    "resume": Act(_resume, EVERYONE, "the game runs again", "resumed", "The game was resumed"),
    "settings": Act(_settings, EVERYONE, "the settings changed", "settings", "The game's settings were changed"),
    "replace": Act(_replace, EVERYONE, "a seat changed hands", "player_replaced", "A seat was given to a new player"),
    "remove": Act(
        _remove,
        EVERYONE,
        "a player was removed",
        "player_removed",
        "A player was removed from the game",
        notify_type="warning",
    ),
    "cancel": Act(
        _cancel, EVERYONE, "the game was cancelled", "cancelled", "The game was cancelled", notify_type="failure"
    ),
    "vacation": Act(_vacation, EVERYONE, "a player is on vacation", "vacation", "A player took some vacation"),
    "resign": Act(_resign, EVERYONE, "a player resigned", "resigned", "A player resigned"),
    # The deadline sweep's, after the service was away (ARCHITECTURE §5): neither audited nor in the log.
    "outage": Act(
        _outage, frozenset({"chat", "mail"}), "the deadline moved", "outage", impersonal=True, notify_type="warning"
    ),
    # Audited only: the game page's log tells them (a pass is told as the auto-pass it makes; a seat given to
    # the bot, by the mail to its player).
    "pass": Act(_pass),
    "bot": Act(_bot),
    "unbot": Act(_unbot),
    "chat": Act(_chat),
    "watching": Act(_watching),
    "resend": Act(_resend),
    "rematch": Act(_rematch),
}

#: The act each ``admin_change`` mail announces, by its ``change``.
CHANGES: dict[str, str] = {act.change: kind for kind, act in ACTS.items() if act.change is not None}


def told(act: AdminAct, reader: Reader) -> str:
    """``act`` in one sentence for ``reader``.

    >>> act = AdminAct("pause", "site admin boss@example.org", {"reason": "Upgrade", "remaining_seconds": 7200})
    >>> told(act, Reader("chat"))
    'A site admin paused the game with 2 hours left on the clock: Upgrade.'
    >>> told(act, Reader("log", for_admins=True))
    'Site admin boss@example.org paused the game with 2 hours left on the clock: Upgrade.'

    Raises ``ValueError`` for an act not told to that audience, and for an unknown act told to anyone but the
    admins' log (which names it as it was recorded).
    """
    kind = ACTS.get(act.kind)
    if kind is None:
        if reader.audience == "log":
            return f"{who(act.actor, reader.names, for_admins=reader.for_admins)} did “{act.kind}”."
        raise ValueError(f"no words for the act {act.kind!r}")
    if reader.audience not in kind.audiences:
        raise ValueError(f"the act {act.kind!r} is not told to the {reader.audience}")
    if act.actor is None and reader.audience == "story" and kind.plain is not None:
        return f"{kind.plain}."
    sentence = kind.sentence(_Told(act, reader))
    if kind.impersonal:
        return f"Small World by Mail {sentence}."
    subject = who(act.actor, reader.names, viewer=reader.viewer, for_admins=reader.for_admins)
    return f"{subject} {sentence}."


def title(kind: str) -> str:
    """The subject of ``kind``'s chat notice and mail ("the game is paused")."""
    words = ACTS[kind].title
    if words is None:
        raise ValueError(f"the act {kind!r} is told in the log only")
    return words


def settings_words(changes: Mapping[str, Any]) -> str:
    """The settings an act changed, with their new values.

    >>> settings_words({"turn_length_seconds": 172800, "reminders_before_seconds": [], "vacation_days": 3})
    'a turn lasts 48 hours; no reminders; 3 day(s) of vacation per player'
    """
    parts = []
    for key, value in changes.items():
        if key == "turn_length_seconds":
            parts.append(f"a turn lasts {times.duration(value)}")
        elif key == "defender_turn_length_seconds":
            parts.append(f"a redeployment after an attack lasts {times.duration(value)}")
        elif key == "reminders_before_seconds":
            listed = ", ".join(times.duration(v) for v in value) if value else None
            parts.append(f"reminders {listed} before the deadline" if listed else "no reminders")
        elif key == "redeploy":
            parts.append(
                "attacked players redeploy themselves"
                if value == "ask"
                else "attacked players' tokens are redeployed automatically"
            )
        elif key == "vacation_days":
            parts.append(f"{value} day(s) of vacation per player")
    return "; ".join(parts) or "nothing that changes the play"


#: The outbox's templates, as a reader names those mails (the log's "sent a failed … again", the admin page).
MAIL_NAMES = {
    "invitation": "invitation",
    "admin_link": "host link",
    "admin_login": "sign-in link",
    "your_turn": "your-turn mail",
    "redeploy_needed": "redeploy mail",
    "reminder": "reminder",
    "auto_passed": "auto-pass notice",
    "admin_change": "admin notice",
    "host_alert": "alert to the host",
    "game_over": "final table",
    "seat_to_bot": "house-bot notice",
}
