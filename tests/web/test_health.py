"""GET /health: database and broker reachability, and the last deadline sweep."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from flask import Flask

from service import create_app
from service.domain import status
from service.infra.db import get_engine, get_session

UNREACHABLE_REDIS = "redis://127.0.0.1:1/0"
UNREACHABLE_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:1/test"


def test_the_embedded_service_is_healthy(client: object) -> None:
    response = client.get("/health")  # type: ignore[attr-defined]

    assert response.status_code == 200
    assert response.json == {
        "status": "ok",
        "database": {"reachable": True},
        "broker": {"reachable": True},
        "last_deadline_sweep": None,
    }


def test_health_shows_when_the_deadlines_were_last_swept(app: Flask) -> None:
    swept_at = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    with app.app_context():
        status.record(get_session(), status.LAST_DEADLINE_SWEEP, swept_at)
        get_session().commit()

    response = app.test_client().get("/health")

    assert response.json["last_deadline_sweep"] == "2024-05-01T12:30:00+00:00"


def test_an_unreachable_broker_makes_the_service_unavailable(
    make_app: Callable[..., Flask],
) -> None:
    app = make_app(BROKER_URL=UNREACHABLE_REDIS)

    started = time.monotonic()
    response = app.test_client().get("/health")

    assert time.monotonic() - started < 10
    assert response.status_code == 503
    assert response.json["status"] == "unavailable"
    assert response.json["broker"]["reachable"] is False
    assert response.json["database"] == {"reachable": True}


def test_an_unreachable_database_makes_the_service_unavailable(tmp_path: object) -> None:
    app = create_app({"INSTANCE_PATH": str(tmp_path), "DATABASE_URL": UNREACHABLE_POSTGRES})

    response = app.test_client().get("/health")

    assert response.status_code == 503
    assert response.json["database"]["reachable"] is False
    assert response.json["broker"] == {"reachable": True}
    assert response.json["last_deadline_sweep"] is None
    get_engine(app).dispose()


@pytest.mark.postgres
@pytest.mark.redis
def test_postgresql_and_redis_are_reported_reachable(
    make_app: Callable[..., Flask], postgres_url: str, redis_url: str
) -> None:
    app = make_app(DATABASE_URL=postgres_url, BROKER_URL=redis_url)

    response = app.test_client().get("/health")

    assert response.status_code == 200
    assert response.json["database"] == {"reachable": True}
    assert response.json["broker"] == {"reachable": True}


@pytest.mark.postgres
def test_an_unreachable_redis_broker_beside_postgresql_is_reported(
    make_app: Callable[..., Flask], postgres_url: str
) -> None:
    app = make_app(DATABASE_URL=postgres_url, BROKER_URL=UNREACHABLE_REDIS)

    response = app.test_client().get("/health")

    assert response.status_code == 503
    assert response.json["database"] == {"reachable": True}
    assert response.json["broker"]["reachable"] is False
