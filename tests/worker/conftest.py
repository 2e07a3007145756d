"""The worker's domain operations in process, on SQLite and PostgreSQL, with a real SMTP server.

Time is moved, never waited for: the sweep and the drain take ``now``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from flask import Flask
from sqlmodel import select

from emails.delivery import backend_from_config
from service.domain import deadlines, delivery
from service.domain.models import Game, GameAction, OutboxMail
from service.domain.schemas import CreateGame
from service.infra.db import get_session
from tests.factories import confirmed_game, reseed_new_game
from tests.smtp import SMTPServer, smtp_server  # noqa: F401  (fixture)


@pytest.fixture(params=["sqlite", "postgres"])
def mail_app(request: pytest.FixtureRequest, make_app: Callable[..., Flask], smtp_server: SMTPServer) -> Flask:  # noqa: F811
    settings: dict[str, Any] = dict(smtp_server.settings, BASE_URL="https://smallworld.example")
    if request.param == "postgres":
        settings["DATABASE_URL"] = request.getfixturevalue("postgres_url")
    app = make_app(**settings)
    app.extensions["test.smtp"] = smtp_server
    return app


def new_game(app: Flask, players: int = 2, *, seed: str | None = None, **settings: Any) -> int:
    """A game started at once (seat 0 on turn), created and confirmed through the domain as the API would.
    With ``seed``, the game is dealt from that seed instead of a secret random one: the same game every run."""
    emails = [f"p{i}@example.org" for i in range(players)]
    request = CreateGame.model_validate(
        {
            "name": "Deadline test",
            "players": [{"name": f"Player {i}", "email": email} for i, email in enumerate(emails)],
            "settings": {"start_when_all_accepted": False, **settings},
        }
    )
    with app.app_context():
        zones = dict.fromkeys(emails, "Europe/Paris")  # as the players chose on their pages
        game, _ = confirmed_game(get_session(), request, app.extensions["smallworld.links"], time_zones=zones)
        if seed is not None:
            reseed_new_game(get_session(), game.id or 0, seed)
        return game.id or 0


def game_row(app: Flask, game_id: int) -> Game:
    with app.app_context():
        return get_session().get(Game, game_id)  # type: ignore[return-value]


def sweep(app: Flask, at: datetime, **options: Any) -> deadlines.SweepReport:
    with app.app_context():
        return deadlines.sweep(get_session(), app.extensions["smallworld.links"], now=at, **options)


def drain(app: Flask, at: datetime | None = None, **settings: Any) -> delivery.DeliveryReport:
    with app.app_context():
        mail_settings = delivery.MailSettings.from_config(app.config)
        if settings:
            mail_settings = delivery.MailSettings(**{**mail_settings.__dict__, **settings})
        return delivery.deliver_due_mail(
            get_session(),
            backend_from_config(app.config),
            app.extensions["smallworld.links"],
            mail_settings,
            now=at,
        )


def outbox(app: Flask, template: str | None = None, game_id: int | None = None) -> list[OutboxMail]:
    with app.app_context():
        query = select(OutboxMail).order_by(OutboxMail.id)  # type: ignore[arg-type]
        if template:
            query = query.where(OutboxMail.template == template)
        if game_id is not None:
            query = query.where(OutboxMail.game_id == game_id)
        return list(get_session().exec(query).all())


def logged(app: Flask, game_id: int, kind: str | None = None) -> list[GameAction]:
    with app.app_context():
        query = select(GameAction).where(GameAction.game_id == game_id).order_by(GameAction.version)  # type: ignore[arg-type]
        if kind:
            query = query.where(GameAction.kind == kind)
        return list(get_session().exec(query).all())
