"""service.domain.deadlines through the sweep task's entry point: auto-passes, reminders, outage guard.

Every sweep is given its ``now``; nothing sleeps.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlmodel import select

import rules
from rules.bots import concrete
from service.domain import deadlines, play, status
from service.domain.errors import Conflict
from service.domain.models import Game, ReminderSent
from service.infra.db import get_engine, get_session

from .conftest import game_row, logged, new_game, outbox, sweep, sweeps_at_once

HOUR = 3600


def test_a_passed_deadline_auto_passes_once_and_starts_the_next_turn(mail_app: Flask) -> None:
    game_id = new_game(mail_app, turn_length_seconds=48 * HOUR)
    deadline = game_row(mail_app, game_id).deadline_at
    assert deadline is not None

    assert sweep(mail_app, deadline - timedelta(seconds=1)).auto_passed == 0  # the first sweep: no outage
    report = sweep(mail_app, deadline + timedelta(seconds=5))
    assert report.auto_passed == 1
    again = sweep(mail_app, deadline + timedelta(seconds=35))
    assert again.auto_passed == 0

    passes = logged(mail_app, game_id, "auto_pass")
    assert [(a.seat, a.action) for a in passes] == [(0, {"reason": "deadline"})]
    assert [m.to_email for m in outbox(mail_app, "auto_passed")] == ["p0@example.org"]
    game = game_row(mail_app, game_id)
    assert rules.awaiting(rules.read_state(game.state)) == {1}
    assert game.deadline_at == deadline + timedelta(seconds=5) + timedelta(hours=48)
    turn_mails = outbox(mail_app, "your_turn")
    assert [m.to_email for m in turn_mails] == ["p0@example.org", "p1@example.org"]
    assert turn_mails[1].context["deadline_at"] == game.deadline_at.isoformat()


def test_concurrent_sweeps_pass_each_due_game_exactly_once(mail_app: Flask) -> None:
    ids = [new_game(mail_app) for _ in range(6)]
    at = max(game_row(mail_app, g).deadline_at for g in ids) + timedelta(seconds=1)  # type: ignore[type-var]
    reports = sweeps_at_once(mail_app, at, 4)
    assert sum(r.auto_passed for r in reports) == len(ids)
    assert sum(r.errors for r in reports) == 0
    for game_id in ids:
        assert len(logged(mail_app, game_id, "auto_pass")) == 1
        assert len(outbox(mail_app, "auto_passed", game_id)) == 1


def test_a_sweep_after_an_outage_pushes_back_the_deadlines_in_the_gap(mail_app: Flask) -> None:
    ids = [new_game(mail_app, turn_length_seconds=length) for length in (HOUR, 3 * HOUR, 6 * HOUR)]
    started = game_row(mail_app, ids[0]).step_started_at
    assert started is not None
    deadlines_before = [game_row(mail_app, g).deadline_at for g in ids]
    sweep(mail_app, started + timedelta(minutes=30))  # the last sweep before the service went down

    back = started + timedelta(minutes=30, hours=4)  # four hours later: the first two deadlines passed
    report = sweep(mail_app, back)

    assert report.outage == timedelta(hours=4)
    assert (report.auto_passed, report.pushed_back) == (0, 2)
    after = [game_row(mail_app, g).deadline_at for g in ids]
    assert after == [
        deadlines_before[0] + timedelta(hours=4),
        deadlines_before[1] + timedelta(hours=4),
        deadlines_before[2],
    ]
    notices = outbox(mail_app, "admin_change")
    assert sorted((m.game_id, m.context["change"], m.to_email) for m in notices) == [
        (ids[0], "outage", "p0@example.org"),
        (ids[1], "outage", "p0@example.org"),
    ]
    # Sweeping on as usual: nothing is passed until the pushed-back deadline, then exactly that game.
    assert sweep(mail_app, back + timedelta(seconds=30)).auto_passed == 0
    jump = timedelta(days=1)  # the test leaps to the next deadline: not an outage
    assert sweep(mail_app, after[0] + timedelta(seconds=1), outage_after=jump).auto_passed == 1
    assert [len(logged(mail_app, g, "auto_pass")) for g in ids] == [1, 0, 0]


def test_two_sweeps_after_an_outage_push_back_only_once(mail_app: Flask) -> None:
    game_id = new_game(mail_app, turn_length_seconds=HOUR)
    started = game_row(mail_app, game_id).step_started_at
    before = game_row(mail_app, game_id).deadline_at
    sweep(mail_app, started)
    back = started + timedelta(hours=2)
    reports = sweeps_at_once(mail_app, back, 3)
    assert sum(r.pushed_back for r in reports) == 1
    assert sum(r.auto_passed for r in reports) == 0
    assert game_row(mail_app, game_id).deadline_at == before + timedelta(hours=2)
    assert len(outbox(mail_app, "admin_change")) == 1


def test_the_sweep_records_its_time_for_health(mail_app: Flask) -> None:
    at = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    sweep(mail_app, at)
    sweep(mail_app, at + timedelta(seconds=30))
    with mail_app.app_context():
        assert status.recorded_at(get_session(), status.LAST_DEADLINE_SWEEP) == at + timedelta(seconds=30)


def sweeps_every_30_seconds(app: Flask, start: datetime, end: datetime, skip: set[int] = frozenset()) -> int:  # type: ignore[assignment]
    """Sweep from ``start`` to ``end`` every 30 s, leaving out the sweeps numbered in ``skip``; reminders."""
    reminders = 0
    for n in range(int((end - start).total_seconds() // 30) + 1):
        if n not in skip:
            reminders += sweep(app, start + timedelta(seconds=30 * n)).reminders
    return reminders


def test_reminders_are_neither_lost_nor_repeated_across_a_skipped_sweep(mail_app: Flask) -> None:
    game_id = new_game(mail_app, turn_length_seconds=48 * HOUR, reminders_before_seconds=[24 * HOUR, 2 * HOUR])
    deadline = game_row(mail_app, game_id).deadline_at
    assert deadline is not None
    first, second = deadline - timedelta(hours=24), deadline - timedelta(hours=2)

    # Around each reminder: the sweep just after its time does not run (skip 3: the one 20 s after).
    assert sweeps_every_30_seconds(mail_app, first - timedelta(seconds=70), first + timedelta(seconds=120), {3}) == 1
    assert sweeps_every_30_seconds(mail_app, second - timedelta(seconds=70), second + timedelta(seconds=120), {3}) == 1

    reminders = outbox(mail_app, "reminder")
    assert [m.context["before_seconds"] for m in reminders] == [24 * HOUR, 2 * HOUR]
    assert all(m.to_email == "p0@example.org" for m in reminders)
    # Late by one sweep, not lost: each was written at the sweep after the skipped one.
    assert reminders[0].created_at == first + timedelta(seconds=50)
    with mail_app.app_context():
        records = get_session().exec(select(ReminderSent).where(ReminderSent.game_id == game_id)).all()
        assert sorted(r.before_seconds for r in records) == [2 * HOUR, 24 * HOUR]
    assert game_row(mail_app, game_id).reminders_due_at is None


def test_reminders_due_together_make_one_mail_and_are_all_recorded(mail_app: Flask) -> None:
    game_id = new_game(mail_app, turn_length_seconds=48 * HOUR, reminders_before_seconds=[24 * HOUR, 2 * HOUR])
    deadline = game_row(mail_app, game_id).deadline_at
    started = game_row(mail_app, game_id).step_started_at
    # No sweep between the start of the step and one hour before the deadline (the outage guard is set
    # wide here, so that the deadline stays where it is): both reminders are due at that sweep.
    sweep(mail_app, started, outage_after=timedelta(days=3))
    sweep(mail_app, deadline - timedelta(hours=1), outage_after=timedelta(days=3))
    reminders = outbox(mail_app, "reminder")
    assert [m.context["before_seconds"] for m in reminders] == [2 * HOUR]
    with mail_app.app_context():
        records = get_session().exec(select(ReminderSent).where(ReminderSent.game_id == game_id)).all()
        assert sorted((r.before_seconds, r.mailed) for r in records) == [(2 * HOUR, True), (24 * HOUR, False)]


def test_a_new_step_gets_its_own_reminders(mail_app: Flask) -> None:
    game_id = new_game(mail_app, turn_length_seconds=4 * HOUR, reminders_before_seconds=[HOUR])
    deadline = game_row(mail_app, game_id).deadline_at
    jump = timedelta(days=1)  # the test leaps from one moment to the next: not an outage
    sweep(mail_app, deadline - timedelta(minutes=59), outage_after=jump)
    sweep(mail_app, deadline + timedelta(seconds=1), outage_after=jump)  # seat 0 auto-passed; seat 1's turn
    next_deadline = game_row(mail_app, game_id).deadline_at
    sweep(mail_app, next_deadline - timedelta(minutes=59), outage_after=jump)
    assert [m.to_email for m in outbox(mail_app, "reminder")] == ["p0@example.org", "p1@example.org"]


def play_until(app: Flask, game_id: int, done: object, seed: int = 3, limit: int = 2000) -> rules.GameState:
    """Play random legal steps through the domain until ``done(state)`` holds."""
    rnd = random.Random(seed)
    links = app.extensions["smallworld.links"]
    for _ in range(limit):
        with app.app_context():
            game = get_session().get(Game, game_id)
            state = rules.read_state(game.state)
            if done(state):  # type: ignore[operator]
                return state
            seat = min(rules.awaiting(state))
            choice = rnd.choice(rules.legal_actions(state, seat))
            play.submit_action(get_session(), game_id, seat, concrete(choice, rnd).to_json(), game.version, links)
    raise AssertionError("the state was not reached")


def test_a_defender_in_ask_mode_has_a_redeploy_step_with_its_own_deadline(mail_app: Flask) -> None:
    # A seed whose game, played with play_until's choices, reaches a defence by one defender (seat 2).
    game_id = new_game(
        mail_app,
        players=3,
        seed="a-defender-in-ask-mode",
        redeploy="ask",
        defender_turn_length_seconds=12 * HOUR,
        reminders_before_seconds=[24 * HOUR],
    )
    state = play_until(mail_app, game_id, lambda s: s.phase == "defend")
    assert state.defenders == [2], "the seed no longer deals the game this test was written for: choose another"
    defender = state.defenders[0]
    game = game_row(mail_app, game_id)
    assert game.deadline_at == game.step_started_at + timedelta(hours=12)
    assert game.reminders_due_at is None  # a 24-hour reminder does not fit a 12-hour step
    redeploy = outbox(mail_app, "redeploy_needed")
    assert redeploy[-1].to_email == f"p{defender}@example.org"
    assert redeploy[-1].context["defending"] is True

    report = sweep(mail_app, game.deadline_at + timedelta(seconds=1), outage_after=timedelta(days=1))
    assert report.auto_passed == 1
    assert logged(mail_app, game_id, "auto_pass")[-1].seat == defender
    assert outbox(mail_app, "auto_passed")[-1].context["defending"] is True
    after = rules.read_state(game_row(mail_app, game_id).state)
    assert defender not in after.defenders


def test_consecutive_auto_passes_alert_the_host_with_the_admin_link(mail_app: Flask) -> None:
    game_id = new_game(mail_app, turn_length_seconds=HOUR, auto_pass_alert_after=2)
    at = game_row(mail_app, game_id).deadline_at
    for _ in range(3):  # seat 0, seat 1, seat 0 again
        at = game_row(mail_app, game_id).deadline_at + timedelta(seconds=1)
        assert sweep(mail_app, at, outage_after=timedelta(days=1)).auto_passed == 1
    alerts = outbox(mail_app, "host_alert")
    assert [(m.to_email, m.context["player_name"], m.context["auto_passes"]) for m in alerts] == [
        ("p0@example.org", "Player 0", 2)
    ]
    assert alerts[0].context["admin_url"].startswith("https://smallworld.example/admin/")


def test_the_sweep_ends_a_game_whose_state_is_over_but_still_marked_active_and_tallies_it(mail_app: Flask) -> None:
    game_id = new_game(mail_app)
    over = rules.read_state(game_row(mail_app, game_id).state)
    over.phase = rules.Phase.OVER  # a hand-repaired row: no domain operation leaves this behind
    with mail_app.app_context():
        game = get_session().get(Game, game_id)
        game.state = over.to_json()
        get_session().add(game)
        get_session().commit()
        deadline = game.deadline_at
    assert sweep(mail_app, deadline + timedelta(seconds=1)).finished == 1
    assert sweep(mail_app, deadline + timedelta(seconds=31)).finished == 0
    # Marked ending, its tally task sent; that task lost, a sweep a minute later tallies it, once.
    assert game_row(mail_app, game_id).status == "ending"
    assert sweep(mail_app, deadline + timedelta(seconds=91)).tallied == 1
    assert sweep(mail_app, deadline + timedelta(seconds=121)).tallied == 0
    game = game_row(mail_app, game_id)
    assert game.status == "finished" and game.result
    assert len(outbox(mail_app, "game_over")) == 2


def seat_zero_may(action_type: str) -> Callable[[rules.GameState], bool]:
    def may(state: rules.GameState) -> bool:
        return state.current == 0 and any(a.type == action_type for a in rules.legal_actions(state, 0))

    return may


def step_of(app: Flask, game_id: int, action_type: str) -> tuple[int, dict[str, Any]]:
    """Seat 0's step of ``action_type`` now, and the version it is made against."""
    with app.app_context():
        game = get_session().get(Game, game_id)
        assert game is not None
        state = rules.read_state(game.state)
        [action, *_] = [a for a in rules.legal_actions(state, 0) if a.type == action_type]
        return game.version, concrete(action, random.Random(1)).to_json()


