"""service.domain.outbox: one row per event, and Message-IDs under the sender's domain."""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask
from sqlmodel import Session, select

from service.domain.models import OutboxMail, Player
from service.domain.outbox import MAIL_DOMAIN, queue_mail
from service.infra.db import get_engine, get_session


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
            queue_mail(session, player=player, template="your_turn", context={"n": n}, dedupe_key="step:1")
            for n in range(2)
        ]
        queue_mail(session, to_email="bob@example.org", template="your_turn", context={"n": 3})
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
        queue_mail(session, player=player, template="your_turn", context={})
        session.commit()
        mail = session.exec(select(OutboxMail)).one()
    assert mail.message_id.endswith(f"@{MAIL_DOMAIN}>")
