"""Resigning (``service.domain.admin.resign``) and the rematch (``service.domain.rematch``), through the pages
a player uses (their seat's session), on SQLite and on PostgreSQL with Redis (ARCHITECTURE §9)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlmodel import Session, col, select

import rules
from service.domain import play, tally
from service.domain.models import (
    ActionKind,
    AuditEntry,
    Game,
    GameAction,
    GameResult,
    GameStatus,
    OutboxMail,
    Seat,
    SeatController,
)
from service.infra.db import get_engine, get_session
from tests.api.conftest import create_game, new_game_body, read_outbox

BASE = "https://smallworld.example"


@pytest.fixture(params=["sqlite", "postgres"])
def app(request: pytest.FixtureRequest, make_app: Callable[..., Flask]) -> Flask:
    if request.param == "sqlite":
        return make_app(BASE_URL=BASE)
    return make_app(
        BASE_URL=BASE,
        DATABASE_URL=request.getfixturevalue("postgres_url"),
        BROKER_URL=request.getfixturevalue("redis_url"),
    )


def started_game(app: Flask, players: int = 3, **settings: Any) -> int:
    created = create_game(app.test_client(), new_game_body(players, start_when_all_accepted=False, **settings))
    assert created.status_code == 201, created.get_json()
    return int(created.get_json()["id"])


def seat_client(app: Flask, game_id: int, seat: int) -> Any:
    """A browser holding ``seat`` (it opened the seat's link)."""
    with app.app_context():
        row = get_session().exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == seat)).one()
        url = app.extensions["smallworld.links"].turn_url(game_id, seat, row.secret, serial=0)
    client = app.test_client()
    assert client.get(url.removeprefix(BASE)).status_code == 302
    return client


def csrf(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, "no form"
    return found.group(1)


def game_row(app: Flask, game_id: int) -> Game:
    with Session(get_engine(app)) as session:
        game = session.get(Game, game_id)
        assert game is not None
        return game


def play_to_the_end(app: Flask, game_id: int) -> None:
    """Every step passed at its deadline, then the worker's tally."""
    with app.app_context():
        session = get_session()
        for _ in range(500):
            game = session.get(Game, game_id, populate_existing=True)
            assert game is not None
            if game.status == GameStatus.ENDING:
                assert tally.tally_game(session, game_id)
                return
            seat = min(rules.awaiting(play.load_state(game)))
            play.auto_pass(session, game_id, seat, app.extensions["smallworld.links"], reason="deadline")
    raise AssertionError("the game did not end")


def resign(client: Any, game_id: int) -> Any:
    page = client.get(f"/games/{game_id}/resign")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "cannot be taken back" in text
    return client.post(f"/games/{game_id}/resign", data={"csrf_token": csrf(text)})


def test_a_player_resigns_on_their_turn_the_seat_is_passed_told_to_all_and_in_the_record(app: Flask) -> None:
    game_id = started_game(app)
    ann = seat_client(app, game_id, 0)
    assert "Resign from this game" in ann.get(f"/games/{game_id}").get_data(as_text=True)
    assert "Resign from this game" in ann.get(f"/games/{game_id}/turn").get_data(as_text=True)
    no_token = ann.post(f"/games/{game_id}/resign")
    assert no_token.status_code == 400, "a POST without its CSRF token is refused"

    done = resign(ann, game_id)
    assert done.status_code == 303
    page = ann.get(f"/games/{game_id}").get_data(as_text=True)
    assert "You resigned from the game" in page and "You resigned from this game." in page
    # The confirmation page says so; a forced POST is refused, and changes nothing.
    assert "resigned from this game already" in ann.get(f"/games/{game_id}/resign").get_data(as_text=True)
    again = ann.post(f"/games/{game_id}/resign", data={"csrf_token": csrf(page)})
    assert again.status_code == 303
    assert "resigned from this game already" in ann.get(f"/games/{game_id}").get_data(as_text=True)

    # Everyone is told, once; the history tells it; the turn was taken from the clock (passed at once).
    told = [m for m in read_outbox(app, "admin_change") if m.context["change"] == "resigned"]
    assert sorted(m.to_email for m in told) == [f"p{i}@example.org" for i in range(3)]
    history = ann.get(f"/games/{game_id}/history").get_data(as_text=True)
    assert "resigned from the game" in history
    with app.app_context():
        session = get_session()
        game = session.get(Game, game_id)
        assert game is not None and game.deadline_at is not None
        from service.domain import deadlines

        report = deadlines.sweep(session, app.extensions["smallworld.links"], now=game.deadline_at)
        assert report.auto_passed == 1
        passed = session.exec(
            select(GameAction).where(GameAction.game_id == game_id, GameAction.kind == ActionKind.AUTO_PASS)
        ).one()
        assert passed.seat == 0 and passed.action == {"reason": "resigned"}
    # No turn mail to the resigned seat from now on.
    turns_to_ann = [m for m in read_outbox(app, "your_turn") if m.to_email == "p0@example.org"]
    assert len(turns_to_ann) == 1, "only the first turn, before resigning"

    play_to_the_end(app, game_id)
    with Session(get_engine(app)) as session:
        results = {r.seat: r for r in session.exec(select(GameResult).where(GameResult.game_id == game_id)).all()}
    assert results[0].resigned and not results[1].resigned
    assert results[0].deadlines_missed == 0, "turns passed after resigning are no missed deadlines"
    final = ann.get(f"/games/{game_id}").get_data(as_text=True)
    assert "resigned 1" in final and ">resigned<" in final


def test_with_the_house_bot_setting_the_bot_plays_the_resigned_seat_and_keeps_it(app: Flask) -> None:
    game_id = started_game(app, resigned_seats="bot")
    bob = seat_client(app, game_id, 1)
    assert "house bot plays your seat" in bob.get(f"/games/{game_id}/resign").get_data(as_text=True)
    assert resign(bob, game_id).status_code == 303
    with Session(get_engine(app)) as session:
        seat = session.exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == 1)).one()
        assert seat.controller == SeatController.BOT and seat.resigned_at is not None
    from service.domain import bot_seats
    from service.domain.errors import Conflict

    with app.app_context(), pytest.raises(Conflict, match="resigned"):
        bot_seats.take_seat_back(get_session(), game_id, 1)
    told = [m for m in read_outbox(app, "admin_change") if m.context["change"] == "resigned"]
    assert told and all(m.context["details"] == {"seat": 1, "then": "bot"} for m in told)