def waits_for_a_lock(app: Flask, pid: int) -> bool:
    """Whether the PostgreSQL backend ``pid`` waits for a lock, asked until it does (at most 10 s)."""
    with get_engine(app).connect() as watcher:
        for _ in range(200):
            waiting = watcher.execute(
                sa.text("SELECT wait_event_type FROM pg_stat_activity WHERE pid = :pid"), {"pid": pid}
            ).scalar()
            watcher.rollback()
            if waiting == "Lock":
                return True
            time.sleep(0.05)
    return False


@pytest.mark.parametrize("mail_app", ["postgres"], indirect=True)
@pytest.mark.parametrize("action_type", ["pick", "end_turn"])  # one statement for the game and its entry; two
def test_a_step_made_while_the_sweep_auto_passes_its_game_waits_for_it_and_never_deadlocks(
    mail_app: Flask, monkeypatch: pytest.MonkeyPatch, action_type: str
) -> None:
    # The sweep locks the due game's row, then writes the auto-pass (its log entry, mail, seats). A step of the
    # seat on turn made meanwhile (a bot's, a player's) takes the game's row first too, so it waits for the
    # sweep, holding nothing, and is refused once the sweep commits. Before, the step wrote its log entry first
    # (the log's unique (game, version)), then waited for the row the sweep held, while the sweep waited for
    # that entry's key to write its own: PostgreSQL's "deadlock detected", a 503 to the bot.
    game_id = new_game(mail_app)
    play_until(mail_app, game_id, seat_zero_may(action_type))
    version, action = step_of(mail_app, game_id, action_type)
    deadline = game_row(mail_app, game_id).deadline_at
    assert deadline is not None
    links = mail_app.extensions["smallworld.links"]
    sweep_holds_the_game, step_pid = threading.Event(), queue.Queue[int]()
    seen: list[str] = []
    real_auto_pass = play.rules.auto_pass

    def auto_pass_once_the_step_waits(state: rules.GameState, seat: int) -> rules.GameState:
        if not sweep_holds_the_game.is_set():  # the sweep's auto-pass (not a replay of it, later)
            sweep_holds_the_game.set()
            if waits_for_a_lock(mail_app, step_pid.get(timeout=10)):
                seen.append("the step waited for the sweep")
        return real_auto_pass(state, seat)

    def step() -> None:
        with mail_app.app_context():
            session = get_session()
            step_pid.put(session.connection().exec_driver_sql("SELECT pg_backend_pid()").scalar_one())
            try:
                play.submit_action(session, game_id, 0, action, version, links)
                seen.append("the step was applied")
            except Conflict:
                seen.append("the step was refused")
            except Exception as error:  # a deadlock: the test fails on it below
                seen.append(f"the step failed: {error!r}"[:300])

    monkeypatch.setattr(play.rules, "auto_pass", auto_pass_once_the_step_waits)
    stepping = threading.Thread(target=step)
    swept: list[deadlines.SweepReport] = []
    sweeping = threading.Thread(target=lambda: swept.append(sweep(mail_app, deadline + timedelta(seconds=1))))
    sweeping.start()
    assert sweep_holds_the_game.wait(10)
    stepping.start()
    stepping.join(30)
    sweeping.join(30)
    assert seen == ["the step waited for the sweep", "the step was refused"]
    assert (swept[0].auto_passed, swept[0].errors) == (1, 0)
    assert [a.kind for a in logged(mail_app, game_id) if a.version == version + 1] == ["auto_pass"]


