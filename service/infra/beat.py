"""Celery beat's scheduler on Redis: RedBeat, riding out a Redis outage instead of exiting.

RedBeat holds a lock in Redis so that one beat runs (a second one waits), and keeps the schedule there.
When Redis goes away, its ``tick`` raises (the lock cannot be extended) and beat exits, to stay down until
someone starts it again; when Redis comes back empty (it keeps nothing here: deploy/compose.yaml), the
lock and the schedule are gone too (sibson/redbeat#285). :class:`SteadyRedBeatScheduler` instead:

- logs once that Redis is out of reach (``beat.broker_lost``), and tries again after 1, 2, 4… seconds,
  at most ``max_interval`` (5 s as deployed), sending nothing meanwhile (a due task it was sending as
  Redis went: one line, ``beat.not_sent``, instead of Celery's two tracebacks);
- once Redis answers, takes the lock again as a starting beat does, without waiting for it: if another
  beat took it meanwhile, this one waits as a second beat does (trying every ``max_interval``);
- with the lock, installs the schedule again (a restarted Redis lost it), makes every periodic task due at
  once (:meth:`SteadyRedBeatScheduler._all_due_now`) and logs ``beat.broker_back``: the sweeps go out at the
  next tick, within ``max_interval``, not a whole period later. (RedBeat stores a newly installed task as run
  just now, and one that stayed in Redis may have had its next run stored, ``reserve``, as its sending failed.)

No sweep is lost by the gap: deadlines and mail live in the database, and the next sweep finds whatever
fell due meanwhile (the outage guard pushes back deadlines after a long gap).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import kombu.exceptions
import redis
from celery.beat import SchedulingError
from redbeat import RedBeatScheduler
from redbeat.schedulers import LUA_EXTEND_TO_SCRIPT, get_redis

from service.infra.logfmt import log

logger = logging.getLogger(__name__)

#: What Redis going away looks like to a client: refused, dropped, timed out, or our lock gone with it.
REDIS_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, redis.exceptions.LockError)


class SteadyRedBeatScheduler(RedBeatScheduler):
    """RedBeat that waits for Redis to come back instead of exiting (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: When Redis was lost (``time.monotonic()``), while it is; ``None`` while all is well.
        self.lost_at: float | None = None
        self.retry_in = 1.0

    def tick(self, *args: Any, **kwargs: Any) -> float:
        # Lost earlier, or never had the lock (Redis was down when beat started: RedBeat's start squashes
        # that error and leaves no lock).
        lost = self.lock_key and (self.lost_at is not None or self.lock is None)
        if lost and not self._take_lock_again():
            return self._wait()
        try:
            interval: float = super().tick(*args, **kwargs)
        except REDIS_DOWN as error:
            self._lost(error)
            return self._wait()
        return interval

    def apply_async(self, entry: Any, *args: Any, **kwargs: Any) -> Any:
        # Redis may go away between the tick's lock extension and the sending of a due task: Celery's
        # apply_entry would log that as a "Message Error" with two tracebacks. One line says it instead; the
        # next tick finds the outage (or Redis back) as usual, and the next sweep does what this one would.
        # It may go as the entry's next run is stored (RedBeat's ``reserve``, before Celery's own ``try``):
        # then the error is Redis's own, not wrapped in a SchedulingError.
        try:
            return super().apply_async(entry, *args, **kwargs)
        except (SchedulingError, *REDIS_DOWN) as error:
            cause = _outage(error)
            if cause is None:
                raise
            log(logger, logging.WARNING, "beat.not_sent", task=entry.name, error=repr(cause))
            return None

    def close(self) -> None:
        try:
            super().close()
        except REDIS_DOWN:  # the lock cannot be released without Redis; it expires on its own
            self.lock = None

    def _lost(self, error: Exception) -> None:
        if self.lost_at is None:
            self.lost_at = time.monotonic()
            self.retry_in = 1.0
            log(logger, logging.WARNING, "beat.broker_lost", error=repr(error), sending="nothing until it is back")
        self.lock = None

    def _wait(self) -> float:
        wait = self.retry_in
        self.retry_in = min(self.retry_in * 2, float(self.max_interval))
        return wait

    def _take_lock_again(self) -> bool:
        """Take the lock without waiting (another beat may have it now), then install the schedule again."""
        if self.lost_at is None:
            self.lost_at = time.monotonic()
        try:
            client = get_redis(self.app)
            lock = client.lock(self.lock_key, timeout=self.lock_timeout, sleep=self.max_interval)
            lock.lua_extend = client.register_script(LUA_EXTEND_TO_SCRIPT)  # as RedBeat's own start does
            if not lock.acquire(blocking=False):
                self.retry_in = float(self.max_interval)  # another beat has it: wait as a second beat does
                return False
            self.lock = lock
            self.setup_schedule()  # a restarted Redis lost it; otherwise this changes nothing
            self._all_due_now()
        except REDIS_DOWN as error:
            self._lost(error)
            return False
        log(logger, logging.INFO, "beat.broker_back", down_seconds=round(time.monotonic() - self.lost_at, 1))
        self.lost_at = None
        self.retry_in = 1.0
        return True

    def _all_due_now(self) -> None:
        """Every periodic task of the configuration due now: stored as never run (RedBeat's ``due_at``), which the
        next tick sends. A sweep that fell due in the outage was not sent, and each is safe to run at any time."""
        client = get_redis(self.app)
        never_run = json.dumps({"last_run_at": None})
        with client.pipeline() as pipe:
            for name in self.app.redbeat_conf.schedule:
                key = self.Entry.generate_key(self.app, name)
                pipe.hset(key, "meta", never_run)
                pipe.zadd(self.app.redbeat_conf.schedule_key, {key: 0})
            pipe.execute()


def _outage(error: BaseException) -> BaseException | None:
    """The Redis outage behind ``error``, if one is: the broker's publish, or the result store's reconnection
    (Celery raises a RuntimeError from it), each wrapped by beat in a SchedulingError."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, (*REDIS_DOWN, kombu.exceptions.OperationalError)):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None
