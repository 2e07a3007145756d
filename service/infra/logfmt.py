"""Structured log lines: an event name and ``key=value`` fields, e.g.
``deadline.auto_pass game=12 seat=1 version=40 task=3f1c…``.

The fields also go on the log record (``extra``), under ``fields``, for a JSON formatter or a log
shipper. Fields bound with :func:`bound` (a Celery task binds its task id and name) are added to every
line logged inside the block, so a line can always be traced to the task and the game it belongs to.

Every process writes the same line (:class:`LineFormatter`: time, level, process, logger, message, game),
and a warning that repeats (an outage, polled every few seconds) is logged once, not once per poll
(:class:`RepeatFilter`).
"""

from __future__ import annotations

import contextvars
import logging
import re
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

_bound: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar(
    "smallworld_log_fields", default=MappingProxyType({})
)


@contextmanager
def bound(**fields: Any) -> Iterator[None]:
    """Add ``fields`` to every line logged with :func:`log` inside the block."""
    token = _bound.set({**_bound.get(), **fields})
    try:
        yield
    finally:
        _bound.reset(token)


def log(logger: logging.Logger, level: int, event: str, **fields: Any) -> None:
    """Log ``event`` with ``fields`` (and the bound ones) as ``event key=value …``."""
    if not logger.isEnabledFor(level):
        return
    everything = {**fields, **_bound.get()}
    text = " ".join(f"{key}={_value(value)}" for key, value in everything.items() if value is not None)
    logger.log(level, "%s %s", event, text, extra={"event": event, "fields": everything})


def _value(value: Any) -> str:
    text = str(value)
    if not text or any(c.isspace() or c in '"=' for c in text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


# -- one line format for every process ---------------------------------------------------------------------
#: What this process is, in every line it logs: ``web``, ``worker`` or ``beat`` (set by the command that
#: starts it: ``smallworld worker``/``beat``, gunicorn's configuration).
ROLE = "smallworld"


def push(**fields: Any) -> contextvars.Token[Mapping[str, Any]]:
    """Bind ``fields`` until :func:`pop` (for a web request: from before it to its teardown)."""
    return _bound.set({**_bound.get(), **{k: v for k, v in fields.items() if v is not None}})


def pop(token: contextvars.Token[Mapping[str, Any]]) -> None:
    _bound.reset(token)


class LineFormatter(logging.Formatter):
    """``2026-11-25T10:57:53.595Z WARNING worker[4242] service.domain.delivery: mail.retry_later outbox=1 game=1``

    The time in UTC (ISO 8601, milliseconds), the level, the process (its role and pid), the logger, the
    message; and ``game=N`` when the line is about a game whose id the message does not already carry
    (bound by the task or request it was logged in). The same for the web server, the workers and beat. A
    traceback follows on the next lines, as usual.
    """

    def __init__(self, role: str | None = None) -> None:
        super().__init__()
        self.role = role

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 (logging's)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        fields = getattr(record, "fields", None) or _bound.get()
        game = fields.get("game") if isinstance(fields, Mapping) else None
        if game is not None and f"game={game}" not in message:
            message += f" game={game}"
        process = f"{self.role or ROLE}[{record.process}]"
        line = f"{self.formatTime(record)} {record.levelname} {process} {record.name}: {message}"
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line += "\n" + record.exc_text
        if record.stack_info:
            line += "\n" + self.formatStack(record.stack_info)
        return line


class RepeatFilter(logging.Filter):
    """Warnings and errors that repeat are logged once, not once per poll.

    A broker or database outage makes the same complaint every few seconds ("Cannot connect to redis://…
    Trying again in 4.00 seconds… (3/100)"), from Celery, kombu, redis-py or our own code. Lines at
    ``WARNING`` and above are compared with their numbers left out: the first of a kind is logged; the
    same kind again within ``quiet`` seconds of the last one is counted, not logged; every ``every``
    seconds while it goes on, one is logged with how many were left out, and so is the first after it
    stopped for ``quiet`` seconds. Lines below ``WARNING`` always pass.
    """

    _NUMBER = re.compile(r"\d+(?:\.\d+)?")

    def __init__(self, quiet: float = 60.0, every: float = 600.0, clock: Any = time.monotonic) -> None:
        super().__init__()
        self.quiet, self.every, self.clock = quiet, every, clock
        # kind → [first left out at, last seen at, last logged at, how many left out]
        self._kinds: dict[tuple[str, int, str], list[float]] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        message = record.getMessage()
        kind = (record.name, record.levelno, self._NUMBER.sub("#", message)[:300])
        now = self.clock()
        with self._lock:
            if len(self._kinds) > 1000:
                self._kinds = {k: v for k, v in self._kinds.items() if now - v[1] < self.quiet}
            seen = self._kinds.get(kind)
            if seen is None:
                self._kinds[kind] = [0.0, now, now, 0]
                return True
            first_left_out, last_seen, last_logged, left_out = seen
            seen[1] = now
            if now - last_seen < self.quiet and now - last_logged < self.every:
                if not left_out:
                    seen[0] = now
                seen[3] = left_out + 1
                return False
            seen[2], seen[3] = now, 0
        if left_out:
            span = last_seen - first_left_out
            record.msg = f"{message} (and {int(left_out)} more like it in {span:.0f} s before this, not logged)"
            record.args = None
        return True


def use_line_format(handlers: Iterable[logging.Handler], role: str | None = None) -> None:
    """Make ``handlers`` write :class:`LineFormatter` lines and collapse repeated warnings (Celery's
    ``after_setup_logger`` hands its handlers here)."""
    for handler in handlers:
        handler.setFormatter(LineFormatter(role))
        if not any(isinstance(f, RepeatFilter) for f in handler.filters):
            handler.addFilter(RepeatFilter())


def gunicorn_logconfig(role: str = "web") -> dict[str, Any]:
    """gunicorn's ``logconfig_dict``: its own lines, its access log and the app's, all as :class:`LineFormatter`
    lines, repeated warnings collapsed (deploy/gunicorn.conf.py)."""
    handler = {"formatter": "line", "filters": ["repeats"], "class": "logging.StreamHandler"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"line": {"()": f"{__name__}.LineFormatter", "role": role}},
        "filters": {"repeats": {"()": f"{__name__}.RepeatFilter"}},
        "handlers": {
            "console": {**handler, "stream": "ext://sys.stdout"},
            "error_console": {**handler, "stream": "ext://sys.stderr"},
        },
        "root": {"level": "INFO", "handlers": ["error_console"]},
        "loggers": {
            "gunicorn.error": {"level": "INFO", "handlers": ["error_console"], "propagate": False},
            "gunicorn.access": {"level": "INFO", "handlers": ["console"], "propagate": False},
        },
    }
