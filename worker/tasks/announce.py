"""The announcement of a game's new step (ARCHITECTURE §2): its turn mails, chat notice and bot wake-up.

Sent with the game's id once a step that made the game wait for a new step commits
(``service.infra.mail_wakeup.ANNOUNCE_STEP``). Thin: the work is ``service.domain.announce.announce``, which
announces the step the game awaits once, whoever runs it and however often, so the task may be delivered
twice: ``acks_late`` and ``reject_on_worker_lost`` give the message back when the worker dies midway, and
another worker announces the step at once (the deadline sweep would, a few seconds later).
"""

from __future__ import annotations

import logging

from celery import shared_task

from service.domain import announce
from service.domain.links import current_links
from service.infra.db import get_session
from service.infra.logfmt import log
from service.infra.mail_wakeup import ANNOUNCE_STEP

logger = logging.getLogger(__name__)


@shared_task(name=ANNOUNCE_STEP, acks_late=True, reject_on_worker_lost=True)
def announce_step(game_id: int) -> bool:
    """Announce the step the game awaits if it is not yet; whether this run did it."""
    done = announce.announce(get_session(), int(game_id), current_links())
    if not done:
        log(logger, logging.DEBUG, "game.announce_not_needed", game=game_id)
    return done
