"""Finding 4, concurrent last accepts on PostgreSQL left the game stuck in ``inviting`` (16 of 25 tries):
accepting took no lock, so two last accepts each saw the other's seat unanswered, and nothing healed it
later. Now the accept locks the game's row first (``SELECT … FOR UPDATE``), the last accept starts the game
exactly once, and the deadline sweep starts any fully accepted game found still inviting."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from flask import Flask
from sqlmodel import Session, select

from service.domain import deadlines
from service.domain.models import Game, GameAction, Seat
from service.infra.db import get_engine

from .conftest import bearer, body, created_and_confirmed, invitations, mails, token_of

TRIES = 25
PLAYERS = 3


def test_concurrent_last_accepts_start_every_game_exactly_once(
    make_app: Callable[..., Flask], postgres_url: str, redis_url: str
) -> None:
    """25 games; in each, seat 0 accepts, then seats 1 and 2 accept at the same moment from two threads, each
    on its own connection (the test client is a real WSGI request on the app's pool)."""
    app = make_app(DATABASE_URL=postgres_url, BROKER_URL=redis_url)
    outcomes: list[tuple[int, str, int, int, int]] = []
    for n in range(TRIES):
        emails = [f"p{i}.try{n}@example.org" for i in range(PLAYERS)]
        game = created_and_confirmed(app, body([f"P{i}" for i in range(PLAYERS)], emails, name=f"Race {n}"))
        invites = {seat: token_of(m.context["invite_url"]) for seat, m in invitations(app, game["id"]).items()}
        first = app.test_client().post("/api/invitations/accept", headers=bearer(invites[0]))
        assert first.status_code == 200 and first.get_json()["status"] == "inviting"
        barrier = threading.Barrier(2)
        answers: list[Any] = []

        def accept(
            seat: int,
            invites: dict[int, str] = invites,
            barrier: threading.Barrier = barrier,
            answers: list[Any] = answers,
        ) -> None:
            client = app.test_client()
            barrier.wait()
            answers.append(client.post("/api/invitations/accept", headers=bearer(invites[seat])))

        threads = [threading.Thread(target=accept, args=(seat,)) for seat in (1, 2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert [a.status_code for a in answers] == [200, 200], [a.get_json() for a in answers]
        with Session(get_engine(app)) as session:
            row = session.get(Game, game["id"])
            assert row is not None
            logged = len(session.exec(select(GameAction).where(GameAction.game_id == game["id"])).all())
        turn_mails = [m for m in mails(app, "your_turn") if m.game_id == game["id"]]
        outcomes.append((n, row.status, row.version, len(turn_mails), logged))
    stuck = [o for o in outcomes if o[1:] != ("active", 1, 1, 0)]
    assert stuck == [], f"{len(stuck)} of {TRIES} games did not start exactly once: {stuck}"


def test_the_sweep_starts_a_fully_accepted_game_left_inviting(any_app: Callable[..., Flask]) -> None:
    """A start that was lost (the finding's stuck games, or any other way): the next sweep starts it, once."""
    app = any_app()
    game = created_and_confirmed(app, body(["Ann", "Bob"], ["ann@example.org", "bob@example.org"]))
    with Session(get_engine(app)) as session:  # every seat accepted, and no start: as the race left games
        session.exec(sa.update(Seat).where(Seat.game_id == game["id"]).values(accepted_at=sa.func.now()))  # type: ignore[call-overload]
        session.commit()
    links = app.extensions["smallworld.links"]
    with app.app_context(), Session(get_engine(app)) as session:
        first = deadlines.sweep(session, links)
        second = deadlines.sweep(session, links)
    with Session(get_engine(app)) as session:
        row = session.get(Game, game["id"])
        assert row is not None and (row.status, row.version) == ("active", 1)
    assert len([m for m in mails(app, "your_turn") if m.game_id == game["id"]]) == 1
    assert (first.started, second.started) == (1, 0)
