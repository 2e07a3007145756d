"""The retention sweep (``service.domain.retention``): what mail carried goes after the retention period, the
rows stay; what is young or still to send stays whole; one bad row never stops the sweep."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from service.domain import admin, retention
from service.domain.errors import Conflict
from service.domain.models import InboundMail, MailStatus, OutboxMail, utcnow
from tests.factories import GameFactory, InboundMailFactory, OutboxMailFactory

DAYS = 30


def _mail(age_days: float, status: MailStatus = MailStatus.SENT, **extra: object) -> OutboxMail:
    written = utcnow() - timedelta(days=age_days)
    context = {"game_name": "A game", "player_name": "Ann", "turn_url": "https://smallworld.example/play/x"}
    return OutboxMailFactory(
        created_at=written, status=status, context=context, last_error="550 ann@example.org", **extra
    )


def test_old_mail_bodies_are_emptied_and_the_rows_kept(db_session: Session) -> None:
    old = [_mail(31), _mail(45, MailStatus.FAILED), _mail(60, MailStatus.SKIPPED)]
    young = _mail(29)
    waiting = _mail(40, MailStatus.PENDING)  # still to send (its worker was down): its body is needed
    db_session.commit()

    report = retention.purge_old_mail(db_session, DAYS, batch=2)

    assert report == retention.Purged(mails=3, inbound=0, failed=0)
    for row in old:
        db_session.refresh(row)
        assert (row.context, row.last_error) == ({}, None) and row.body_purged_at is not None
        assert row.template == "your_turn" and row.to_email and row.status != MailStatus.PENDING
    for row in (young, waiting):
        db_session.refresh(row)
        assert row.context["player_name"] == "Ann" and row.body_purged_at is None
    assert retention.purge_old_mail(db_session, DAYS) == retention.Purged(), "a second sweep finds nothing"


def test_old_inbound_records_are_deleted(db_session: Session) -> None:
    old = InboundMailFactory(received_at=utcnow() - timedelta(days=DAYS, minutes=1), sender="ann@example.org")
    young = InboundMailFactory(received_at=utcnow() - timedelta(days=DAYS - 1))
    db_session.commit()
    old_id = old.id

    report = retention.purge_old_mail(db_session, DAYS)

    assert report.inbound == 1
    assert db_session.exec(select(InboundMail.id)).all() == [young.id]
    assert db_session.get(InboundMail, old_id) is None


def test_one_bad_row_never_stops_the_sweep(db_session: Session) -> None:
    rows = [_mail(31 + n) for n in range(5)]
    db_session.commit()
    bad = rows[2].id
    # A row the database refuses to change (here a trigger; in life a constraint, a corrupt page…).
    if db_session.get_bind().dialect.name == "postgresql":
        db_session.execute(
            sa.text(
                "CREATE FUNCTION refuse_row() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'this row is bad'; END $$"
            )
        )
        db_session.execute(
            sa.text(
                f"CREATE TRIGGER bad_row BEFORE UPDATE ON outbox FOR EACH ROW WHEN (OLD.id = {bad}) "
                "EXECUTE FUNCTION refuse_row()"
            )
        )
    else:
        db_session.execute(
            sa.text(
                f"CREATE TRIGGER bad_row BEFORE UPDATE ON outbox WHEN OLD.id = {bad} "
                "BEGIN SELECT RAISE(ABORT, 'this row is bad'); END"
            )
        )
    db_session.commit()

    report = retention.purge_old_mail(db_session, DAYS, batch=2)

    assert report == retention.Purged(mails=4, inbound=0, failed=1)
    for row in rows:
        db_session.refresh(row)
        assert (row.body_purged_at is None) == (row.id == bad)


def test_a_purged_mail_cannot_be_resent(db_session: Session) -> None:
    game = GameFactory()
    row = _mail(40, MailStatus.FAILED, game_id=game.id)
    db_session.commit()
    retention.purge_old_mail(db_session, DAYS)
    with pytest.raises(Conflict, match="purged"):
        admin.resend_mail(db_session, game.id or 0, row.id or 0, admin.HOST)


def test_the_retention_is_at_least_a_day(db_session: Session) -> None:
    with pytest.raises(ValueError, match="one day"):
        retention.purge_old_mail(db_session, 0)
