"""The Celery app, built from the Flask app as in Flask's own Celery example.

Tasks are declared with ``shared_task`` in ``worker/tasks/`` and never import the Flask app;
every task runs inside the Flask app context, so it reaches the database the same way a web
request does (``service.infra.db.get_session``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from celery import Celery, Task
from celery.signals import after_setup_logger, after_setup_task_logger, worker_process_init
from celery.worker.consumer import Consumer
from flask import Flask

from service.infra import queues
from service.infra.broker import is_embedded
from service.infra.schedule import EMBEDDED_BEAT_SCHEDULE, beat_schedule

REDIS_SCHEMES = ("redis://", "rediss://")

#: Longest pause between two tries to reach the broker again (seconds). kombu's default grows to 30 s, and
#: Celery gives up after 100 tries (the worker then exits): here it tries every few seconds, for ever.
RECONNECT_MAX_SECONDS = 5.0


#: Parts of a Celery worker the service does not use, left out of ``smallworld worker``: gossip and mingle (the
#: workers telling each other of themselves, for leader elections and for the tasks revoked by remote control; the
#: service elects nothing and revokes nothing). Each reconnects on its own after a broker outage, and gossip's
#: failed restart during one logged an ERROR with a 171-line traceback. Remote control (``celery inspect``,
#: ``control.ping``) and the heartbeat events of monitors are kept.
WORKER_WITHOUT = ("--without-gossip", "--without-mingle")


def worker_arguments(celery_args: Sequence[str]) -> list[str]:
    """``celery worker`` arguments without the parts of :data:`WORKER_WITHOUT`.

    >>> worker_arguments(["-Q", "mail"])
    ['--without-gossip', '--without-mingle', '-Q', 'mail']
    """
    return [*(flag for flag in WORKER_WITHOUT if flag not in celery_args), *celery_args]


class SteadyConsumer(Consumer):
    """Celery's consumer, reconnecting to a lost broker after 1, 2, 3, 4, then every 5 seconds (not 2, 4,
    6… up to 30 s): a worker is back within seconds of the broker."""

    def ensure_connected(self, conn: Any) -> Any:
        ensure = conn.ensure_connection

        def steadily(*args: Any, **kwargs: Any) -> Any:
            kwargs.update(interval_start=1, interval_step=1, interval_max=RECONNECT_MAX_SECONDS)
            return ensure(*args, **kwargs)

        conn.ensure_connection = steadily
        return super().ensure_connected(conn)


def _line_format(logger: Any = None, **_: Any) -> None:
    """Celery's log handlers (worker, its pool, beat) write the service's line format (service.infra.logfmt)."""
    from service.infra import logfmt

    if logger is not None:
        logfmt.use_line_format(logger.handlers)


def celery_init_app(app: Flask) -> Celery:
    """Create the Celery app for ``app``, store it as ``app.extensions["celery"]`` and return it."""
    from service.infra import logfmt  # the service imports this module: import it once the service is loaded

    class FlaskTask(Task):
        def __call__(self, *args: object, **kwargs: object) -> object:
            # Every log line of the task carries its id and name (service.infra.logfmt).
            with app.app_context(), logfmt.bound(task=self.name, task_id=self.request.id):
                return self.run(*args, **kwargs)

    celery_app = Celery(app.name, task_cls=FlaskTask, include=["worker.tasks"])
    celery_app.config_from_object(celery_config(app.config))
    celery_app.set_default()
    app.extensions["celery"] = celery_app

    def use_fresh_connections(**_: object) -> None:
        # A prefork pool process starts as a copy of the main worker process: it must not reuse
        # database connections the parent may have opened.
        from service.infra.db import get_engine

        get_engine(app).dispose(close=False)

    worker_process_init.connect(use_fresh_connections, weak=False)
    after_setup_logger.connect(_line_format, weak=False)
    after_setup_task_logger.connect(_line_format, weak=False)

    from service.infra.mail_wakeup import send_after_commit  # imports the domain, which imports this module's package

    send_after_commit()
    return celery_app


def result_backend(url: str | None) -> str | None:
    """Celery's ``result_backend`` for a result store's URL: on Redis, Celery's backend with a wait for a result
    that a lost connection cannot make miss it (service/infra/redis_results.py), named ``module:Class+url``."""
    if url and url.startswith(REDIS_SCHEMES):
        return f"service.infra.redis_results:RedisBackend+{url}"
    return url


def celery_config(config: dict[str, Any]) -> dict[str, Any]:
    """Celery settings derived from the service's configuration (see ``service.infra.config``)."""
    broker_url: str = config["BROKER_URL"]
    settings: dict[str, Any] = {
        "broker_url": broker_url,
        # A lost broker is tried again for ever, every few seconds at most (SteadyConsumer): a worker outlives
        # a broker restart instead of exiting after 100 tries.
        "broker_connection_retry_on_startup": True,
        "broker_connection_retry": True,
        "broker_connection_max_retries": None,
        "worker_consumer": f"{__name__}:SteadyConsumer",
        # Output written to stdout/stderr (a traceback Python prints) goes out as it is, not as one
        # WARNING line per write: a traceback made some two thousand lines.
        "worker_redirect_stdouts": False,
        # Tasks act on the database and record their effects there; nobody waits for a result.
        # A result backend is only configured to watch a task from outside (tests, diagnostics).
        "result_backend": result_backend(config.get("RESULT_BACKEND") or None),
        "task_ignore_result": True,
        "timezone": "UTC",
        "enable_utc": True,
        "beat_schedule": beat_schedule(float(config.get("SWEEP_SECONDS") or 30)),
        # Mail and chat notices on their own queues (service/infra/queues.py).
        "task_routes": queues.ROUTES,
        # With acks_late, a worker holds only the message it is working on: a killed worker leaves at
        # most that one to be redelivered, and other workers take the rest at once.
        "worker_prefetch_multiplier": 1,
        # Beat wakes at least every 5 s: with RedBeat, a beat killed without releasing its lock is
        # replaced within about half a minute instead of the lock's default 25 minutes.
        "beat_max_loop_interval": 5,
    }
    if broker_url.startswith(REDIS_SCHEMES):
        # At scale: RedBeat keeps the schedule in Redis and holds a lock there, so a second
        # beat started by mistake waits instead of sending every periodic task twice.
        # (``smallworld beat`` runs its subclass that waits for Redis to come back instead of exiting:
        # service/infra/beat.py.)
        settings["beat_scheduler"] = "redbeat.RedBeatScheduler"
        # kombu's Redis transport, keeping the Redis client it publishes with (service/infra/redis_transport.py).
        settings["broker_transport"] = "service.infra.redis_transport:Transport"
        settings["redbeat_redis_url"] = broker_url
        settings["redbeat_key_prefix"] = "smallworld:redbeat:"
    else:
        settings["beat_schedule_filename"] = str(Path(config["INSTANCE_PATH"]) / "celerybeat-schedule")
    if is_embedded(broker_url):
        settings["beat_schedule"].update(EMBEDDED_BEAT_SCHEDULE)
    return settings
