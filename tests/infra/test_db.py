"""service.infra.db and the migrations: the schema on SQLite and PostgreSQL, UTC timestamps."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask import Flask
from sqlalchemy import Engine, inspect
from sqlalchemy.exc import StatementError
from sqlmodel import SQLModel

from emails.messages import from_json
from service.domain import status
from service.infra import db
from service.infra.db import alembic_config, get_engine, get_session, make_engine, upgrade_database


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
    link = app.extensions["smallworld.links"].turn_url(1, 0, "secret", serial=0)
    page = client.get(urlsplit(link).path)
    assert page.status_code == 503, page.status_code
    assert page.headers["Retry-After"] == "5"
    assert "briefly unavailable" in page.get_data(as_text=True) and "Traceback" not in page.get_data(as_text=True)
    token = link.rsplit("/", 1)[-1]
    answer = client.get("/api/games/1", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 503
    assert answer.headers["Retry-After"] == "5"
    assert "briefly unavailable" in answer.get_json()["error"]


def _backend_pid(engine: Engine) -> int:
    with engine.connect() as connection:
        pid: int = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
    return pid


def _end_backend(postgres_url: str, pid: int) -> None:
    """End the server's side of a connection (as a restart or a failover does) and wait until it is gone."""
    other = make_engine(postgres_url)
    with other.connect() as connection:
        connection.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        gone = sa.text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid")
        for _ in range(500):
            connection.rollback()
            if not connection.execute(gone, {"pid": pid}).scalar_one():
                break
            time.sleep(0.01)
        else:
            raise AssertionError(f"backend {pid} still there")
    other.dispose()


