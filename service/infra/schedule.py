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

#: Periodic tasks on every deployment (every 30 s; see :func:`beat_schedule`).
BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # Auto-passes, reminders and the outage guard (service/domain/deadlines.py).
    "sweep-deadlines": {
        "task": "worker.tasks.deadlines.sweep_deadlines",
        "schedule": timedelta(seconds=30),
        "options": {"expires": EXPIRES},
    },
    # Mail is also sent after each commit that writes some; this catches whatever that missed, and retries.
    "deliver-outbox": {
        "task": "worker.tasks.mail.deliver_outbox",
        "schedule": timedelta(seconds=30),
        "options": {"expires": EXPIRES},
    },
    # The daily digests of the addresses whose chosen local hour has come (service/domain/notifications.py).
    "send-daily-digests": {
        "task": "worker.tasks.digests.send_daily_digests",
        "schedule": timedelta(seconds=30),
        "options": {"expires": EXPIRES},
    },
    # The house bot's turns are sent after each commit that makes a game wait for a bot seat; this catches
    # whatever that missed (service/domain/house_bot.py).
    "play-due-bot-turns": {
        "task": "worker.tasks.bots.play_due_bot_turns",
        "schedule": timedelta(seconds=30),
        "options": {"expires": EXPIRES},
    },
    # The same for chat notices (service/domain/chat_notices.py), on their own queue.
    "deliver-chat-notices": {
        "task": "worker.tasks.chat.deliver_chat_notices",
        "schedule": timedelta(seconds=30),
        "options": {"expires": EXPIRES},
    },
    # Mail bodies and inbound records older than SMALLWORLD_MAIL_RETENTION_DAYS (service/domain/retention.py):
    # hourly, whatever the sweeps' period; one missed (beat or workers down) leaves its rows to the next.
    "purge-old-mail": {
        "task": "worker.tasks.housekeeping.purge_old_mail",
        "schedule": timedelta(hours=1),
        "options": {"expires": 3000},
    },
}

#: The entries of :data:`BEAT_SCHEDULE` that keep their own period: the others are the sweeps.
OWN_PERIOD = frozenset({"purge-old-mail"})


def beat_schedule(sweep_seconds: float = 30) -> dict[str, dict[str, Any]]:
    """:data:`BEAT_SCHEDULE` with the sweeps every ``sweep_seconds`` (``SMALLWORLD_SWEEP_SECONDS``); the
    entries of :data:`OWN_PERIOD` as they are.

    A sweep not taken by a worker before the next one is due expires: a backlog would repeat the same work.
    """
    schedule = {}
    for name, entry in BEAT_SCHEDULE.items():
        if name in OWN_PERIOD:
            schedule[name] = entry
            continue
        expires = min(EXPIRES, max(1, sweep_seconds - 1))
        schedule[name] = entry | {"schedule": timedelta(seconds=sweep_seconds), "options": {"expires": expires}}
    return schedule


#: Periodic tasks of the embedded broker only (see ``service.infra.broker``).
EMBEDDED_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "prune-delivered-broker-messages": {
        "task": "worker.tasks.housekeeping.prune_delivered_messages",
        "schedule": timedelta(hours=1),
    },
}
