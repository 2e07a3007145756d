"""Structured log lines: an event name and ``key=value`` fields, e.g.
``deadline.auto_pass game=12 seat=1 version=40 task=3f1c…``.

The fields also go on the log record (``extra``), under ``fields``, for a JSON formatter or a log
shipper. Fields bound with :func:`bound` (a Celery task binds its task id and name) are added to every
line logged inside the block, so a line can always be traced to the task and the game it belongs to.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator, Mapping
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