def _counting_pings(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    pings: list[object] = []
    ping = engine.dialect.do_ping

    def counted(dbapi_connection: Any) -> bool:
        pings.append(dbapi_connection)
        return ping(dbapi_connection)

    monkeypatch.setattr(engine.dialect, "do_ping", counted)
    return pings


def test_a_pooled_connection_the_database_ended_is_replaced_before_a_request_uses_it(
    make_app: Callable[..., Flask], postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database ended the pooled connection between two requests, a moment after the first (a restart, a
    failover): the next request gets a new connection and its answer, not a 503. The connection's socket told
    it (the pool pings it only then); a connection in use a moment ago with a quiet socket is not pinged."""
    app = make_app(DATABASE_URL=postgres_url)
    engine = get_engine(app)
    pings = _counting_pings(engine, monkeypatch)
    client = app.test_client()
    assert client.get("/health").get_json()["database"]["reachable"]
    pid = _backend_pid(engine)
    assert _backend_pid(engine) == pid and pings == []  # the same connection, handed out without a ping
    _end_backend(postgres_url, pid)
    answer = client.get("/health")
    assert answer.get_json()["database"] == {"reachable": True}, answer.get_json()
    assert len(pings) == 1  # the ended one, pinged because its socket had the server's goodbye to read
    assert _backend_pid(engine) != pid


def test_a_pooled_connection_idle_for_a_while_is_pinged_before_it_is_handed_out(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the socket cannot tell (a connection dropped without a word, by a firewall or a lost network) takes
    idle time: a connection idle longer than ``PING_AFTER_IDLE_SECONDS`` is pinged as the pool's pre-ping does,
    and replaced when the ping fails."""
    engine = make_engine(postgres_url)
    pings = _counting_pings(engine, monkeypatch)
    pid = _backend_pid(engine)
    monkeypatch.setattr(db, "PING_AFTER_IDLE_SECONDS", 0.0)
    assert _backend_pid(engine) == pid and len(pings) == 1  # pinged, alive, handed out

    ping = engine.dialect.do_ping

    def failed_once(dbapi_connection: Any) -> bool:  # the first fails as on a connection lost without a word
        if len(pings) == 1:
            pings.append(dbapi_connection)
            dbapi_connection.close()
            return bool(dbapi_connection.execute("SELECT 1"))
        return ping(dbapi_connection)

    monkeypatch.setattr(engine.dialect, "do_ping", failed_once)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT 1").scalar_one() == 1
    assert len(pings) == 3  # the failed ping, then the new connection's
    monkeypatch.setattr(db, "PING_AFTER_IDLE_SECONDS", 60.0)
    assert _backend_pid(engine) != pid
    engine.dispose()


#: Rows as the release before typed messages wrote them (its contexts, its dedupe keys), for game 1.
_URL = "https://smallworld.example/play/t"
_BOARD = {"players": [{"name": "Ann", "active": None, "declined": []}], "regions": [{"terrain": "sea"}], "you": 0}
EARLIER_ROWS: list[tuple[str, dict[str, Any], str]] = [
    (
        "invitation",
        {"game_name": "G", "player_name": "Ann", "players": ["Ann", "Bob"], "invite_url": _URL, "turn_url": _URL,
         "turn_length_seconds": 3600, "starts_at_once": False},
        "game:1:invite:1",
    ),
    (
        "invitation",
        {"game_name": "G", "player_name": "Cy", "players": ["Ann", "Cy"], "turn_url": _URL, "invite_url": _URL,
         "replacing": "Bob", "your_turn": True, "turn_length_seconds": 3600, "starts_at_once": True},
        "game:1:replace:1:Zk9-x_3:q",
    ),
    ("admin_link", {"game_name": "G", "admin_url": _URL}, "game:1:admin-link"),
    ("admin_login", {"login_url": _URL, "valid_minutes": 30}, "site-admin:3:sign-in:14802465"),
    (
        "your_turn",
        {"game_name": "G", "player_name": "Ann", "turn": 1, "turns": 10, "turn_url": _URL,
         "deadline_at": "2026-03-03T13:00:00+00:00", "version": 4, "step_key": "1:0:-", "seat": 0,
         "defending": False, "hand": 0, "board": _BOARD | {"turn": 1, "turns": 10}},
        "game:1:step:1:0:-",
    ),
    (
        "reminder",
        {"game_name": "G", "player_name": "Ann", "turn_url": _URL, "deadline_at": "2026-03-03T13:00:00+00:00",
         "step_key": "1:0:-", "before_seconds": 7200, "defending": False, "turn": 1, "turns": 10},
        "game:1:reminder:1:0:-:7200:0",
    ),
    (
        "auto_passed",
        {"game_name": "G", "player_name": "Ann", "reason": "deadline", "defending": False},
        "game:1:auto-pass:5",
    ),
    (
        "host_alert",
        {"game_name": "G", "player_name": "Ann", "auto_passes": 2, "admin_url": _URL},
        "game:1:alert:0:2",
    ),
    (
        "game_over",
        {"game_name": "G", "player_name": "Ann", "seed": "ab", "your_seat": 0, "standings": [
            {"player": 0, "coins": 9, "tokens_on_board": 3, "place": 1, "tie_break": False, "name": "Ann"}]},
        "game:1:over:0",
    ),
    (
        "admin_change",
        {"game_name": "G", "player_name": "Ann", "change": "paused", "actor": "host",
         "details": {"reason": "moving", "remaining_seconds": 60}, "deadline_at": None, "pause_reason": "moving"},
        "game:1:admin:6:2",
    ),
    (
        "admin_change",
        {"game_name": "G", "player_name": "Ann", "change": "outage", "actor": "system",
         "details": {"from": "2026-03-01T09:10:00+00:00", "to": "2026-03-01T11:30:00+00:00", "seconds": 8400},
         "deadline_at": "2026-03-01T12:20:00+00:00"},
        "game:1:outage:2026-03-01T09:10:00+00:00:0",
    ),
]  # fmt: skip


def assert_earlier_mail_is_delivered_after_the_upgrade(engine: Engine) -> None:
    """The migration to typed messages adds what each pending or failed row's dedupe key names to its
    context, so that the row makes its message again, with the same dedupe key; sent rows stay as they were."""
    upgrade_database(engine, "309f8dc1f0fc")
    games = sa.table(*("games", *(sa.column(c) for c in ("name", "status", "settings", "version", "seed"))),
                     sa.column("admin_secret"), sa.column("host_email"), sa.column("created_at"))  # fmt: skip
    outbox = sa.table("outbox", *(sa.column(c) for c in ("id", "game_id", "to_email", "template", "message_id")),
                      sa.column("context", sa.JSON()), sa.column("dedupe_key"), sa.column("status"),
                      sa.column("attempts"), sa.column("created_at"))  # fmt: skip
    now = datetime.now(UTC)
    with engine.begin() as connection:
        connection.execute(
            games.insert().values(
                name="G", status="active", settings="{}", version=6, seed="ab", admin_secret="s", host_email="a@x.org",
                created_at=now,
            )
        )  # fmt: skip
        for n, (template, context, key) in enumerate([*EARLIER_ROWS, ("auto_passed", {"sent": 1}, "k")]):
            connection.execute(
                outbox.insert().values(
                    game_id=None if template == "admin_login" else 1, to_email="a@x.org", template=template,
                    message_id=f"<{n}@x>", context=context, dedupe_key=key, attempts=0, created_at=now,
                    status="sent" if key == "k" else ("failed" if n % 3 == 0 else "pending"),
                )
            )  # fmt: skip
    upgrade_database(engine)
    with engine.connect() as connection:
        rows = connection.execute(
            sa.select(outbox.c.template, outbox.c.context, outbox.c.dedupe_key).order_by(outbox.c.id)
        ).all()
    for (template, earlier, key), row in zip(EARLIER_ROWS, rows, strict=False):
        message = from_json(row.template, row.context)
        assert message.dedupe_key == key, template
        assert {k: v for k, v in row.context.items() if k in earlier} == earlier  # nothing of it changed
        assert getattr(message, "game_id", 1) == 1
    assert rows[-1].context == {"sent": 1}
    assert len(rows) == len(EARLIER_ROWS) + 1


def test_mail_queued_before_messages_were_typed_is_delivered_after_the_upgrade_on_sqlite(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'earlier.sqlite'}")
    try:
        assert_earlier_mail_is_delivered_after_the_upgrade(engine)
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_mail_queued_before_messages_were_typed_is_delivered_after_the_upgrade_on_postgresql(
    postgres_url: str,
) -> None:
    engine = make_engine(postgres_url)
    try:
        assert_earlier_mail_is_delivered_after_the_upgrade(engine)
    finally:
        engine.dispose()
