"""The end-of-game tally in a real worker process (``smallworld worker`` on Redis, PostgreSQL, an SMTP server
in the test process), killed in the middle of its transaction: one final table per player, ratings and
records updated once (ARCHITECTURE §9: "exactly once under concurrent workers and worker kills").

To stop the tally midway, the test holds, in a transaction of its own, a row the tally must write last (the
record of the game's last address, inserted and not committed): the worker locks the game, writes the others'
records and waits there, which ``pg_locks`` shows. Then the worker is killed with SIGKILL.
"""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta
from typing import Any

import psutil
import pytest
import sqlalchemy as sa
from flask import Flask
from sqlmodel import Session, col, select

import rules
from service.domain import play, tally
from service.domain.models import Game, GameResult, GameStatus, Player, PlayerRecord, Seat
from service.domain.schemas import CreateGame
from service.infra.db import get_engine, get_session
from tests.factories import confirmed_game
from tests.worker.conftest import WorkerStack, wait_until
from worker.tasks.deadlines import SWEEP_DEADLINES
from worker.tasks.tally import TALLY_GAME

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.processes]


#: No worker yet: each test starts its own (one pool process) once its game waits for the tally.
WORKER_STACK = {"start_worker": False, "concurrency": 1, "BASE_URL": "https://smallworld.example"}


def ended_game(app: Flask, tag: str, players: int = 3) -> int:
    """A game played to its last step (every turn passed at its deadline): ``ending``, its tally task sent."""
    request = CreateGame.model_validate(
        {
            "name": f"Kill {tag}",
            "players": [{"name": f"{tag} {i}", "email": f"{tag}{i}@example.org"} for i in range(players)],
            "settings": {"start_when_all_accepted": False},
        }
    )
    links = app.extensions["smallworld.links"]
    with app.app_context():
        session = get_session()
        game, _ = confirmed_game(session, request, links)
        for _ in range(500):
            session.refresh(game)
            if game.status != GameStatus.ACTIVE:
                break
            seat = min(rules.awaiting(play.load_state(game)))
            play.auto_pass(session, game.id or 0, seat, links, reason="deadline")
        assert game.status == GameStatus.ENDING
        return game.id or 0


def last_player_id(app: Flask, game_id: int) -> int:
    with app.app_context():
        ids = get_session().exec(select(Seat.player_id).where(Seat.game_id == game_id)).all()
        return max(ids)


def hold_record(stack: WorkerStack, player_id: int) -> tuple[sa.Engine, sa.Connection]:
    """A transaction that inserted ``player_id``'s record and does not commit: the tally's insert waits."""
    engine = sa.create_engine(stack.database_url.replace("postgresql://", "postgresql+psycopg://", 1))
    connection = engine.connect()
    connection.execute(
        sa.insert(PlayerRecord).values(
            player_id=player_id,
            rating_mu=99.0,
            rating_sigma=1.0,
            games_finished=0,
            deadlines=0,
            deadlines_missed=0,
            resigned=0,
            updated_at=sa.func.now(),
        )
    )
    return engine, connection


def tally_waiting(engine: sa.Engine) -> bool:
    """Whether a backend waits for a lock while inserting a player's record (the tally, midway). Asked in a
    transaction of its own: PostgreSQL shows one transaction the same ``pg_stat_activity`` throughout."""
    with engine.connect() as connection:
        waiting = connection.execute(
            sa.text(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE wait_event_type = 'Lock' AND query ILIKE '%player_records%'"
            )
        ).scalar_one()
    return bool(waiting)


def tallied(app: Flask, game_id: int) -> dict[str, Any]:
    with Session(get_engine(app)) as session:
        game = session.get(Game, game_id)
        assert game is not None
        results = session.exec(select(GameResult).where(GameResult.game_id == game_id)).all()
        emails = dict(session.exec(select(Player.id, Player.email).join(Seat).where(Seat.game_id == game_id)).all())
        records = session.exec(select(PlayerRecord).where(col(PlayerRecord.player_id).in_(list(emails)))).all()
        return {
            "status": game.status,
            "results": list(results),
            "records": {emails[r.player_id]: r for r in records},
            "finished_at": game.finished_at,
        }


