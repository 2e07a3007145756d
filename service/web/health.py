"""``GET /health``: can the service reach its database and its broker, and is beat sweeping?"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from flask import Blueprint, current_app
from sqlalchemy import text

from service.domain import status
from service.infra.broker import check_broker
from service.infra.db import get_session

#: Seconds the broker gets to answer. Kept short: a load balancer is waiting for this page.
BROKER_TIMEOUT = 2.0

blueprint = Blueprint("health", __name__)


@blueprint.get("/health")
def health() -> tuple[dict[str, Any], int]:
    """Report each dependency; 200 when the database and the broker both answer, else 503.

    Failures are logged with their detail for operators; the public answer names only the kind
    of error, since it may go to anyone.
    """
    database = _reachability("database", _check_database)
    broker = _reachability("broker", lambda: check_broker(current_app.extensions["celery"], BROKER_TIMEOUT))
    healthy = database["reachable"] and broker["reachable"]
    body = {
        "status": "ok" if healthy else "unavailable",
        "database": database,
        "broker": broker,
        "last_deadline_sweep": _last_deadline_sweep() if database["reachable"] else None,
    }
    return body, 200 if healthy else 503


def _check_database() -> None:
    get_session().execute(text("SELECT 1"))


def _last_deadline_sweep() -> str | None:
    try:
        at: datetime | None = status.recorded_at(get_session(), status.LAST_DEADLINE_SWEEP)
    except Exception as error:
        # Reachable but not usable, e.g. a database never upgraded: health still answers.
        current_app.logger.warning(
            "health: cannot read the last deadline sweep (has `smallworld db upgrade` run?): %r",
            error,
        )
        get_session().rollback()
        return None
    return at.isoformat() if at else None


def _reachability(name: str, check: Callable[[], None]) -> dict[str, Any]:
    try:
        check()
    except Exception as error:
        current_app.logger.warning("health: %s unreachable: %r", name, error)
        return {"reachable": False, "error": type(error).__name__}
    return {"reachable": True}
