"""The end of a game (ARCHITECTURE §9): tally it, store its results, ratings and records, mail the final table.

Sent once the step that ended the game commits (``service.infra.mail_wakeup.TALLY_GAME``). Thin: the work
is ``service.domain.tally.tally_game``, which does it once whoever runs it and however often, so the task may
be delivered twice: ``acks_late`` and ``reject_on_worker_lost`` give the message back when the worker dies
midway, and another worker tallies the game at once (the deadline sweep would, a minute later).
"""

from __future__ import annotations

import logging

from celery import shared_task

from service.domain import tally
from service.infra.db import get_session
from service.infra.logfmt import log
from service.infra.mail_wakeup import TALLY_GAME

logger = logging.getLogger(__name__)


@shared_task(name=TALLY_GAME, acks_late=True, reject_on_worker_lost=True)
def tally_game(game_id: int) -> bool:
    """Tally the game if it is still ending; whether this run did it."""
    done = tally.tally_game(get_session(), int(game_id))
    if not done:
        log(logger, logging.INFO, "game.tally_not_needed", game=game_id)
    return done
