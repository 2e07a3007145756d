"""What Celery beat sends, and how often.

Deadlines are never Celery ETAs (with Redis a task delayed past the visibility timeout is
delivered twice): beat sends a sweep every ~30 s and the sweep finds what is due in the database.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

#: Periodic tasks on every deployment. The deadline sweep and the reminders join here.
BEAT_SCHEDULE: dict[str, dict[str, Any]] = {}

#: Periodic tasks of the embedded broker only (see ``worker.broker``).
EMBEDDED_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "prune-delivered-broker-messages": {
        "task": "worker.tasks.housekeeping.prune_delivered_messages",
        "schedule": timedelta(hours=1),
    },
}
