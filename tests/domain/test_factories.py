"""Every table has a factory that builds a valid row (the rows vanish with the test's transaction)."""

from __future__ import annotations

import pytest
from sqlmodel import Session, SQLModel, select

from tests import factories

FACTORIES = [
    factories.PlayerFactory,
    factories.GameFactory,
    factories.SeatFactory,
    factories.GameActionFactory,
    factories.TurnStartFactory,
    factories.OutboxMailFactory,
    factories.ServiceStatusFactory,
    factories.AuditEntryFactory,
    factories.SiteAdminFactory,
    factories.ReminderSentFactory,
    factories.BlockedAddressFactory,
    factories.ChatNoticeFactory,
    factories.GameResultFactory,
    factories.PlayerRecordFactory,
    factories.InboundMailFactory,
    factories.TableMessageFactory,
    factories.GameNotificationFactory,
    factories.DigestSentFactory,
    factories.SignInFactory,
    factories.ErasedAddressFactory,
]


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
def test_each_factory_builds_a_row_the_database_accepts(db_session: Session, factory: type) -> None:
    row = factory()
    db_session.flush()
    model = factory._meta.model
    assert db_session.exec(select(model)).all() == [row]


def test_every_table_has_a_factory() -> None:
    covered = {f._meta.model.__tablename__ for f in FACTORIES}
    tables = set(SQLModel.metadata.tables)
    assert tables == covered, tables - covered
