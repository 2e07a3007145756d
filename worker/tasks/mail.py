"""Mail delivery: drain the outbox over SMTP (or into files), on the ``mail`` queue.

The task is sent after every commit that wrote mail (:func:`send_after_commit`), and beat sends it every
30 seconds as well (``service/infra/schedule.py``), so a mail is delivered even when the message saying "there is
mail" was lost (broker down at that moment, or a worker killed). Retries are not Celery retries: a failed
mail's next attempt is a time in its outbox row; ``acks_late``, a drain killed midway is run again, harmlessly
(``service.drain.queue.run_task``).

A worker draws the boards' ground (``emails.board.png.prepare``) and compiles the mails' templates
(``emails.render.prepare``) as it starts, before its pool's processes are forked from it: they share them, and
no drain pays for them on its first mail of a kind or "your turn" mail of a board.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import shared_task
from celery.signals import celeryd_after_setup
from flask import current_app

from emails import render
from emails.board import png
from emails.delivery import backend_from_config
from service.domain import delivery
from service.domain.links import current_links
from service.drain.queue import run_task
from service.infra.db import get_session
from service.infra.logfmt import log
from service.infra.mail_wakeup import DELIVER_OUTBOX

logger = logging.getLogger(__name__)


@celeryd_after_setup.connect(weak=False)
def prepare_rendering(**_: Any) -> None:
    """At a worker's start (Celery's ``celeryd_after_setup``: in the main process, its logging set up, before its
    pool forks): the boards' ground and the compiled templates."""
    cpu = time.process_time()
    png.prepare()
    drawn = time.process_time()
    render.prepare()
    log(
        logger,
        logging.INFO,
        "mail.rendering_prepared",
        boards_cpu_ms=round((drawn - cpu) * 1000),
        templates_cpu_ms=round((time.process_time() - drawn) * 1000),
    )


@shared_task(name=DELIVER_OUTBOX, acks_late=True)
def deliver_outbox(now: str | None = None) -> dict[str, Any]:
    """Send every due mail of the outbox. ``now`` (ISO 8601) moves the clock, for tests only."""
    config = current_app.config
    settings = delivery.MailSettings.from_config(config)
    return run_task(
        "mail",
        lambda at: delivery.deliver_due_mail(
            get_session(), backend_from_config(config), current_links(), settings, now=at
        ),
        now,
    )