def test_nobody_can_resign_for_someone_else_nor_after_the_end(app: Flask) -> None:
    game_id = started_game(app, players=2)
    stranger = app.test_client()
    assert stranger.get(f"/games/{game_id}/resign").status_code == 403
    assert stranger.post(f"/games/{game_id}/resign").status_code in (400, 403)
    play_to_the_end(app, game_id)
    ann = seat_client(app, game_id, 0)
    assert "not running" in ann.get(f"/games/{game_id}/resign").get_data(as_text=True)
    with Session(get_engine(app)) as session:
        assert session.exec(select(AuditEntry).where(AuditEntry.act == "resign")).all() == []


def test_the_host_s_rematch_invites_the_same_players_once_and_others_cannot(app: Flask) -> None:
    game_id = started_game(app)
    host, bob = seat_client(app, game_id, 0), seat_client(app, game_id, 1)
    before = host.get(f"/games/{game_id}").get_data(as_text=True)
    assert "Rematch" not in before
    refused = host.post(f"/games/{game_id}/rematch", data={"csrf_token": csrf(before)})
    assert refused.status_code == 303
    assert "once the game is over" in host.get(f"/games/{game_id}").get_data(as_text=True)

    play_to_the_end(app, game_id)
    page = host.get(f"/games/{game_id}").get_data(as_text=True)
    assert "Rematch: invite the same players" in page and "rating" in page.lower()
    assert "Rematch: invite" not in bob.get(f"/games/{game_id}").get_data(as_text=True)
    bob_page = bob.get(f"/games/{game_id}").get_data(as_text=True)
    forced = bob.post(f"/games/{game_id}/rematch", data={"csrf_token": csrf(bob_page)})
    assert forced.status_code == 303
    assert "Only the game&#39;s host" in bob.get(f"/games/{game_id}").get_data(as_text=True)

    invitations_before = len(read_outbox(app, "invitation"))
    done = host.post(f"/games/{game_id}/rematch", data={"csrf_token": csrf(page)})
    assert done.status_code == 303
    after = host.get(f"/games/{game_id}").get_data(as_text=True)
    assert "is on: every player was invited" in after and "A rematch was started" in after
    twice = host.post(f"/games/{game_id}/rematch", data={"csrf_token": csrf(after)})
    assert twice.status_code == 303
    assert "started already" in host.get(f"/games/{game_id}").get_data(as_text=True)

    with Session(get_engine(app)) as session:
        new = session.exec(select(Game).where(col(Game.name) == "A game of 3 (rematch)")).one()
        old = session.get(Game, game_id)
        assert old is not None
        # The same settings: this one started at once, as the first did.
        assert new.status == GameStatus.ACTIVE and new.host_email == old.host_email
        assert new.settings == old.settings and new.seed != old.seed
        confirm = session.exec(
            select(OutboxMail).where(OutboxMail.game_id == new.id, OutboxMail.template == "confirm_game")
        ).one()
        assert confirm.status == "skipped", "the host started it from their seat: no mail asking to confirm it"
        seats = session.exec(select(Seat).where(Seat.game_id == new.id).order_by(col(Seat.seat))).all()
        assert [s.display_name for s in seats] == ["Player 0", "Player 1", "Player 2"]
        rematches = session.exec(select(sa.func.count()).select_from(Game).where(col(Game.id) != game_id)).one()
        assert rematches == 1
    invitations = [m for m in read_outbox(app, "invitation") if m.game_id == new.id]
    assert len(read_outbox(app, "invitation")) == invitations_before + 3
    assert sorted(m.to_email for m in invitations) == [f"p{i}@example.org" for i in range(3)]


def test_the_host_chooses_what_becomes_of_a_resigned_seat_on_the_create_form(app: Flask) -> None:
    client = app.test_client()
    form = client.get("/games/new").get_data(as_text=True)
    assert "A player who resigns" in form and 'value="auto_pass" checked' in form
    data = {
        "csrf_token": csrf(form),
        "name": "Formed to resign",
        "name-0": "Ann",
        "email-0": "ann.form@example.org",
        "name-1": "Bob",
        "email-1": "bob.form@example.org",
        "turn_hours": "48",
        "defender_hours": "12",
        "resigned_seats": "elsewhere",
    }
    refused = client.post("/games/new", data=data)
    assert refused.status_code == 400 and "A player who resigns" in refused.get_data(as_text=True)
    assert client.post("/games/new", data=data | {"resigned_seats": "bot"}).status_code == 303
    with Session(get_engine(app)) as session:
        game = session.exec(select(Game).where(Game.name == "Formed to resign")).one()
        assert game.settings["resigned_seats"] == "bot"
