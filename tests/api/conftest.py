"""The JSON API against each database the service runs on: SQLite (embedded) and PostgreSQL with Redis."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from flask import Flask
from sqlmodel import Session, col, select

from service.domain.links import LinkMaker
from service.domain.models import OutboxMail, Player, Seat
from service.infra.db import get_engine


@pytest.fixture(params=["sqlite", "postgres"])
def api_app(request: pytest.FixtureRequest, make_app: Callable[..., Flask]) -> Flask:
    if request.param == "sqlite":
        return make_app()
    postgres = request.getfixturevalue("postgres_url")
    redis = request.getfixturevalue("redis_url")
    return make_app(DATABASE_URL=postgres, BROKER_URL=redis)


@pytest.fixture
def api(api_app: Flask) -> Any:
    return api_app.test_client()


@pytest.fixture
def outbox(api_app: Flask) -> Outbox:
    """The mails written so far, oldest first (optionally one template only)."""
    return Outbox(api_app)


@dataclass(frozen=True)
class Outbox:
    """The mails ``app`` has written so far (``outbox()``, ``outbox("invitation")``), and the seat's token each
    carries once sent."""

    app: Flask

    def __call__(self, template: str | None = None) -> list[OutboxMail]:
        return read_outbox(self.app, template)

    def seat_token(self, mail: OutboxMail) -> str:
        return token_of(seat_link(self.app, mail))


def read_outbox(app: Flask, template: str | None = None) -> list[OutboxMail]:
    """The mails ``app`` has written so far, oldest first (optionally one template only)."""
    with Session(get_engine(app)) as session:
        query = select(OutboxMail).order_by(OutboxMail.id)  # type: ignore[arg-type]
        if template:
            query = query.where(OutboxMail.template == template)
        return list(session.exec(query).all())


def seat_link(app: Flask, mail: OutboxMail, session: Session | None = None) -> str:
    """The link to its reader's seat that ``mail`` carries once sent: delivery mints it at sending, from the seat
    and its player's links serial as they are then (ARCHITECTURE §6); the outbox row holds none. Read in
    ``session`` when one is open (SQLite lets one transaction write at a time), else in a session of its own."""
    with contextlib.nullcontext(session) if session is not None else Session(get_engine(app)) as reading:
        seat, player = reading.exec(
            select(Seat, Player)
            .join(Player, col(Player.id) == col(Seat.player_id))
            .where(Seat.game_id == mail.game_id, Seat.player_id == mail.player_id, col(Seat.removed).is_(False))
        ).one()
        links: LinkMaker = app.extensions["smallworld.links"]
        return links.turn_url(seat.game_id, seat.seat, seat.secret, serial=player.links_serial)


def token_of(url: str) -> str:
    """The signed token at the end of a link from a mail."""
    return url.rstrip("/").rsplit("/", 1)[-1]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def new_game_body(players: int, **settings: Any) -> dict[str, Any]:
    return {
        "name": f"A game of {players}",
        "players": [{"name": f"Player {i}", "email": f"p{i}@example.org"} for i in range(players)],
        "settings": settings,
    }


#: The client address the host confirms from, in :func:`create_game` (TEST-NET-1, RFC 5737).
HOSTS_MACHINE = "192.0.2.10"


@dataclass(frozen=True)
class Created:
    """What :func:`create_game` answers: the creation's status, and the confirmation's body (the same shape
    as the creation's: id, status, admin_url, seats)."""

    status_code: int
    body: Any
    #: The raw answers, of the creation and then of the confirmation.
    raw: str = ""

    def get_json(self) -> Any:
        return self.body

    def get_data(self, as_text: bool = False) -> Any:
        return self.raw if as_text else self.raw.encode()


def create_game(client: Any, body: dict[str, Any], **confirmation: Any) -> Created:
    """Create a game through the API and confirm it as its host does (ARCHITECTURE §9: a new game mails only its
    host until the host confirms it), with the token of the ``confirm_game`` mail: what creating a game
    did by itself before. A refused creation is answered as it was. The host confirms from a machine of
    their own (``HOSTS_MACHINE``), so the confirmation counts against none of the client's limits."""
    created = client.post("/api/games", json=body)
    if created.status_code != 201:
        return Created(created.status_code, created.get_json(), created.get_data(as_text=True))
    game_id = created.get_json()["id"]
    [mail] = [m for m in read_outbox(client.application, "confirm_game") if m.game_id == game_id]
    confirmed = client.post(
        "/api/games/confirm",
        headers=bearer(token_of(mail.context["confirm_url"])),
        json=confirmation or None,
        environ_base={"REMOTE_ADDR": HOSTS_MACHINE},
    )
    assert confirmed.status_code == 200, confirmed.get_json()
    raw = created.get_data(as_text=True) + confirmed.get_data(as_text=True)
    return Created(created.status_code, confirmed.get_json(), raw)
