"""The house bot's turns (ARCHITECTURE §10), on the default queue.

Sent with a game's id after every commit that made the game wait for a seat the house bot plays
(``service.infra.mail_wakeup.wake_bot_after_commit``), and by beat every 30 seconds for every such game
(should a message have been lost). Thin: the work is ``service.domain.house_bot``. ``acks_late``: a task run
twice is harmless, every bot step being submitted against the game's version with an idempotency key.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from celery import shared_task

from service.domain import house_bot
from service.domain.links import current_links
from service.infra.db import get_session
from service.infra.mail_wakeup import PLAY_BOT_TURNS

PLAY_DUE_BOT_TURNS = "worker.tasks.bots.play_due_bot_turns"


@shared_task(name=PLAY_BOT_TURNS, acks_late=True)
def play_bot_turns(game_id: int) -> dict[str, Any]:
    """Play the steps the game awaits from its bot seats."""
    return asdict(house_bot.play_bot_turns(get_session(), game_id, current_links()))


@shared_task(name=PLAY_DUE_BOT_TURNS, acks_late=True)
def play_due_bot_turns() -> dict[str, Any]:
    """Every running game waiting for a bot seat: its steps (beat's safety net for a lost message)."""
    session = get_session()
    played = {}
    for game_id in house_bot.due_bot_games(session):
        played[str(game_id)] = house_bot.play_bot_turns(session, game_id, current_links()).steps
    return played
