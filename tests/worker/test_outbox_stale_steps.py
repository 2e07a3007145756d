"""service.domain.delivery: a mail about a step of a game is dropped, not sent, once the game moved past it.

"Your turn", "redeploy needed" and reminders each name their step (``OutboxMail.step_key``); a drain that
finds the game at another step, over or cancelled records the mail as skipped, with the reason.
"""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa
from flask import Flask

from service.domain import admin
from service.domain.models import OutboxMail
from service.infra.db import get_session

from .conftest import drain, game_row, new_game, outbox, sweep
from .test_deadlines import HOUR, play_until


def skipped(app: Flask, template: str) -> list[tuple[str, str | None]]:
    return [(m.to_email, m.last_error) for m in outbox(app, template) if m.status == "skipped"]


def test_each_turn_mail_names_its_step(mail_app: Flask) -> None:
    game_id = new_game(mail_app)
    [mail] = outbox(mail_app, "your_turn")
    assert mail.step_key == game_row(mail_app, game_id).step_key == "1:0:-"


def test_a_turn_played_before_its_mail_left_sends_no_stale_your_turn(mail_app: Flask) -> None:
    game_id = new_game(mail_app, turn_length_seconds=HOUR)
    deadline = game_row(mail_app, game_id).deadline_at
    # Seat 0's turn ends (here at its deadline; a turn played in the browser ends the same step) before
    # any drain ran: the mail telling seat 0 it is their turn must not go out now.
    assert sweep(mail_app, deadline + timedelta(seconds=1)).auto_passed == 1

    report = drain(mail_app)

    assert skipped(mail_app, "your_turn") == [("p0@example.org", "the step it was about is over")]
    assert [m.to_email for m in outbox(mail_app, "your_turn") if m.status == "sent"] == ["p1@example.org"]
    assert report.skipped == 1
    subjects = [r.headline for r in mail_app.extensions["test.smtp"].mailbox.to("p0@example.org")]
    assert not [s for s in subjects if "your turn (turn" in s]


def test_a_turn_mail_of_a_game_cancelled_before_it_left_is_dropped(mail_app: Flask) -> None:
    game_id = new_game(mail_app)
    with mail_app.app_context():
        admin.cancel(get_session(), game_id, admin.HOST, mail_app.extensions["smallworld.links"], "no time")
    drain(mail_app)
    assert skipped(mail_app, "your_turn") == [("p0@example.org", "the game is cancelled")]


def test_a_turn_mail_of_a_paused_game_still_goes_out_since_its_step_is_still_to_play(mail_app: Flask) -> None:
    game_id = new_game(mail_app)
    with mail_app.app_context():
        admin.pause(get_session(), game_id, admin.HOST, mail_app.extensions["smallworld.links"], "holidays")
    drain(mail_app)
    assert [(m.to_email, m.status) for m in outbox(mail_app, "your_turn")] == [("p0@example.org", "sent")]


def test_a_turn_mail_to_a_removed_player_is_dropped(mail_app: Flask) -> None:
    game_id = new_game(mail_app, players=3)
    with mail_app.app_context():
        admin.remove_player(get_session(), game_id, admin.HOST, mail_app.extensions["smallworld.links"], 0)
    drain(mail_app)
    assert ("p0@example.org", "the player no longer holds a seat in this game") in skipped(mail_app, "your_turn")


def test_a_row_written_before_steps_had_a_column_is_judged_by_the_step_in_its_context(mail_app: Flask) -> None:
    game_id = new_game(mail_app, turn_length_seconds=HOUR)
    with mail_app.app_context():
        session = get_session()
        session.execute(sa.update(OutboxMail).values(step_key=None))
        session.commit()
    sweep(mail_app, game_row(mail_app, game_id).deadline_at + timedelta(seconds=1))
    drain(mail_app)
    assert skipped(mail_app, "your_turn") == [("p0@example.org", "the step it was about is over")]


def test_a_redeploy_mail_whose_defence_was_passed_before_it_left_is_dropped(mail_app: Flask) -> None:
    game_id = new_game(
        mail_app,
        players=3,
        seed="a-defender-in-ask-mode",
        redeploy="ask",
        defender_turn_length_seconds=12 * HOUR,
        reminders_before_seconds=[24 * HOUR],
    )
    state = play_until(mail_app, game_id, lambda s: s.phase == "defend")
    assert state.defenders == [2], "the seed no longer deals the game this test was written for: choose another"
    with mail_app.app_context():  # the defence is passed before its mail left
        admin.pass_now(get_session(), game_id, admin.HOST, mail_app.extensions["smallworld.links"])
    drain(mail_app)
    assert skipped(mail_app, "redeploy_needed") == [("p2@example.org", "the step it was about is over")]
