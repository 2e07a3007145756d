"""The retention sweep with real parts: PostgreSQL, a ``smallworld worker`` on Redis, the hourly task beat
sends (``worker.tasks.housekeeping.purge_old_mail``) with the retention the worker's environment sets
(``SMALLWORLD_MAIL_RETENTION_DAYS=7``). A row another transaction holds is passed over, not waited for: the
sweep purges the rest, and the held row at the next sweep."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import select

from service.domain.models import InboundMail, MailStatus, OutboxMail, utcnow
from service.infra.db import get_engine, get_session
from service.infra.schedule import beat_schedule
from tests.worker.conftest import WorkerStack
from worker.tasks.housekeeping import PURGE_OLD_MAIL

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.processes]


WORKER_STACK = {"MAIL_RETENTION_DAYS": 7}


def test_beat_sends_the_retention_sweep_hourly_whatever_the_sweeps_period() -> None:
    entry = beat_schedule(1)["purge-old-mail"]
    assert entry["task"] == PURGE_OLD_MAIL and entry["schedule"] == timedelta(hours=1)


def test_the_worker_purges_mail_older_than_the_retention_and_passes_over_a_held_row(stack: WorkerStack) -> None:
    with stack.session():
        session = get_session()
        for age, address in ((8, "old@example.org"), (9, "held@example.org"), (6, "young@example.org")):
            session.add(
                OutboxMail(
                    to_email=address,
                    template="your_turn",
                    context={"game_name": "A game"},
                    message_id=f"<retention-{address}>",
                    status=MailStatus.SENT,
                    created_at=utcnow() - timedelta(days=age),
                )
            )
            session.add(
                InboundMail(
                    message_key=address.ljust(64, "x"),
                    via="smtp",
                    kind="orders",
                    sender=address,
                    received_at=utcnow() - timedelta(days=age),
                )
            )
        session.commit()
        held = session.exec(select(OutboxMail.id).where(OutboxMail.to_email == "held@example.org")).one()

    with get_engine(stack.app).connect() as other:
        other.execute(sa.select(OutboxMail.id).where(OutboxMail.id == held).with_for_update())  # type: ignore[arg-type]
        first = stack.run(PURGE_OLD_MAIL)
    second = stack.run(PURGE_OLD_MAIL)

    assert first == {"mails": 1, "inbound": 2, "failed": 0}
    assert second == {"mails": 1, "inbound": 0, "failed": 0}
    with stack.session():
        session = get_session()
        kept = {row.to_email: row.body_purged_at is None for row in session.exec(select(OutboxMail)).all()}
        assert kept == {"old@example.org": False, "held@example.org": False, "young@example.org": True}
        assert session.exec(select(InboundMail.sender)).all() == ["young@example.org"]
