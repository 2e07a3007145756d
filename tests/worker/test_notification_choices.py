"""Delivery follows each reader's mail choices (ARCHITECTURE §9, ``service.domain.notifications``), with a real
SMTP server, on SQLite and PostgreSQL: table talk and notices by choice, game by game; the mails of one's
turns and the final results whatever the choice; and every mail's footer links the page of choices."""

from __future__ import annotations

import re

from flask import Flask
from sqlmodel import select

from emails.messages import AutoPassed, GameOver
from emails.samples import SAMPLES
from service.domain import notifications, table_talk
from service.domain.models import Game, NotifyMode, Player
from service.domain.outbox import queue_mail
from service.infra.db import get_session
from tests.smtp import SMTPServer

from .conftest import drain, new_game, outbox

BOB = "p1@example.org"


def smtp(app: Flask) -> SMTPServer:
    return app.extensions["test.smtp"]


def bob_chooses(
    app: Flask, default: NotifyMode, game_id: int | None = None, mode: NotifyMode | None = None, **switches: bool
) -> None:
    with app.app_context():
        session = get_session()
        bob = session.exec(select(Player).where(Player.email == BOB)).one()
        notifications.save_choices(
            session,
            bob.id or 0,
            default=default,
            digest_hour=18,
            games={game_id: mode} if game_id is not None else {},
            wants_reminders=switches.get("wants_reminders", True),
            wants_notices=switches.get("wants_notices", True),
            wants_messages=switches.get("wants_messages", True),
        )


def ann_says(app: Flask, game_id: int, text: str) -> None:
    with app.app_context():
        session = get_session()
        game = session.get(Game, game_id)
        assert game is not None
        table_talk.post_message(session, game, 0, text)


def notice_and_results(app: Flask, game_id: int, version: int) -> None:
    """A turn passed for Bob (a notice) and the final table (the results), queued as the game would."""
    with app.app_context():
        session = get_session()
        bob = session.exec(select(Player).where(Player.email == BOB)).one()
        queue_mail(
            session,
            bob,
            AutoPassed(
                game_id=game_id,
                game_name="Deadline test",
                player_name="Player 1",
                reason="deadline",
                defending=False,
                version=version,
            ),
        )
        over = SAMPLES["game_over"].mail
        queue_mail(session, bob, GameOver(**{**over.context(), "game_id": game_id, "your_seat": 1 + version}))
        session.commit()


def subjects_to_bob(app: Flask) -> list[str]:
    return [m.headline for m in smtp(app).mailbox.to(BOB)]


def test_the_next_mails_follow_the_choices_game_by_game(mail_app: Flask) -> None:
    game_id, other_id = new_game(mail_app), new_game(mail_app)
    drain(mail_app)
    # Bob wants only his turns and the results in the first game; every event in the other.
    bob_chooses(mail_app, NotifyMode.EVERY, game_id, NotifyMode.TURNS)
    ann_says(mail_app, game_id, "Not for Bob's inbox")
    ann_says(mail_app, other_id, "For Bob's inbox")
    notice_and_results(mail_app, game_id, version=1)
    drain(mail_app)
    subjects = subjects_to_bob(mail_app)
    assert sum("wrote at the table" in s for s in subjects) == 1
    # His own turn played for him is a mail of his own turns: it comes whatever he chose (issue 35).
    assert sum("played for you" in s for s in subjects) == 1, "a turn played for Bob is told to Bob"
    assert any("is over" in s for s in subjects), "the final results always come"
    skipped = {m.template: m.last_error for m in outbox(mail_app, game_id=game_id) if m.status == "skipped"}
    assert skipped == {"table_talk": "the player chose only their turns and results for this game"}
    # Bob changes his mind: every event again, but no table talk anywhere and no notices.
    bob_chooses(mail_app, NotifyMode.EVERY, game_id, None, wants_messages=False, wants_notices=False)
    before = len(subjects_to_bob(mail_app))
    ann_says(mail_app, other_id, "Still not")
    notice_and_results(mail_app, game_id, version=2)
    drain(mail_app)
    new = subjects_to_bob(mail_app)[before:]
    assert len(new) == 1 and "is over" in new[0], new
    # And every event, every kind: the next message comes.
    bob_chooses(mail_app, NotifyMode.EVERY)
    ann_says(mail_app, game_id, "Back in the inbox")
    drain(mail_app)
    assert "wrote at the table" in subjects_to_bob(mail_app)[-1]


def test_every_mail_to_a_player_links_the_page_of_choices_which_opens_without_sign_in(mail_app: Flask) -> None:
    game_id = new_game(mail_app)
    ann_says(mail_app, game_id, "Hello")
    drain(mail_app)
    received = smtp(mail_app).mailbox.to(BOB)
    assert received
    client = mail_app.test_client()
    for mail in received:
        [link] = set(re.findall(r"https://smallworld\.example(/choices/\S+)", mail.text))
        assert link in mail.html
        page = client.get(link)
        assert page.status_code == 200 and BOB in page.get_data(as_text=True)
