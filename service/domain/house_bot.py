"""The house bot's steps (ARCHITECTURE §10), played in the worker (``worker.tasks.bots``).

A step the game awaits from a seat the house bot plays (``service.domain.bot_seats``) is chosen by
``rules.bots.house_action``, from randomness seeded by the game's seed, version and seat (the same game
replays the same moves), and submitted through ``play.submit_action``, the page's own operation, one
committed step at a time; each is marked ``by_bot`` in the log, so the history tells it as the house bot's.

Exactly once: a bot step is submitted against the game's version with the idempotency key
``bot:<version>``, so two tasks for the same game (a redelivered message, the periodic drain) apply each
step once; the one that comes second finds the step done and stops.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

import rules
from rules.bots import Budget, house_action
from service.domain.bot_seats import is_bot, seat_row
from service.domain.errors import Conflict
from service.domain.games import get_game
from service.domain.links import LinkMaker
from service.domain.models import Game, GameStatus, Seat, SeatController
from service.domain.play import auto_pass, awaited_seat, load_state, submit_action
from service.infra.logfmt import log

logger = logging.getLogger(__name__)

#: Steps the bot may take in one go before the step is passed as a missed deadline would (a bot stuck in a
#: loop of choices must not hold the game).
MAX_STEPS = 200


@dataclass
class BotReport:
    steps: int = 0
    #: The step was passed after :data:`MAX_STEPS` steps of the bot in one go.
    passed: bool = False


def bot_rng(game: Game, seat: int) -> random.Random:
    """The bot's randomness for one step: from the game's seed, its version and the seat, so the same game
    replays the same moves (ARCHITECTURE §10: deterministic from the game's seed)."""
    return random.Random(f"{game.seed}:{game.version}:{seat}")


def play_bot_turns(
    session: Session, game_id: int, links: LinkMaker, *, budget: Budget | None = None, now: datetime | None = None
) -> BotReport:
    """Play the step the game awaits from a seat the house bot plays, step after step until the game waits
    for another step (the next player's, or a defender's), each step committed alone. Does nothing when
    the game does not wait for a bot seat (a task that came late, or twice)."""
    report = BotReport()
    budget = budget or Budget()
    game = _fresh(session, game_id)
    step = game.step_key
    while game.status == GameStatus.ACTIVE and game.state is not None and game.step_key == step and step:
        seat = awaited_seat(step)
        row = seat_row(session, game_id, seat)
        if not is_bot(row):
            break
        state = load_state(game)
        if seat not in rules.awaiting(state):
            break
        version = game.version
        if report.steps >= MAX_STEPS:
            auto_pass(session, game_id, seat, links, expected_version=version, reason="house bot", now=now)
            report.passed = True
            break
        action = house_action(state, seat, bot_rng(game, seat), budget)
        try:
            submit_action(
                session,
                game_id,
                seat,
                action.to_json(),
                version,
                links,
                idempotency_key=f"bot:{version}",
                now=now,
                by_bot=True,
            )
        except Conflict:
            session.rollback()
            break  # someone else moved the game first (a player took the seat back and played, another task)
        report.steps += 1
        game = _fresh(session, game_id)
    if report.steps:
        log(logger, logging.INFO, "bot.played", game=game_id, steps=report.steps, passed=report.passed)
    return report


def _fresh(session: Session, game_id: int) -> Game:
    """The game as committed now (the session keeps objects after a commit; another process may have moved
    the game since)."""
    game = get_game(session, game_id)
    session.refresh(game)
    return game


def due_bot_games(session: Session, limit: int = 100) -> list[int]:
    """Running games that wait for a seat the house bot plays (for the periodic drain, should a task have
    been lost)."""
    query = (
        select(Game.id, Game.step_key, Seat.seat)
        .where(Seat.game_id == Game.id, col(Seat.controller) == SeatController.BOT, Game.status == GameStatus.ACTIVE)
        .order_by(col(Game.id))
    )
    due: list[int] = []
    for game_id, step, seat in session.exec(query).all():
        if game_id is not None and step and awaited_seat(step) == seat and game_id not in due:
            due.append(game_id)
        if len(due) >= limit:
            break
    return due
