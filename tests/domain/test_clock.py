"""service.domain.clock: the game clock's rules (ARCHITECTURE §5), and that it is the one writer of its columns."""

from __future__ import annotations

import doctest
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session, col, select

from service.domain import clock as clock_module
from service.domain.clock import Clock, next_reminder_at, set_clock
from service.domain.models import Game
from service.domain.schemas import GameSettings
from tests import factories

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOUR = 3600
DAY = 24 * HOUR


def running(deadline_in: int = 48 * HOUR, reminders: tuple[int, ...] = (DAY, 2 * HOUR)) -> Clock:
    return Clock(reminders_before=reminders).start_step(NOW, deadline_in)


def test_a_step_starts_with_its_deadline_and_its_first_reminder_ahead() -> None:
    clock = running()
    assert clock.deadline_at == NOW + timedelta(hours=48)
    assert clock.reminders_due_at == NOW + timedelta(hours=24)
    assert (clock.paused_remaining, clock.step_started_at) == (None, NOW)
    assert clock.remaining(NOW + timedelta(hours=47)) == HOUR


def test_a_reminder_further_back_than_the_step_is_long_never_comes() -> None:
    short = running(deadline_in=12 * HOUR)  # a redeploy step: the 24-hour reminder is before it began
    assert short.reminders_due_at == NOW + timedelta(hours=10)
    assert short.reminders_due(NOW + timedelta(hours=11)) == [2 * HOUR]
    assert running().reminders_due(NOW + timedelta(hours=47)) == [2 * HOUR, DAY]
    assert running().reminders_due(NOW + timedelta(hours=23)) == []


def test_a_step_in_a_paused_game_keeps_its_whole_length_for_the_resume() -> None:
    clock = Clock(reminders_before=(HOUR,)).start_step(NOW, 48 * HOUR, paused=True)
    assert (clock.deadline_at, clock.reminders_due_at, clock.paused_remaining) == (None, None, 48 * HOUR)
    assert clock.step_started_at == NOW
    assert clock.resume(NOW + timedelta(days=3)).deadline_at == NOW + timedelta(days=5)


def test_pause_keeps_the_time_left_and_resume_sets_the_deadline_to_now_plus_that_time() -> None:
    paused = running().pause(NOW + timedelta(hours=10))
    assert (paused.deadline_at, paused.reminders_due_at, paused.paused_remaining) == (None, None, 38 * HOUR)
    assert paused.remaining(NOW + timedelta(days=30)) == 38 * HOUR  # the clock is stopped
    resumed = paused.resume(NOW + timedelta(days=2))
    assert resumed.deadline_at == NOW + timedelta(days=2, hours=38)
    assert resumed.reminders_due_at == resumed.deadline_at - timedelta(hours=24)
    assert resumed.paused_remaining is None
    assert resumed.step_started_at == NOW  # the same step


def test_a_pause_after_the_deadline_keeps_no_time() -> None:
    assert running().pause(NOW + timedelta(hours=50)).paused_remaining == 0


def test_an_extension_moves_the_deadline_and_its_reminders_with_it() -> None:
    by = running().extend(NOW + timedelta(hours=30), by=timedelta(hours=24))
    assert by.deadline_at == NOW + timedelta(hours=72)
    assert by.reminders_due_at == NOW + timedelta(hours=48)  # the 24-hour reminder, again ahead
    to = running().extend(NOW, to=NOW + timedelta(hours=3))
    assert (to.deadline_at, to.reminders_due_at) == (NOW + timedelta(hours=3), NOW + timedelta(hours=1))
    assert Clock().extend(NOW, by=timedelta(hours=1)).deadline_at == NOW + timedelta(hours=1)  # from now
    with pytest.raises(ValueError, match="one of them"):
        running().extend(NOW, by=timedelta(hours=1), to=NOW)


def test_a_vacation_and_an_outage_push_a_running_deadline_back() -> None:
    vacation = running().vacation(NOW + timedelta(hours=1), 2 * DAY)
    assert vacation.deadline_at == NOW + timedelta(days=4)
    gap = timedelta(hours=3)
    pushed = running(deadline_in=2 * HOUR, reminders=(HOUR,)).push_back(NOW + gap, gap)
    # The reminder that fell in the outage comes as long after as the outage lasted.
    assert (pushed.deadline_at, pushed.reminders_due_at) == (NOW + timedelta(hours=5), NOW + timedelta(hours=4))
    for stopped in (Clock(), running().pause(NOW)):
        with pytest.raises(ValueError, match="running deadline"):
            stopped.vacation(NOW, DAY)
        with pytest.raises(ValueError, match="running deadline"):
            stopped.push_back(NOW, gap)


def test_a_seat_without_time_is_due_at_once_or_has_none_left_on_resume() -> None:
    later = NOW + timedelta(hours=5)
    ran_out = running().run_out(later)
    assert (ran_out.deadline_at, ran_out.reminders_due_at) == (later, None)
    assert running().pause(NOW).run_out(later).paused_remaining == 0
    assert running().pause(NOW).run_out(later).resume(later).deadline_at == later


def test_a_newcomer_gets_a_fresh_deadline_for_the_same_step() -> None:
    restarted = running().restart(NOW + timedelta(hours=40), 48 * HOUR)
    assert restarted.deadline_at == NOW + timedelta(hours=88)
    assert restarted.reminders_due_at == NOW + timedelta(hours=64)
    assert restarted.step_started_at == NOW


