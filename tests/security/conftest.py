"""What the tests of hostile input share: apps on SQLite and PostgreSQL, and games made as a stranger would.

The helpers read the outbox directly (what each address was sent), and confirm a game as its host does when
the service asks for a confirmation (ARCHITECTURE §9).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from sqlmodel import Session, select

from service.domain.models import OutboxMail
from service.infra.db import get_engine

STRANGER = "203.0.113.66"  # the attacker's client address (TEST-NET-3, RFC 5737)
HOST_MACHINE = "198.51.100.7"  # a host confirming from their own machine (TEST-NET-2)


@pytest.fixture(params=["sqlite", "postgres"])
def any_app(request: pytest.FixtureRequest, make_app: Callable[..., Flask]) -> Callable[..., Flask]:
    """Build apps on SQLite, then on PostgreSQL with limits counted in Redis (as deployed)."""

    def build(**settings: Any) -> Flask:
        if request.param == "postgres":
            redis = request.getfixturevalue("redis_url")
            settings = {
                "DATABASE_URL": request.getfixturevalue("postgres_url"),
                "BROKER_URL": redis,
                "RATELIMIT_STORAGE_URI": redis,
                **settings,
            }
        return make_app(**settings)

    return build


def mails(app: Flask, template: str | None = None, to: str | None = None) -> list[OutboxMail]:
    with Session(get_engine(app)) as session:
        query = select(OutboxMail).order_by(OutboxMail.id)  # type: ignore[arg-type]
        if template:
            query = query.where(OutboxMail.template == template)
        if to:
            query = query.where(OutboxMail.to_email == to)
        return list(session.exec(query).all())


def token_of(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def body(names: list[str], emails: list[str], name: str = "A game", **settings: Any) -> dict[str, Any]:
    return {
        "name": name,
        "players": [{"name": n, "email": e} for n, e in zip(names, emails, strict=True)],
        "settings": settings,
    }


def created_and_confirmed(app: Flask, request: dict[str, Any], address: str = "127.0.0.1") -> dict[str, Any]:
    """Create a game over the API from ``address``, and confirm it as its host does if the service asks."""
    client = app.test_client()
    created = client.post("/api/games", json=request, environ_base={"REMOTE_ADDR": address})
    assert created.status_code == 201, created.get_json()
    game = created.get_json()
    asking = [m for m in mails(app, "confirm_game") if m.game_id == game["id"]]
    if asking:
        confirmed = client.post(
            "/api/games/confirm",
            headers=bearer(token_of(asking[0].context["confirm_url"])),
            environ_base={"REMOTE_ADDR": HOST_MACHINE},
        )
        assert confirmed.status_code == 200, confirmed.get_json()
        game = confirmed.get_json()
    return dict(game)


def invitations(app: Flask, game_id: int) -> dict[int, OutboxMail]:
    """The game's invitation mails by seat (in seat order)."""
    found = [m for m in mails(app, "invitation") if m.game_id == game_id]
    return dict(enumerate(found))
