"""service.domain.outbox: one row per event, typed messages stored whole, Message-IDs under the sender's domain."""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask
from sqlmodel import Session, select

from emails.messages import AdminLogin, AutoPassed, from_json
from service.domain.models import OutboxMail, Player
from service.domain.outbox import MAIL_DOMAIN, insert_mail_row, queue_mail
from service.infra.db import get_engine, get_session
from tests import factories


def test_a_mail_is_written_once_per_dedupe_key_and_its_message_id_is_under_the_senders_domain(
    make_app: Callable[..., Flask],
) -> None:
    app = make_app(MAIL_FROM="Small World by Mail <turns@Games.Example.org>")
    with app.app_context():
        session = get_session()
        player = Player(email="ann@example.org", display_name="Ann")
        session.add(player)
        session.flush()
        written = [
            insert_mail_row(session, player=player, template="your_turn", context={"n": n}, dedupe_key="step:1")
            for n in range(2)
        ]
        insert_mail_row(session, to_email="bob@example.org", template="your_turn", context={"n": 3})
        session.commit()
        mails = session.exec(select(OutboxMail).order_by(OutboxMail.id)).all()  # type: ignore[arg-type]
    assert written == [True, False]
    assert [(m.to_email, m.context) for m in mails] == [("ann@example.org", {"n": 0}), ("bob@example.org", {"n": 3})]
    assert all(m.message_id.endswith("@games.example.org>") for m in mails), [m.message_id for m in mails]
    assert len({m.message_id for m in mails}) == 2


def test_outside_the_service_message_ids_use_a_reserved_domain(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    with Session(get_engine(app)) as session:  # no app context: a script on a bare session
        player = Player(email="cy@example.org", display_name="Cy")
        session.add(player)
        session.flush()
        insert_mail_row(session, player=player, template="your_turn", context={})
        session.commit()
        mail = session.exec(select(OutboxMail)).one()
    assert mail.message_id.endswith(f"@{MAIL_DOMAIN}>")


def test_a_typed_message_is_stored_with_its_template_fields_game_and_dedupe_key(db_session: Session) -> None:
    game = factories.GameFactory()
    player = factories.PlayerFactory()
    passed = AutoPassed(
        game_id=game.id,
        game_name=game.name,
        player_name=player.display_name,
        reason="deadline",
        defending=False,
        version=5,
    )
    assert queue_mail(db_session, player, passed) is True
    assert queue_mail(db_session, player, passed.model_copy(update={"reason": "host"})) is False  # the same event
    sign_in = AdminLogin(login_url="https://x.example/admin/login/t", valid_minutes=30, account_id=3, window=7)
    assert queue_mail(db_session, "boss@example.org", sign_in) is True
    rows = db_session.exec(select(OutboxMail).order_by(OutboxMail.id)).all()  # type: ignore[arg-type]
    assert [(r.template, r.game_id, r.player_id, r.to_email, r.dedupe_key) for r in rows] == [
        ("auto_passed", game.id, player.id, player.email, f"game:{game.id}:auto-pass:5"),
        ("admin_login", None, None, "boss@example.org", "site-admin:3:sign-in:7"),
    ]
    assert from_json(rows[0].template, rows[0].context) == passed
    assert from_json(rows[1].template, rows[1].context) == sign_in
