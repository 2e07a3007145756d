"""Named service-wide timestamps, such as the time of the last deadline sweep."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session

from service.domain.models import ServiceStatus

LAST_DEADLINE_SWEEP = "last_deadline_sweep"


def recorded_at(session: Session, name: str) -> datetime | None:
    """When ``name`` was last recorded, or ``None`` if it never was."""
    status = session.get(ServiceStatus, name)
    return status.at if status else None


def record(session: Session, name: str, at: datetime) -> None:
    """Record that ``name`` happened at ``at`` (in the session; the caller commits)."""
    session.merge(ServiceStatus(name=name, at=at))