def over_mails(stack: WorkerStack, tag: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for mail in stack.smtp.mailbox.all():
        if f"Kill {tag} is over" in (mail.headline):
            for to in mail.rcpt_tos:
                counts[to] = counts.get(to, 0) + 1
    return counts


def assert_tallied_once(stack: WorkerStack, game_id: int, tag: str, players: int = 3) -> None:
    done = tallied(stack.app, game_id)
    assert done["status"] == GameStatus.FINISHED
    assert sorted(r.seat for r in done["results"]) == list(range(players))
    addresses = [f"{tag}{i}@example.org" for i in range(players)]
    assert {a: r.games_finished for a, r in done["records"].items()} == dict.fromkeys(addresses, 1)
    # Rated once, from the starting rating (not from the held row's 99, nor twice).
    fresh = {
        r.player_id: PlayerRecord(player_id=r.player_id, rating_mu=tally.MODEL.mu, rating_sigma=tally.MODEL.sigma)
        for r in done["results"]
    }
    expected = tally.rate({r.player_id: r.place for r in done["results"]}, fresh)
    for result in done["results"]:
        assert result.rating_mu_before == tally.MODEL.mu
        assert (result.rating_mu, result.rating_sigma) == pytest.approx(expected[result.player_id])
    for record in done["records"].values():
        assert (record.rating_mu, record.rating_sigma) == pytest.approx(expected[record.player_id])
        assert record.deadlines_missed == record.deadlines > 0  # every turn passed at its deadline
    wait_until(lambda: sum(over_mails(stack, tag).values()) >= players, "the final tables")
    time.sleep(2)  # a second table would come with the first drain or the next
    assert over_mails(stack, tag) == dict.fromkeys(addresses, 1)


def test_a_worker_killed_in_the_middle_of_the_tally_leaves_nothing_and_the_sweep_tallies_the_game_once(
    stack: WorkerStack,
) -> None:
    game_id = ended_game(stack.app, "a")
    engine, held = hold_record(stack, last_player_id(stack.app, game_id))
    try:
        worker = stack.start_worker(wait=False)  # takes the tally task the last step sent
        wait_until(lambda: tally_waiting(engine), "the worker to be midway through the tally")
        os.killpg(worker.pid, signal.SIGKILL)  # the worker and its pool: no chance to commit
        worker.wait()
        stack.worker = None
    finally:
        held.rollback()
        held.close()
        engine.dispose()
    left = tallied(stack.app, game_id)
    assert left["status"] == GameStatus.ENDING and left["results"] == [] and left["records"] == {}
    assert over_mails(stack, "a") == {}

    stack.start_worker()
    # The task died with the worker (Redis gives an unacknowledged message back only after its visibility
    # timeout, an hour): the deadline sweep, a minute after the game ended, tallies it.
    ended = left["finished_at"]
    swept = stack.run(SWEEP_DEADLINES, now=(ended + tally.LEFT_ENDING_AFTER + timedelta(seconds=1)).isoformat())
    assert swept["tallied"] == 1
    assert_tallied_once(stack, game_id, "a")
    # The lost message, given back at last, or a sweep running again: nothing more.
    assert stack.run(TALLY_GAME, game_id) is False
    swept = stack.run(SWEEP_DEADLINES, now=(ended + tally.LEFT_ENDING_AFTER * 3).isoformat())
    assert swept["tallied"] == 0
    assert_tallied_once(stack, game_id, "a")
    stack.stop_worker()


def test_a_pool_process_killed_in_the_middle_of_the_tally_gives_the_task_back_and_it_tallies_once(
    stack: WorkerStack,
) -> None:
    game_id = ended_game(stack.app, "b")
    engine, held = hold_record(stack, last_player_id(stack.app, game_id))
    try:
        worker = stack.start_worker(wait=False)
        wait_until(lambda: tally_waiting(engine), "the worker to be midway through the tally")
        [pool] = psutil.Process(worker.pid).children()
        pool.kill()  # the process running the task, not the worker: it sees it lost and gives the task back
        pool.wait(timeout=10)
    finally:
        held.rollback()
        held.close()
        engine.dispose()
    # No sweep: the worker runs the task again by itself (``reject_on_worker_lost``).
    wait_until(lambda: tallied(stack.app, game_id)["status"] == GameStatus.FINISHED, "the task run again")
    assert_tallied_once(stack, game_id, "b")
    assert stack.worker is not None and stack.worker.poll() is None
    stack.stop_worker()
