"""The audit log in words (admin acts and vacations: ``service.domain.models.AuditEntry``), for the game page that
every player sees and for the admin page.

Players read who did what without the site admins' or the players' addresses; the admin page shows them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from emails import times
from service.domain.schemas import AuditOut

#: The outbox's templates, as a reader names those mails.
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


@dataclass(frozen=True)
class AuditLine:
    at: datetime
    #: When, in the reader's time zone ("Tue 3 Mar 14:00").
    when: str
    words: str


def audit_lines(
    audit: Iterable[AuditOut], zone: ZoneInfo, names: Sequence[str], *, for_admins: bool = False
) -> list[AuditLine]:
    """Newest first."""
    lines = [
        AuditLine(
            at=entry.at,
            when=f"{entry.at.astimezone(zone):%a %-d %b %Y %H:%M}",
            words=describe(entry.actor, entry.act, entry.details, zone, names, for_admins=for_admins),
        )
        for entry in audit
    ]
    return sorted(lines, key=lambda line: line.at, reverse=True)


def who(actor: str, names: Sequence[str], *, for_admins: bool = False) -> str:
    if actor == "host":
        return "The host"
    if actor.startswith("site admin"):
        return f"Site admin {actor.removeprefix('site admin').strip()}" if for_admins else "A site admin"
    if actor.startswith("seat ") and actor[5:].isdigit():
        return _seat_name(int(actor[5:]), names)
    if actor == "system":
        return "The service"
    return actor


def describe(
    actor: str,
    act: str,
    details: Mapping[str, Any],
    zone: ZoneInfo,
    names: Sequence[str],
    *,
    for_admins: bool = False,
) -> str:
    """One audit entry as a sentence ("The host extended the deadline to Tue 3 Mar 14:00 (Europe/Paris).")."""
    subject = who(actor, names, for_admins=for_admins)
    seat = details.get("seat")
    seat_name = _seat_name(seat, names) if isinstance(seat, int) else "a player"

    def when(key: str) -> str:
        at = times.parse(details.get(key))
        return times.local_time(at, zone.key) if at else "a later time"

    def left() -> str:
        seconds = details.get("remaining_seconds")
        return f" with {times.time_left(timedelta(seconds=seconds))} left on the clock" if seconds else ""

    if act == "extend":
        text = f"moved the deadline to {when('to')}"
    elif act == "pause":
        text = f"paused the game{left()}: {details.get('reason') or 'no reason given'}"
    elif act == "resume":
        text = f"resumed the game{left()}"
    elif act == "pass":
        text = f"passed {seat_name}'s turn"
    elif act == "settings":
        text = f"changed the settings: {settings_words(details)}"
    elif act == "replace":
        text = f"gave seat {int(seat or 0) + 1} ({details.get('from') or 'a player'}) to {details.get('to')}"
    elif act == "remove":
        text = f"removed {seat_name}: their turns are passed automatically"
    elif act == "cancel":
        reason = details.get("reason")
        text = "cancelled the game" + (f": {reason}" if reason else "")
    elif act == "vacation":
        text = f"took {details.get('days')} day(s) of vacation; the deadline is now {when('until')}"
    elif act == "bot":
        text = f"gave {seat_name}'s seat to the house bot, which plays it until its player takes it back"
    elif act == "unbot":
        text = "took their seat back from the house bot"
    elif act == "chat":
        service = details.get("service")
        text = f"connected the game to a chat ({service})" if service else "disconnected the game's chat"
    elif act == "watching":
        if "public" in details:
            text = (
                "made the game public: anyone may watch it (the board and the steps, never a player's coins)"
                if details["public"]
                else "made the game private: only those with its watch link may watch it"
            )
        else:
            text = "made a new watch link: the ones shared before no longer work"
    elif act == "resend":
        mail = MAIL_NAMES.get(str(details.get("template")), "mail")
        text = f"sent a failed {mail} again" + (f" (to {details.get('to')})" if for_admins else "")
    else:
        text = f"did “{act}”"
    return f"{subject} {text}."


def settings_words(details: Mapping[str, Any]) -> str:
    parts = []
    for key, value in details.items():
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
            parts.append(f"vacation allowance {value} day(s) per player")
    return "; ".join(parts) or "nothing"


def _seat_name(seat: int, names: Sequence[str]) -> str:
    return names[seat] if 0 <= seat < len(names) else f"the player in seat {seat + 1}"
