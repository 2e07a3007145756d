"""Named service-wide timestamps, such as the time of the last deadline sweep."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session, col

from service.domain.models import ServiceStatus
from service.infra.db import dialect_insert

LAST_DEADLINE_SWEEP = "last_deadline_sweep"
#: The deadline sweep's last full look for games left inviting (``service.domain.deadlines``), hourly.
LAST_FULL_INVITING_LOOK = "last_full_inviting_look"


def recorded_at(session: Session, name: str) -> datetime | None:
    """When ``name`` was last recorded, or ``None`` if it never was."""
    status = session.get(ServiceStatus, name)
    return status.at if status else None


def record(session: Session, name: str, at: datetime) -> None:
    """Record that ``name`` happened at ``at`` (in the session; the caller commits)."""
    session.merge(ServiceStatus(name=name, at=at))


def claim(session: Session, name: str, seen: datetime | None, at: datetime) -> bool:
    """Move ``name``'s time from ``seen`` (``None``: never recorded) to ``at`` in the caller's transaction,
    unless another transaction moved it first; whether this one did.

    Of two transactions claiming from the same ``seen``, one wins: on PostgreSQL the second waits for the
    first's commit, then finds the time moved (or the row there) and changes nothing.
    """
    if seen is None:
        insert = dialect_insert(session.get_bind().dialect.name, ServiceStatus)
        written = session.execute(insert.values(name=name, at=at).on_conflict_do_nothing(index_elements=["name"]))
    else:
        written = session.execute(
            sa.update(ServiceStatus)
            .where(col(ServiceStatus.name) == name, col(ServiceStatus.at) == seen)
            .values(at=at)
            .execution_options(synchronize_session=False)
        )
    return bool(written.rowcount == 1)  # type: ignore[attr-defined]
