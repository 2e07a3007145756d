"""service.domain.models: the status-like columns are StrEnums stored as the plain strings they always were."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import StatementError
from sqlmodel import Session

from service.domain.models import ActionKind, Game, GameStatus, MailStatus, OutboxMail
from tests import factories


def test_the_members_are_the_strings_stored_and_shown_in_the_api() -> None:
    assert [s.value for s in GameStatus] == [
        "unconfirmed",
        "inviting",
        "active",
        "paused",
        "ending",
        "finished",
        "cancelled",
    ]
    assert [s.value for s in MailStatus] == ["pending", "sent", "failed", "skipped", "maybe_sent"]
    assert [k.value for k in ActionKind] == ["action", "auto_pass", "undo", "options", "admin"]
    assert GameStatus.ACTIVE == "active" and f"{GameStatus.PAUSED}" == "paused"
    assert json.dumps({"status": GameStatus.FINISHED}) == '{"status": "finished"}'


def test_a_status_is_stored_as_its_string_and_read_back_as_a_member(db_session: Session) -> None:
    game = factories.GameFactory(status="active")
    mail = factories.OutboxMailFactory()
    step = factories.GameActionFactory(game_id=game.id, kind=ActionKind.AUTO_PASS)
    db_session.flush()
    stored = db_session.execute(sa.text("SELECT status FROM games WHERE id = :id"), {"id": game.id}).scalar_one()
    assert (type(stored), stored) == (str, "active")
    db_session.expire_all()
    assert db_session.get(Game, game.id).status is GameStatus.ACTIVE  # type: ignore[union-attr]
    assert db_session.get(OutboxMail, mail.id).status is MailStatus.PENDING  # type: ignore[union-attr]
    assert db_session.get(type(step), step.id).kind is ActionKind.AUTO_PASS  # type: ignore[union-attr]


def test_a_status_that_is_not_a_member_is_refused_on_the_way_in(db_session: Session) -> None:
    game = factories.GameFactory()
    db_session.flush()
    game.status = "activ"  # type: ignore[assignment]
    with pytest.raises(StatementError, match="'activ' is not a valid GameStatus"):
        db_session.flush()
