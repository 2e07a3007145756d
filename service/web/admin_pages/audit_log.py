"""The audit log in words (admin acts and vacations: ``service.domain.models.AuditEntry``), for the game page that
every player sees and for the admin page.

Each entry is told by ``emails.admin_acts``, the one writer of an act's words: players read who did what without
the site admins' or the players' addresses; the admin page shows them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from emails import admin_acts
from service.domain.schemas import AuditOut


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
    reader = admin_acts.Reader("log", names=names, time_zone=zone.key, for_admins=for_admins)
    lines = [
        AuditLine(
            at=entry.at,
            when=f"{entry.at.astimezone(zone):%a %-d %b %Y %H:%M}",
            words=admin_acts.told(admin_acts.AdminAct(entry.act, entry.actor, entry.details), reader),
        )
        for entry in audit
    ]
    return sorted(lines, key=lambda line: line.at, reverse=True)
