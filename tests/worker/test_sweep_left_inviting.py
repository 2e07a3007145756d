"""The sweep's look for games left inviting though every seat accepted (a start that was lost), on SQLite and
PostgreSQL: each sweep looks among the seats accepted since the previous sweep, one sweep an hour (and the
first ever) at every inviting game; whichever finds a game starts it once. And a sweep with nothing due asks
once and is done, on one connection.

Every sweep is given its ``now``; nothing sleeps.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from flask import Flask
from sqlalchemy import event, make_url
from sqlalchemy.orm import Session as SqlSession

from service.domain import deadlines, lobby
from service.domain.models import Game, Seat, utcnow
from service.domain.schemas import CreateGame
from service.infra.db import get_engine, get_session
from tests.factories import confirmed_game

from .conftest import game_row, logged, outbox, sweep, sweeps_at_once

MINUTE = timedelta(minutes=1)


def inviting_game(app: Flask, name: str = "Waiting") -> int:
    """A game confirmed by its host, waiting for its two players to accept."""
    emails = [f"{name.lower()}{i}@example.org" for i in range(2)]
    request = CreateGame.model_validate(
        {"name": name, "players": [{"name": f"{name} {i}", "email": email} for i, email in enumerate(emails)]}
    )
    with app.app_context():
        game, _ = confirmed_game(get_session(), request, app.extensions["smallworld.links"])
        return game.id or 0


def accepted_without_start(app: Flask, game_id: int, at: datetime) -> None:
    """Every seat accepted at ``at`` and the game not started: what a lost start leaves."""
    with app.app_context():
        session = get_session()
        session.execute(sa.update(Seat).where(sa.column("game_id") == game_id).values(accepted_at=at))
        session.commit()


def started_once(app: Flask, game_id: int) -> bool:
    game = game_row(app, game_id)
    turns = [m for m in outbox(app, "your_turn") if m.game_id == game_id]
    return (game.status, game.version, len(turns), len(logged(app, game_id))) == ("active", 1, 1, 0)


def test_a_game_accepted_since_the_previous_sweep_is_started_by_the_next_once(mail_app: Flask) -> None:
    game_id = inviting_game(mail_app)
    now = utcnow()
    assert sweep(mail_app, now).started == 0  # the first sweep: a full look, and nothing is fully accepted
    accepted_without_start(mail_app, game_id, now + MINUTE)
    assert [sweep(mail_app, now + n * MINUTE).started for n in (2, 3, 63)] == [1, 0, 0]
    assert started_once(mail_app, game_id)


def test_an_accept_that_commits_late_is_found_within_the_margin(mail_app: Flask) -> None:
    """The accept's time is taken when its request starts; it may commit after the next sweep looked."""
    game_id = inviting_game(mail_app)
    now = utcnow()
    sweep(mail_app, now)
    accepted_without_start(mail_app, game_id, now - deadlines.INVITING_MARGIN + MINUTE)
    assert sweep(mail_app, now + MINUTE).started == 1
    assert started_once(mail_app, game_id)


def test_an_older_game_left_inviting_is_found_by_the_hourly_full_look(mail_app: Flask) -> None:
    """Accepted long before the previous sweep (a hand-repaired row, a game from before the sweep looked this
    way): the sweeps looking since the previous one do not see it; the next full look, within the hour, does."""
    game_id = inviting_game(mail_app)
    now = utcnow()
    sweep(mail_app, now)
    accepted_without_start(mail_app, game_id, now - timedelta(days=1))
    later = [now + n * MINUTE for n in (1, 30, 59)]
    assert [sweep(mail_app, at).started for at in later] == [0, 0, 0]
    assert game_row(mail_app, game_id).status == "inviting"
    hour = now + deadlines.FULL_INVITING_LOOK_EVERY
    assert [sweep(mail_app, at).started for at in (hour, hour + MINUTE)] == [1, 0]
    assert started_once(mail_app, game_id)


def test_the_first_sweep_looks_at_every_inviting_game(mail_app: Flask) -> None:
    game_id = inviting_game(mail_app)
    now = utcnow()
    accepted_without_start(mail_app, game_id, now - timedelta(days=30))
    assert [sweep(mail_app, now + n * MINUTE).started for n in (0, 1)] == [1, 0]
    assert started_once(mail_app, game_id)


