"""What Celery beat sends, and how often.

Deadlines are never Celery ETAs (with Redis a task delayed past the visibility timeout is
delivered twice): beat sends a sweep every ~30 s and the sweep finds what is due in the database.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

#: A periodic task not taken within this many seconds is dropped: the next one is on its way, and a
#: backlog of stale sweeps (workers busy or down) would only run the same sweep many times.
EXPIRES = 25

#: The sweeps: each finds in the database what is due and does it, every 30 s (``SMALLWORLD_SWEEP_SECONDS``,
#: :func:`beat_schedule`). Name -> task.
SWEEPS: dict[str, str] = {
    # Auto-passes, reminders and the outage guard (service/domain/deadlines.py).
    "sweep-deadlines": "worker.tasks.deadlines.sweep_deadlines",
    # Mail is also sent after each commit that writes some; this catches whatever that missed, and retries.
    "deliver-outbox": "worker.tasks.mail.deliver_outbox",
    # The daily digests of the addresses whose chosen local hour has come (service/domain/notifications.py).
    "send-daily-digests": "worker.tasks.digests.send_daily_digests",
    # The house bot's turns are sent after each commit that makes a game wait for a bot seat; this catches
    # whatever that missed (service/domain/house_bot.py).
    "play-due-bot-turns": "worker.tasks.bots.play_due_bot_turns",
    # The same for chat notices (service/domain/chat_notices.py), on their own queue.
    "deliver-chat-notices": "worker.tasks.chat.deliver_chat_notices",
}


def _sweep(task: str, seconds: float) -> dict[str, Any]:
    """A sweep's entry: sent every ``seconds``, and dropped when a worker has not taken it before the next one
    is due (at most :data:`EXPIRES` seconds): a backlog would repeat the same work."""
    expires = min(EXPIRES, max(1, seconds - 1))
    return {"task": task, "schedule": timedelta(seconds=seconds), "options": {"expires": expires}}


#: Periodic tasks on every deployment: the sweeps every 30 s (see :func:`beat_schedule`), and the purge.
BEAT_SCHEDULE: dict[str, dict[str, Any]] = {name: _sweep(task, 30) for name, task in SWEEPS.items()} | {
    # Mail bodies and inbound records older than SMALLWORLD_MAIL_RETENTION_DAYS (service/domain/retention.py):
    # hourly, whatever the sweeps' period; one missed (beat or workers down) leaves its rows to the next.
    "purge-old-mail": {
        "task": "worker.tasks.housekeeping.purge_old_mail",
        "schedule": timedelta(hours=1),
        "options": {"expires": 3000},
    },
}

#: The entries of :data:`BEAT_SCHEDULE` that keep their own period: the others are the sweeps.
OWN_PERIOD = frozenset(BEAT_SCHEDULE) - frozenset(SWEEPS)


def beat_schedule(sweep_seconds: float = 30) -> dict[str, dict[str, Any]]:
    """:data:`BEAT_SCHEDULE` with the sweeps every ``sweep_seconds`` (``SMALLWORLD_SWEEP_SECONDS``); the
    entries of :data:`OWN_PERIOD` as they are."""
    return BEAT_SCHEDULE | {name: _sweep(task, sweep_seconds) for name, task in SWEEPS.items()}


#: Periodic tasks of the embedded broker only (see ``service.infra.broker``).
EMBEDDED_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "prune-delivered-broker-messages": {
        "task": "worker.tasks.housekeeping.prune_delivered_messages",
        "schedule": timedelta(hours=1),
    },
}
