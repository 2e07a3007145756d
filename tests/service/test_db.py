"""service.infra.db and the migrations: the schema on SQLite and PostgreSQL, UTC timestamps."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from urllib.parse import urlsplit

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask import Flask
from sqlalchemy import Engine, inspect
from sqlalchemy.exc import StatementError
from sqlmodel import SQLModel

from service.domain import status
from service.infra.db import alembic_config, get_engine, get_session, make_engine


def assert_schema_is_current(engine: Engine) -> None:
    """The database is at the newest migration and matches the models exactly."""
    head = ScriptDirectory.from_config(alembic_config(engine)).get_current_head()
    with engine.connect() as connection:
        context = MigrationContext.configure(connection)
        assert context.get_current_revision() == head
        assert compare_metadata(context, SQLModel.metadata) == []


def assert_downgrade_removes_every_table(engine: Engine) -> None:
    command.downgrade(alembic_config(engine), "base")
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    command.upgrade(alembic_config(engine), "head")
    assert_schema_is_current(engine)


def test_migrations_build_the_models_schema_on_sqlite(app: Flask) -> None:
    engine = get_engine(app)
    assert engine.dialect.name == "sqlite"
    assert_schema_is_current(engine)
    assert_downgrade_removes_every_table(engine)


@pytest.mark.postgres
def test_migrations_build_the_models_schema_on_postgresql(make_app: Callable[..., Flask], postgres_url: str) -> None:
    engine = get_engine(make_app(DATABASE_URL=postgres_url))
    assert engine.dialect.name == "postgresql"
    assert_schema_is_current(engine)
    assert_downgrade_removes_every_table(engine)


def recorded_round_trip(app: Flask, at: datetime) -> datetime | None:
    with app.app_context():
        status.record(get_session(), "example", at)
        get_session().commit()
    with app.app_context():  # a new session: the value comes from the database
        return status.recorded_at(get_session(), "example")


def test_timestamps_come_back_in_utc_from_sqlite(app: Flask) -> None:
    paris_summer = timezone(timedelta(hours=2))
    at = datetime(2024, 7, 1, 14, 0, tzinfo=paris_summer)

    assert recorded_round_trip(app, at) == datetime(2024, 7, 1, 12, 0, tzinfo=UTC)
    assert recorded_round_trip(app, at).tzinfo == UTC  # type: ignore[union-attr]


@pytest.mark.postgres
def test_timestamps_come_back_in_utc_from_postgresql(make_app: Callable[..., Flask], postgres_url: str) -> None:
    app = make_app(DATABASE_URL=postgres_url)
    at = datetime(2024, 7, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))

    assert recorded_round_trip(app, at) == datetime(2024, 7, 1, 12, 0, tzinfo=UTC)
    assert recorded_round_trip(app, at).tzinfo == UTC  # type: ignore[union-attr]


def test_a_timestamp_without_time_zone_is_refused(app: Flask) -> None:
    with app.app_context(), pytest.raises(StatementError, match="naive datetime"):
        status.record(get_session(), "example", datetime(2024, 7, 1, 12, 0))
        get_session().commit()


def test_recording_again_replaces_the_time(app: Flask) -> None:
    first = datetime(2024, 1, 1, tzinfo=UTC)
    assert recorded_round_trip(app, first) == first
    assert recorded_round_trip(app, first + timedelta(minutes=1)) == first + timedelta(minutes=1)


def test_a_database_that_cannot_be_reached_gets_503_with_retry_after_on_pages_and_the_api(
    make_app: Callable[..., Flask],
) -> None:
    """Nothing listens on the database's port (a restart, a failover): a page or an API call that needs it
    answers 503 with ``Retry-After`` and a readable message, never a 500 or a traceback."""
    app = make_app()
    # The app's engine now points where nothing listens (port 9, discard), as during a database restart.
    app.extensions["smallworld.db"] = make_engine("postgresql+psycopg://postgres@127.0.0.1:9/nowhere")
    client = app.test_client()
    link = app.extensions["smallworld.links"].turn_url(1, 0, "secret")
    page = client.get(urlsplit(link).path)
    assert page.status_code == 503, page.status_code
    assert page.headers["Retry-After"] == "5"
    assert "briefly unavailable" in page.get_data(as_text=True) and "Traceback" not in page.get_data(as_text=True)
    token = link.rsplit("/", 1)[-1]
    answer = client.get("/api/games/1", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 503
    assert answer.headers["Retry-After"] == "5"
    assert "briefly unavailable" in answer.get_json()["error"]
