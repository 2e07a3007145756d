"""Announcing a game's step after its commit (``service/domain/announce.py``, ARCHITECTURE §2): the step stores
the step only; the announcement mails the awaited seat once, for the step the game awaits when it runs, and the
deadline sweep makes up for a job that was lost.

These tests make each announcement themselves (``announced_by_worker``: the tests' in-process announcement
after each commit, ``tests/conftest.py``, is off), as the worker's job or the sweep would.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import Session, col, select

import rules
from service.domain import announce, deadlines, play
from service.domain.links import LinkMaker
from service.domain.models import ChatNotice, Game, OutboxMail, utcnow
from service.domain.schemas import CreateGame
from tests.factories import confirmed_game

pytestmark = pytest.mark.announced_by_worker


def new_game(session: Session, links: LinkMaker, tag: str) -> Game:
    """A game started at once (seat 0 on turn) with a chat, its first step not yet announced."""
    request = CreateGame.model_validate(
        {
            "name": f"Announced {tag}",
            "players": [{"name": f"{tag} {i}", "email": f"{tag}{i}@example.org"} for i in range(2)],
            "settings": {"start_when_all_accepted": False},
        }
    )
    game, _ = confirmed_game(session, request, links)
    game.chat_url = "json://127.0.0.1:9/hook"  # a chat, so that its notices are written (none is sent here)
    session.add(game)
    session.commit()
    return game


def pass_turn(session: Session, game: Game, links: LinkMaker) -> str:
    """Pass the awaited seat's step (as the deadline does); the step key then awaited."""
    session.refresh(game)
    seat = min(rules.awaiting(play.load_state(game)))
    result = play.auto_pass(session, game.id or 0, seat, links, reason="deadline")
    return result.game.step_key or ""


def turn_mails(session: Session, game: Game) -> list[tuple[str | None, str]]:
    """The game's turn mails, in order: (step key, addressee)."""
    query = (
        select(OutboxMail.step_key, OutboxMail.to_email)
        .where(OutboxMail.game_id == game.id, col(OutboxMail.template).in_(["your_turn", "redeploy_needed"]))
        .order_by(col(OutboxMail.id))
    )
    return [(key, address) for key, address in session.exec(query).all()]


def turn_notices(session: Session, game: Game) -> list[str | None]:
    query = select(ChatNotice.step_key).where(ChatNotice.game_id == game.id, ChatNotice.kind == "turn")
    return list(session.exec(query).all())


def test_a_step_is_stored_unannounced_and_announced_once(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, "once")
    first = game.step_key
    assert game.announced_key is None and turn_mails(db_session, game) == []
    assert announce.announce(db_session, game.id or 0, links)
    assert turn_mails(db_session, game) == [(first, "once0@example.org")]
    key = pass_turn(db_session, game, links)
    db_session.refresh(game)
    # The step's own transaction wrote the step, its clock and nothing of its announcement.
    assert (game.step_key, game.announced_key) == (key, None)
    assert game.deadline_at is not None
    assert turn_mails(db_session, game) == [(first, "once0@example.org")]
    assert announce.announce(db_session, game.id or 0, links)
    assert not announce.announce(db_session, game.id or 0, links)  # a second run finds it announced
    db_session.refresh(game)
    assert game.announced_key == key
    assert turn_mails(db_session, game) == [(first, "once0@example.org"), (key, "once1@example.org")]


def test_only_the_step_awaited_when_the_announcement_runs_is_announced(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, "moved")
    assert announce.announce(db_session, game.id or 0, links)
    gone = pass_turn(db_session, game, links)  # seat 1 awaited: its job has not run yet …
    now = pass_turn(db_session, game, links)  # … and the game moved on: seat 0 again
    assert gone != now
    assert announce.announce(db_session, game.id or 0, links)
    keys = [key for key, _ in turn_mails(db_session, game)]
    assert gone not in keys and keys[-1] == now  # no mail asks for a step already over
    assert gone not in turn_notices(db_session, game) and now in turn_notices(db_session, game)


def test_the_first_announced_step_tells_the_chat_the_game_began(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, "chat")
    assert announce.announce(db_session, game.id or 0, links)
    bodies = db_session.exec(select(ChatNotice.body).where(ChatNotice.game_id == game.id)).all()
    assert len(bodies) == 1 and bodies[0].startswith("The game has begun.")


def test_the_sweep_announces_steps_left_unannounced_and_one_bad_game_stops_none(
    db_session: Session, links: LinkMaker
) -> None:
    broken, good = new_game(db_session, links, "broken"), new_game(db_session, links, "good")
    broken.state = {"not": "a state"}  # its log and snapshot no longer read: its announcement fails
    db_session.add(broken)
    db_session.commit()
    soon = deadlines.sweep(db_session, links, now=utcnow() + timedelta(seconds=2))
    assert soon.announced == 0 and turn_mails(db_session, good) == []  # its job may still be on its way
    later = utcnow() + announce.LEFT_UNANNOUNCED_AFTER + timedelta(seconds=5)
    report = deadlines.sweep(db_session, links, now=later)
    assert (report.announced, report.errors) == (1, 1)
    assert turn_mails(db_session, good) == [(good.step_key, "good0@example.org")]
    assert deadlines.sweep(db_session, links, now=later).announced == 0
    assert turn_mails(db_session, good) == [(good.step_key, "good0@example.org")]
    db_session.refresh(broken)
    assert broken.announced_key is None


def test_a_finished_or_unknown_game_is_not_announced(db_session: Session, links: LinkMaker) -> None:
    assert not announce.announce(db_session, 10_000, links)
    game = new_game(db_session, links, "cancelled")
    game.status = "cancelled"  # type: ignore[assignment]
    db_session.add(game)
    db_session.commit()
    assert not announce.announce(db_session, game.id or 0, links)
    assert turn_mails(db_session, game) == []
    later = utcnow() + announce.LEFT_UNANNOUNCED_AFTER * 2
    assert not db_session.exec(select(Game.id).where(announce.left_unannounced(later))).all()