@pytest.mark.parametrize("mail_app", ["postgres"], indirect=True)
def test_steps_and_sweeps_racing_for_the_same_games_never_deadlock(mail_app: Flask) -> None:
    # The same race left to chance, many times over: each game's seat on turn steps (as a bot does) while a sweep
    # auto-passes it. Each game moves on exactly once, by one of the two; no step fails but with a refusal.
    links = mail_app.extensions["smallworld.links"]
    games = [new_game(mail_app) for _ in range(12)]
    steps = {game_id: step_of(mail_app, game_id, "pick") for game_id in games}
    at = max(game_row(mail_app, g).deadline_at for g in games) + timedelta(seconds=1)  # type: ignore[type-var]
    failures: list[str] = []
    sweep_errors: list[int] = []

    def step(game_id: int) -> None:
        version, action = steps[game_id]
        with mail_app.app_context():
            try:
                play.submit_action(get_session(), game_id, 0, action, version, links)
            except Conflict:
                pass
            except Exception as error:
                failures.append(repr(error)[:300])

    for game_id in games:
        start = threading.Barrier(2)
        racers = [
            threading.Thread(target=lambda g=game_id, go=start: (go.wait(), step(g))),
            threading.Thread(target=lambda go=start: (go.wait(), sweep_errors.append(sweep(mail_app, at).errors))),
        ]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join(60)
    assert failures == [] and sum(sweep_errors) == 0
    for game_id in games:
        version = steps[game_id][0]
        assert len([a for a in logged(mail_app, game_id) if a.version == version + 1]) == 1


def test_a_reminder_lists_the_same_orders_and_conquests_as_the_turn_mail_of_its_step(mail_app: Flask) -> None:
    """Text play (ARCHITECTURE §10): a reminder takes orders by reply, so it lists them, as the turn mail did."""
    game_id = new_game(mail_app, turn_length_seconds=48 * HOUR, reminders_before_seconds=[2 * HOUR])
    deadline = game_row(mail_app, game_id).deadline_at
    assert deadline is not None
    sweep(mail_app, deadline - timedelta(hours=3))
    sweep(mail_app, deadline - timedelta(hours=2) + timedelta(seconds=1))
    [turn_mail] = [m for m in outbox(mail_app, "your_turn") if m.to_email == "p0@example.org"]
    [reminder] = outbox(mail_app, "reminder")
    assert reminder.context["orders"] and reminder.context["orders"] == turn_mail.context["orders"]
    assert reminder.context["conquests"] == turn_mail.context["conquests"]