def test_concurrent_sweeps_start_a_game_left_inviting_once(mail_app: Flask) -> None:
    """Four first sweeps at once, each looking at every game: each game starts once, and one sweep of the
    four recorded the full look."""
    ids = [inviting_game(mail_app, f"Race{n}") for n in range(3)]
    now = utcnow()
    for game_id in ids:
        accepted_without_start(mail_app, game_id, now - timedelta(days=1))
    reports = sweeps_at_once(mail_app, now, 4)
    assert sum(r.started for r in reports) == len(ids)
    assert sum(r.errors for r in reports) == 0
    assert all(started_once(mail_app, game_id) for game_id in ids)


def test_a_sweep_with_nothing_due_is_one_transaction_on_one_connection(mail_app: Flask) -> None:
    """Its recorded times, its own record and one look at every part; the parts with nothing to do do not
    run. A checkout from the pool is a ping of the connection, each transaction a BEGIN and a COMMIT."""
    inviting_game(mail_app)  # something to look at, not due
    now = utcnow()
    sweep(mail_app, now)
    engine = get_engine(mail_app)
    seen: list[str] = []

    def statement(conn: Any, cursor: Any, text: str, *_: Any) -> None:
        if not text.lstrip().upper().startswith("BEGIN"):  # SQLite's BEGIN IMMEDIATE, sent by the engine
            seen.append(text.split()[0].upper())

    listeners = [
        (engine, "before_cursor_execute", statement),
        (engine.pool, "checkout", lambda *_: seen.append("checkout")),
        (engine, "commit", lambda *_: seen.append("commit")),
        (engine, "rollback", lambda *_: seen.append("rollback")),
    ]
    for target, name, listener in listeners:
        event.listen(target, name, listener)
    try:
        report = sweep(mail_app, now + MINUTE)
    finally:
        for target, name, listener in listeners:
            event.remove(target, name, listener)
    assert (report.auto_passed, report.reminders, report.started, report.lapsed, report.tallied) == (0, 0, 0, 0, 0)
    assert seen == ["checkout", "SELECT", "UPDATE", "SELECT", "commit"]


def test_a_sweep_that_finds_work_runs_it_on_its_one_connection(mail_app: Flask) -> None:
    """A game left inviting, found by the one look and started in the same sweep, with one checkout from the
    pool."""
    game_id = inviting_game(mail_app)
    now = utcnow()
    sweep(mail_app, now)
    accepted_without_start(mail_app, game_id, now)
    checkouts: list[int] = []
    engine = get_engine(mail_app)

    def count(*_: Any) -> None:
        checkouts.append(1)

    event.listen(engine.pool, "checkout", count)
    try:
        report = sweep(mail_app, now + MINUTE)
    finally:
        event.remove(engine.pool, "checkout", count)
    assert (report.started, report.errors, len(checkouts)) == (1, 0, 1)
    with mail_app.app_context():
        assert get_session().get(Game, game_id).status == "active"  # type: ignore[union-attr]


def test_a_sweep_s_record_alone_is_not_flushed_to_disk_before_its_commit_returns(
    make_app: Callable[..., Flask], postgres_url: str
) -> None:
    """PostgreSQL: a sweep's transaction that only records times commits without waiting for the disk (lost
    in a crash of the server, it is as if that sweep had not run); one that pushes deadlines back after an
    outage waits, as every other write does (the tests' own connections do not wait: not these)."""
    url = make_url(postgres_url)
    options = str(url.query["options"]).replace("synchronous_commit=off", "synchronous_commit=on")
    app = make_app(DATABASE_URL=url.update_query_dict({"options": options}).render_as_string(hide_password=False))
    game_id = inviting_game(app)
    accepted_without_start(app, game_id, utcnow())
    with app.app_context():
        session = get_session()
        lobby.start_if_all_accepted(session, session.get_one(Game, game_id), app.extensions["smallworld.links"])
        session.commit()
    deadline = game_row(app, game_id).deadline_at
    assert deadline is not None
    settings: list[str] = []

    def setting(session: Any) -> None:
        if session.get_bind().dialect.name == "postgresql":  # not the embedded broker's SQLite
            settings.append(session.execute(sa.text("SELECT current_setting('synchronous_commit')")).scalar_one())

    event.listen(SqlSession, "before_commit", setting)
    try:
        sweep(app, deadline - 3 * MINUTE)  # the first sweep (its record is new) and a reminder
        sweep(app, deadline - 2 * MINUTE)  # nothing due
        outage = sweep(app, deadline + timedelta(hours=1))  # an outage: the deadline is pushed back
    finally:
        event.remove(SqlSession, "before_commit", setting)
    assert outage.pushed_back == 1
    # The first sweep's record and its reminder; the next sweep's record; the outage's push back.
    assert settings == ["on", "on", "off", "on"]