def test_the_next_reminder_after_a_sweep_and_none_after_the_last() -> None:
    clock = running()
    assert clock.reminded(NOW + timedelta(hours=24)).reminders_due_at == NOW + timedelta(hours=46)
    assert clock.reminded(NOW + timedelta(hours=46)).reminders_due_at is None
    assert clock.pause(NOW).reminded(NOW).reminders_due_at is None


def test_a_stopped_clock_has_no_deadline_nor_reminder() -> None:
    stopped = running().stop()
    assert (stopped.deadline_at, stopped.reminders_due_at, stopped.running) == (None, None, False)
    assert stopped.remaining(NOW) == 0


def test_the_clock_answers_the_deadline_the_time_left_and_the_time_kept_while_paused() -> None:
    clock = running()
    assert clock.deadline == NOW + timedelta(hours=48)
    assert clock.time_left(NOW + timedelta(hours=47, minutes=30)) == timedelta(minutes=30)
    assert clock.time_left(NOW + timedelta(hours=50)) == timedelta(0)  # never below zero
    assert clock.paused_left is None  # it runs
    assert clock.overdue(NOW + timedelta(hours=47)) == timedelta(0)
    assert clock.overdue(NOW + timedelta(hours=50)) == timedelta(hours=2)
    paused = clock.pause(NOW + timedelta(hours=10))
    assert (paused.deadline, paused.paused_left) == (None, 38 * HOUR)
    assert paused.time_left(NOW + timedelta(days=30)) == timedelta(hours=38)  # the clock is stopped
    assert paused.overdue(NOW + timedelta(days=30)) == timedelta(0)
    assert (Clock().deadline, Clock().paused_left, Clock().time_left(NOW)) == (None, None, timedelta(0))


def test_the_clock_s_clauses_select_the_games_its_answers_describe(db_session: Session) -> None:
    def game_with(clock: Clock) -> int:
        game = factories.GameFactory()
        set_clock(game, clock)
        db_session.add(game)
        db_session.flush()
        return game.id or 0

    hourly = Clock(reminders_before=(HOUR,))
    passed = game_with(hourly.start_step(NOW - timedelta(hours=3), 2 * HOUR))  # due an hour ago, its reminder two
    ahead = game_with(hourly.start_step(NOW, 2 * HOUR))  # due in two hours, its reminder in one
    paused = game_with(hourly.start_step(NOW, 2 * HOUR, paused=True))
    ids = [passed, ahead, paused]

    def chosen(clause: sa.ColumnElement[bool]) -> set[int]:
        return set(db_session.exec(select(Game.id).where(col(Game.id).in_(ids), clause)).all())

    assert chosen(Clock.due_clause(NOW)) == {passed} == chosen(Clock.reminders_due_clause(NOW))
    assert chosen(Clock.running_clause()) == {passed, ahead}
    assert chosen(Clock.due_between_clause(NOW - timedelta(hours=2), NOW)) == {passed}
    assert chosen(Clock.due_between_clause(NOW - timedelta(minutes=30), NOW)) == set()
    assert chosen(Clock.overdue_clause(NOW, timedelta(minutes=30))) == {passed}
    assert chosen(Clock.overdue_clause(NOW, timedelta(hours=1))) == set()  # overdue by an hour, not more
    in_order = select(Game.id).where(col(Game.id).in_(ids))
    assert list(db_session.exec(in_order.order_by(Clock.soonest_first())).all()) == [passed, ahead, paused]
    rows = db_session.execute(select(col(Game.id), *Clock.columns()).where(col(Game.id).in_(ids))).all()
    read = {row.id: Clock.read(row) for row in rows}
    assert read == {game_id: Clock.read(db_session.get_one(Game, game_id)) for game_id in ids}
    assert read[paused].paused_left == 2 * HOUR and read[ahead].deadline == NOW + timedelta(hours=2)


def test_next_reminder_at_is_the_earliest_still_ahead() -> None:
    deadline = NOW + timedelta(hours=48)
    assert next_reminder_at(deadline, [DAY, 2 * HOUR], NOW) == NOW + timedelta(hours=24)
    assert next_reminder_at(deadline, [], NOW) is None


def test_the_clock_is_read_from_and_written_to_the_game_row(db_session: Session) -> None:
    settings = GameSettings(reminders_before_seconds=[6 * HOUR])
    game = factories.GameFactory(settings=settings.model_dump())
    clock = Clock.of(game).start_step(NOW, 24 * HOUR)
    assert clock.reminders_before == (6 * HOUR,)
    set_clock(game, clock)
    db_session.flush()
    db_session.expire(game)
    assert Clock.of(game) == clock
    assert (game.deadline_at, game.reminders_due_at, game.step_started_at) == (
        NOW + timedelta(hours=24),
        NOW + timedelta(hours=18),
        NOW,
    )
    set_clock(game, Clock.of(game).pause(NOW + timedelta(hours=4)))
    assert (game.deadline_at, game.reminders_due_at, game.paused_remaining) == (None, None, 20 * HOUR)


def test_nothing_but_the_clock_writes_the_clock_columns() -> None:
    """ARCHITECTURE §5's rules live in one place: no other module assigns a game's clock columns."""
    service = Path(clock_module.__file__).resolve().parent.parent
    writes = re.compile(r"\.(deadline_at|reminders_due_at|paused_remaining|step_started_at)\s*[-+]?=(?!=)")
    writers = {
        str(path.relative_to(service))
        for path in service.rglob("*.py")
        if "migrations" not in path.parts and writes.search(path.read_text(encoding="utf-8"))
    }
    assert writers == {"domain/clock.py"}


def test_the_doctests() -> None:
    assert doctest.testmod(clock_module).failed == 0
