"""The JSON API against each database the service runs on: SQLite (embedded) and PostgreSQL with Redis."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from sqlmodel import Session, select

from service.domain.models import OutboxMail
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
def outbox(api_app: Flask) -> Callable[..., list[OutboxMail]]:
    """The mails written so far, oldest first (optionally one template only)."""
    return functools.partial(read_outbox, api_app)


def read_outbox(app: Flask, template: str | None = None) -> list[OutboxMail]:
    """The mails ``app`` has written so far, oldest first (optionally one template only)."""
    with Session(get_engine(app)) as session:
        query = select(OutboxMail).order_by(OutboxMail.id)  # type: ignore[arg-type]
        if template:
            query = query.where(OutboxMail.template == template)
        return list(session.exec(query).all())


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
