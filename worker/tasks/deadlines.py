"""The deadline sweep (ARCHITECTURE §5), sent by beat every 30 seconds: auto-passes, reminders, outage guard.

Thin: the work is ``service.domain.deadlines.sweep``. ``acks_late``: a sweep run twice is harmless, every
auto-pass being guarded by the game's version and every reminder by its unique record.

A sweep lost with its worker (its process killed midway) is **made moot by the next sweep**, not redelivered:
its transaction ends with the process, nothing of the game it was passing is kept, and beat's next sweep
(``SMALLWORLD_SWEEP_SECONDS`` later) finds the same due work in the database and does it, once. No
``reject_on_worker_lost``: a sweep given back would only run beside the next one, and one lost with the whole
worker would come back from Redis after its visibility timeout (an hour), long expired (``schedule.EXPIRES``).
``tests/worker/test_sweep_worker_kill.py`` kills a sweep midway through an auto-pass.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

from celery import shared_task
from flask import current_app

from service.domain import deadlines
from service.domain.links import current_links
from service.infra.db import get_session
from service.infra.logfmt import log
from service.infra.mail_wakeup import throttled_delivery_task

logger = logging.getLogger(__name__)

SWEEP_DEADLINES = "worker.tasks.deadlines.sweep_deadlines"


@shared_task(name=SWEEP_DEADLINES, acks_late=True)
def sweep_deadlines(now: str | None = None) -> dict[str, Any]:
    """One sweep. ``now`` (ISO 8601) moves the clock, for tests only; beat sends none."""
    session = get_session()
    with throttled_delivery_task(session):  # a sweep commits once per game: not a delivery task each
        report = deadlines.sweep(
            session,
            current_links(),
            now=datetime.fromisoformat(now) if now else None,
            outage_after=timedelta(seconds=current_app.config["OUTAGE_GUARD_SECONDS"]),
            unconfirmed_max_age=timedelta(hours=float(current_app.config["UNCONFIRMED_GAME_HOURS"])),
        )
    summary = asdict(report)
    summary["now"] = report.now.isoformat()
    summary["outage"] = report.outage.total_seconds() if report.outage else None
    if (
        report.auto_passed
        or report.reminders
        or report.pushed_back
        or report.errors
        or report.finished
        or report.started
        or report.lapsed
        or report.tallied
        or report.announced
    ):
        log(
            logger,
            logging.INFO,
            "deadline.swept",
            auto_passed=report.auto_passed,
            reminders=report.reminders,
            pushed_back=report.pushed_back,
            finished=report.finished,
            started=report.started,
            lapsed=report.lapsed,
            tallied=report.tallied,
            announced=report.announced,
            raced=report.raced,
            errors=report.errors,
        )
    return summary
