"""Deadlines as a player reads them: in their own time zone, and as time remaining (ARCHITECTURE §5).

Times are stored in UTC; a mail shows the player's local time (``Player.time_zone``, an IANA name) and how
long is left, counted from the moment the mail was written, which is also its ``Date`` header.

>>> from datetime import UTC, datetime
>>> at = datetime(2026, 3, 3, 13, 0, tzinfo=UTC)
>>> local_time(at, "Europe/Paris")
'Tuesday 3 March 2026, 14:00 CET (Europe/Paris)'
>>> local_time(at, "UTC")
'Tuesday 3 March 2026, 13:00 UTC'
>>> time_left(at - datetime(2026, 3, 1, 11, 30, tzinfo=UTC))
'2 days 1 hour'
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def zone(name: str | None) -> ZoneInfo:
    """The zone called ``name``; UTC for an unknown or empty name (a mail must still go out)."""
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def parse(value: str | datetime | None) -> datetime | None:
    """An aware datetime from an ISO 8601 string (outbox contexts are JSON) or a datetime."""
    if value is None or value == "":
        return None
    at = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def local_time(at: datetime, time_zone: str | None) -> str:
    """``at`` in the reader's zone, day spelled out, 24-hour clock, with the zone named."""
    tz = zone(time_zone)
    local = at.astimezone(tz)
    abbreviation = local.strftime("%Z")
    # Zones without a letter abbreviation (e.g. America/Sao_Paulo gives "-03") get the UTC offset.
    if not abbreviation.isalpha():
        offset = local.strftime("%z")
        abbreviation = f"UTC{offset[:3]}:{offset[3:]}"
    text = f"{local:%A} {local.day} {local:%B %Y}, {local:%H:%M} {abbreviation}"
    if tz.key != "UTC":
        text += f" ({tz.key})"
    return text


def time_left(remaining: timedelta) -> str:
    """A duration in the two largest units that matter ("2 days 1 hour", "45 minutes")."""
    seconds = int(remaining.total_seconds())
    if seconds <= 0:
        return "no time: the deadline has passed"
    if seconds < 60:
        return "less than a minute"
    minutes = seconds // 60
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [(days, "day"), (hours, "hour"), (minutes, "minute")]
    words = [f"{n} {unit}{'' if n == 1 else 's'}" for n, unit in parts if n]
    if days:  # minutes do not matter against days
        words = [w for w in words if "minute" not in w]
    return " ".join(words[:2])


def left_words(remaining: timedelta) -> str:
    """The time left before a deadline as every page, mail, feed and chat line says it (issue 35: one form),
    and as the pages' script (``pages.js``) keeps saying it while it ticks.

    >>> left_words(timedelta(days=1, hours=23, minutes=10)), left_words(timedelta(0))
    ('1 day 23 hours left', 'the deadline has passed')
    """
    if remaining.total_seconds() <= 0:
        return "the deadline has passed"
    return f"{time_left(remaining)} left"


def duration(seconds: int | float) -> str:
    """A length of time set by the host ("48 hours", "12 hours", "2 days 6 hours", "30 minutes").

    >>> duration(48 * 3600), duration(12 * 3600), duration(54 * 3600), duration(1800)
    ('48 hours', '12 hours', '2 days 6 hours', '30 minutes')
    """
    seconds = int(seconds)
    if seconds % 3600 == 0 and seconds <= 48 * 3600:
        hours = seconds // 3600
        return f"{hours} hour{'' if hours == 1 else 's'}"
    return time_left(timedelta(seconds=seconds))
