"""Admin acts against the real deadline sweep (``service.domain.deadlines.sweep``, what the Celery task
runs), on SQLite and on PostgreSQL. Every sweep is given its ``now``; nothing sleeps."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from sqlmodel import Session, select

import rules
from service.domain import admin, deadlines
from service.domain.models import Game, GameAction, utcnow
from service.infra.db import get_engine, get_session

from .browsing import audit_of, mails_of, new_game

#: Tests leap days ahead between sweeps: that is not the service being down.
NO_OUTAGE = timedelta(days=3650)


@pytest.fixture(params=["sqlite", "postgres"])
def sweep_app(request: pytest.FixtureRequest, make_app: Callable[..., Flask]) -> Flask:
    """SQLite, and PostgreSQL (where the sweep locks rows with SKIP LOCKED); the embedded broker on both."""
    if request.param == "sqlite":
        return make_app()
    return make_app(DATABASE_URL=request.getfixturevalue("postgres_url"))


def sweep(app: Flask, at: datetime) -> deadlines.SweepReport:
    with app.app_context():
        return deadlines.sweep(get_session(), app.extensions["smallworld.links"], now=at, outage_after=NO_OUTAGE)


def run(app: Flask, operation: Any, *args: Any, **kwargs: Any) -> Game:
    """An admin act through the domain, as the page or the API does (its own session)."""
    with app.app_context():
        return operation(get_session(), *args, **kwargs)


def row(app: Flask, game_id: int) -> Game:
    with Session(get_engine(app)) as session:
        game = session.get(Game, game_id)
        assert game is not None
        return game


def auto_passes(app: Flask, game_id: int) -> list[tuple[int | None, dict[str, Any] | None]]:
    with Session(get_engine(app)) as session:
        query = select(GameAction).where(GameAction.game_id == game_id, GameAction.kind == "auto_pass")
        return [(a.seat, a.action) for a in session.exec(query.order_by(GameAction.version))]


def awaiting(app: Flask, game_id: int) -> set[int]:
    return rules.awaiting(rules.read_state(row(app, game_id).state))  # type: ignore[arg-type]


def test_a_paused_game_is_never_auto_passed(sweep_app: Flask) -> None:
    game_id = new_game(sweep_app, name="Paused")
    links = sweep_app.extensions["smallworld.links"]
    deadline = row(sweep_app, game_id).deadline_at
    assert deadline is not None
    run(sweep_app, admin.pause, game_id, admin.HOST, links, "holidays", now=deadline - timedelta(hours=1))
    for later in (timedelta(seconds=1), timedelta(days=1), timedelta(days=300)):
        report = sweep(sweep_app, deadline + later)
        assert (report.auto_passed, report.reminders, report.errors) == (0, 0, 0)
    assert auto_passes(sweep_app, game_id) == []
    assert row(sweep_app, game_id).status == "paused"


def test_a_resumed_game_gets_exactly_the_time_that_was_left(sweep_app: Flask) -> None:
    game_id = new_game(sweep_app, name="Resumed", turn_length_seconds=48 * 3600)
    links = sweep_app.extensions["smallworld.links"]
    deadline = row(sweep_app, game_id).deadline_at
    assert deadline is not None
    paused_at = deadline - timedelta(hours=5, minutes=7, seconds=3)
    run(sweep_app, admin.pause, game_id, admin.HOST, links, "holidays", now=paused_at)
    assert row(sweep_app, game_id).paused_remaining == 5 * 3600 + 7 * 60 + 3

    resumed_at = deadline + timedelta(days=9)  # long after the old deadline
    run(sweep_app, admin.resume, game_id, admin.HOST, links, now=resumed_at)
    new_deadline = resumed_at + timedelta(hours=5, minutes=7, seconds=3)
    assert row(sweep_app, game_id).deadline_at == new_deadline
    assert sweep(sweep_app, new_deadline - timedelta(seconds=1)).auto_passed == 0
    assert auto_passes(sweep_app, game_id) == []
    assert sweep(sweep_app, new_deadline + timedelta(seconds=1)).auto_passed == 1
    assert auto_passes(sweep_app, game_id) == [(0, {"reason": "deadline"})]
    assert [e.act for e in audit_of(sweep_app, game_id)] == ["pause", "resume"]


def test_a_deadline_extended_while_a_sweep_runs_is_not_auto_passed_at_the_old_time(
    sweep_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id = new_game(sweep_app, name="Extended")
    links = sweep_app.extensions["smallworld.links"]
    old = row(sweep_app, game_id).deadline_at
    assert old is not None
    auto_pass = deadlines.auto_pass
    extended: list[Game] = []

    def host_extends_meanwhile(session: Session, due_id: int, seat: int, *args: Any, **kwargs: Any) -> Any:
        # The sweep has read the game, due at its old deadline, and is about to pass it (with the version it
        # read): the host's extension commits just then. It runs in the sweep's own transaction, because
        # from another connection it would wait for the row the sweep holds (the first line of defence);
        # what is checked here is the second, the version guard, on the sweep's own path.
        if due_id == game_id and not extended:
            extended.append(admin.extend_deadline(session, game_id, admin.HOST, links, by=timedelta(hours=6)))
        return auto_pass(session, due_id, seat, *args, **kwargs)

    monkeypatch.setattr(deadlines, "auto_pass", host_extends_meanwhile)
    report = sweep(sweep_app, old + timedelta(seconds=5))
    assert extended, f"the sweep found the game due: {report}"
    assert (report.auto_passed, report.errors) == (0, 0)
    assert auto_passes(sweep_app, game_id) == []
    assert mails_of(sweep_app, game_id, "auto_passed") == []
    assert row(sweep_app, game_id).deadline_at == old + timedelta(hours=6)
    assert [e.act for e in audit_of(sweep_app, game_id)] == ["extend"]
    monkeypatch.undo()

    # Sweeps at the old time and after do nothing more; at the new deadline, the turn is passed, once.
    assert sweep(sweep_app, old + timedelta(hours=1)).auto_passed == 0
    assert sweep(sweep_app, old + timedelta(hours=6, seconds=1)).auto_passed == 1
    assert sweep(sweep_app, old + timedelta(hours=6, seconds=31)).auto_passed == 0
    assert auto_passes(sweep_app, game_id) == [(0, {"reason": "deadline"})]


def test_a_removed_player_s_turn_is_passed_at_the_next_sweep_each_time_it_comes(sweep_app: Flask) -> None:
    game_id = new_game(sweep_app, name="Removed")
    links = sweep_app.extensions["smallworld.links"]
    run(sweep_app, admin.remove_player, game_id, admin.HOST, links, 0)
    assert [e.act for e in audit_of(sweep_app, game_id)] == ["remove"]
    # Only the removed player is mailed (issue 18: a host's act mails only those it concerns).
    assert [m.context["change"] for m in mails_of(sweep_app, game_id, "admin_change")] == ["player_removed"]

    report = sweep(sweep_app, utcnow() + timedelta(seconds=1))
    assert report.auto_passed == 1
    assert auto_passes(sweep_app, game_id) == [(0, {"reason": "deadline"})]
    assert awaiting(sweep_app, game_id) == {1}
    assert row(sweep_app, game_id).deadline_at > utcnow() + timedelta(hours=47), "the next player has a whole turn"

    # Seats 1 and 2 are passed by the host; seat 0's next turn is due at once, and it gets no turn mail.
    turn_mails = len([m for m in mails_of(sweep_app, game_id, "your_turn") if m.to_email.startswith("p0@")])
    run(sweep_app, admin.pass_now, game_id, admin.HOST, links)
    run(sweep_app, admin.pass_now, game_id, admin.HOST, links)
    assert awaiting(sweep_app, game_id) == {0}
    assert row(sweep_app, game_id).deadline_at <= utcnow()  # type: ignore[operator]
    assert len([m for m in mails_of(sweep_app, game_id, "your_turn") if m.to_email.startswith("p0@")]) == turn_mails
    assert sweep(sweep_app, utcnow() + timedelta(seconds=1)).auto_passed == 1
    assert [seat for seat, _ in auto_passes(sweep_app, game_id)] == [0, 1, 2, 0]


def test_a_player_removed_while_the_game_is_paused_is_passed_as_soon_as_it_resumes(sweep_app: Flask) -> None:
    game_id = new_game(sweep_app, name="Removed while paused")
    links = sweep_app.extensions["smallworld.links"]
    run(sweep_app, admin.pause, game_id, admin.HOST, links, "a break")
    run(sweep_app, admin.remove_player, game_id, admin.HOST, links, 0)
    assert sweep(sweep_app, utcnow() + timedelta(days=3)).auto_passed == 0
    resumed_at = utcnow()
    run(sweep_app, admin.resume, game_id, admin.HOST, links, now=resumed_at)
    assert row(sweep_app, game_id).deadline_at == resumed_at
    assert sweep(sweep_app, resumed_at + timedelta(seconds=1)).auto_passed == 1
    assert [e.act for e in audit_of(sweep_app, game_id)] == ["pause", "remove", "resume"]
