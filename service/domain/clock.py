"""The game clock (ARCHITECTURE §5): the deadline of the awaited step, its reminders, and the time kept while paused.

A :class:`Clock` is a value read from a game row (:meth:`Clock.of`); its methods return the clock after
an event (a step begins, a pause, a resume, an extension, a vacation, an outage…), and :func:`set_clock`
writes it back to the row. Pages, mails, feeds and API answers ask it (the deadline, the time left, the
time kept while paused), and the queries that select games by their clock take their clauses from it: no
other module reads or writes the row's clock columns (``deadline_at``, ``reminders_due_at``,
``paused_remaining``, ``step_started_at``; ``tests/test_architecture.py`` checks it).

The rules, in one place:

- A running step has a deadline and the time of its next reminder; a paused one has neither, only the
  seconds that were left. Pause keeps the time left; resume sets deadline = now + that time.
- Reminders come ``reminders_before`` seconds before the deadline (the game's settings); the next one is
  the earliest still ahead of ``now``. Whenever the deadline moves, the next reminder moves with it.
- Times are aware datetimes in UTC.

>>> from datetime import UTC, datetime, timedelta
>>> now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
>>> clock = Clock(reminders_before=(86400, 3600)).start_step(now, 48 * 3600)
>>> print(clock.deadline_at, clock.reminders_due_at, sep=", ")
2026-03-03 12:00:00+00:00, 2026-03-02 12:00:00+00:00
>>> paused = clock.pause(now + timedelta(hours=12))
>>> paused.deadline_at, paused.reminders_due_at, paused.paused_remaining
(None, None, 129600)
>>> print(paused.resume(now + timedelta(days=5)).deadline_at)  # the 36 hours that were left, from the resume
2026-03-08 00:00:00+00:00
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import col

from service.domain.models import Game
from service.domain.rows import GameRecord
from service.domain.schemas import GameSettings


def next_reminder_at(deadline: datetime, offsets: tuple[int, ...] | list[int], now: datetime) -> datetime | None:
    """The earliest reminder time still ahead of ``now`` (offsets are seconds before the deadline).

    >>> from datetime import UTC, datetime
    >>> deadline = datetime(2026, 3, 3, 12, 0, tzinfo=UTC)
    >>> print(next_reminder_at(deadline, [86400, 3600], datetime(2026, 3, 2, 13, 0, tzinfo=UTC)))
    2026-03-03 11:00:00+00:00
    >>> next_reminder_at(deadline, [86400, 3600], datetime(2026, 3, 3, 11, 0, tzinfo=UTC)) is None
    True
    """
    ahead = [at for at in (deadline - timedelta(seconds=s) for s in offsets) if at > now]
    return min(ahead) if ahead else None


@dataclass(frozen=True)
class Clock:
    #: When the awaited step is auto-passed; ``None`` while paused, before the start and after the end.
    deadline_at: datetime | None = None
    #: When the deadline sweep next looks for reminders to send; ``None`` when none is ahead.
    reminders_due_at: datetime | None = None
    #: Seconds left on the step while the game is paused.
    paused_remaining: int | None = None
    #: When the awaited step began (reminders further back than that are not part of it).
    step_started_at: datetime | None = None
    #: The reminders of a step, in seconds before its deadline (the game's ``reminders_before_seconds``).
    reminders_before: tuple[int, ...] = ()

    @classmethod
    def of(cls, game: GameRecord, settings: GameSettings | None = None) -> Clock:
        """The game's clock, as its row stores it, with the reminders of its settings (``settings``, when
        the caller has read them): the clock an event changes."""
        settings = settings or GameSettings.model_validate(game.settings)
        return replace(cls.read(game), reminders_before=tuple(settings.reminders_before_seconds))

    @classmethod
    def read(cls, row: Any) -> Clock:
        """The clock of a game row, or of a query's row that selected :meth:`columns`, for its answers only:
        without the game's settings it knows no reminders, so an event starts from :meth:`of`."""
        return cls(
            deadline_at=row.deadline_at,
            reminders_due_at=row.reminders_due_at,
            paused_remaining=row.paused_remaining,
            step_started_at=row.step_started_at,
        )

    # -- what the clock says ------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.deadline_at is not None

    @property
    def deadline(self) -> datetime | None:
        """When the awaited step is auto-passed; ``None`` while paused, before the start and after the end."""
        return self.deadline_at

    @property
    def paused_left(self) -> int | None:
        """The seconds kept on a stopped clock, that a resume gives back; ``None`` while it runs."""
        return None if self.running else self.paused_remaining

    def time_left(self, now: datetime) -> timedelta:
        """The time left on the step: kept while paused, counted down to the deadline while running (never
        below zero; zero when there is no step)."""
        if self.deadline_at is None:
            return timedelta(seconds=self.paused_remaining or 0)
        return max(timedelta(0), self.deadline_at - now)

    def remaining(self, now: datetime) -> int:
        """:meth:`time_left` in whole seconds, as a pause keeps it."""
        return int(self.time_left(now).total_seconds())

    def overdue(self, now: datetime) -> timedelta:
        """How long ago the deadline passed (zero when it has not, or there is none)."""
        return max(timedelta(0), now - self.deadline_at) if self.deadline_at is not None else timedelta(0)

    def next_reminder(self, now: datetime) -> datetime | None:
        """When the next reminder of the step is due, after ``now``; ``None`` if none is ahead (or paused)."""
        if self.deadline_at is None:
            return None
        return next_reminder_at(self.deadline_at, self.reminders_before, now)

    def reminders_due(self, now: datetime) -> list[int]:
        """The reminders of the step whose time has come by ``now``, by their offset before the deadline.

        A reminder further from the deadline than the step is long (a 24-hour reminder for a 12-hour
        redeploy step) is not part of the step: it was already "due" when the step began.
        """
        if self.deadline_at is None:
            return []
        times = {s: self.deadline_at - timedelta(seconds=s) for s in self.reminders_before}
        begun = self.step_started_at
        return sorted(s for s, at in times.items() if at <= now and (begun is None or at > begun))

    # -- events -------------------------------------------------------------------------------------------
    def start_step(self, now: datetime, length: int, *, paused: bool = False) -> Clock:
        """A new step begins at ``now`` with ``length`` seconds; in a paused game its clock starts when the
        game resumes."""
        if paused:
            return replace(self, deadline_at=None, reminders_due_at=None, paused_remaining=length, step_started_at=now)
        return replace(self, paused_remaining=None, step_started_at=now)._due_at(now + timedelta(seconds=length), now)

    def pause(self, now: datetime) -> Clock:
        """Stop the clock, keeping the time left (ARCHITECTURE §5)."""
        return replace(self, deadline_at=None, reminders_due_at=None, paused_remaining=self.remaining(now))

    def resume(self, now: datetime) -> Clock:
        """Start the clock again with the time that was left: deadline = now + remaining (ARCHITECTURE §5)."""
        remaining = self.paused_remaining or 0
        return replace(self, paused_remaining=None)._due_at(now + timedelta(seconds=remaining), now)

    def extend(self, now: datetime, *, by: timedelta | None = None, to: datetime | None = None) -> Clock:
        """The deadline moved ``by`` a duration (from the current deadline, or from ``now`` if there is
        none), or ``to`` a time; the next reminder follows it."""
        if (by is None) == (to is None):
            raise ValueError("extend by a duration or to a time, one of them")
        new = to if to is not None else (self.deadline_at or now) + (by or timedelta(0))
        return self._due_at(new, now)

    def vacation(self, now: datetime, seconds: int) -> Clock:
        """A player's vacation: their running deadline, ``seconds`` later."""
        if self.deadline_at is None:
            raise ValueError("a vacation extends a running deadline")
        return self.extend(now, by=timedelta(seconds=seconds))

    def push_back(self, now: datetime, outage: timedelta) -> Clock:
        """The deadline, later by as long as the service was away (ARCHITECTURE §5's outage guard). Reminders
        move with it: one due in the gap comes as long after as the outage lasted."""
        if self.deadline_at is None:
            raise ValueError("an outage pushes back a running deadline")
        return self.extend(now, by=outage)

    def restart(self, now: datetime, length: int) -> Clock:
        """The same step with a fresh deadline, ``length`` seconds from ``now`` (a newcomer's seat)."""
        return self._due_at(now + timedelta(seconds=length), now)

    def run_out(self, now: datetime) -> Clock:
        """No time left on the step: due at once, so the next sweep passes it; while paused, none is kept
        for the resume."""
        if self.deadline_at is None:
            return replace(self, paused_remaining=0)
        return replace(self, deadline_at=now, reminders_due_at=None)

    def reminded(self, now: datetime) -> Clock:
        """After the sweep sent the reminders due by ``now``: the next one's time."""
        return replace(self, reminders_due_at=self.next_reminder(now))

    def stop(self) -> Clock:
        """The game is over or cancelled: no deadline, no reminder."""
        return replace(self, deadline_at=None, reminders_due_at=None)

    def _due_at(self, deadline: datetime, now: datetime) -> Clock:
        return replace(
            self, deadline_at=deadline, reminders_due_at=next_reminder_at(deadline, self.reminders_before, now)
        )

    # -- the clock in SQL: the clauses of the queries that select games by their clock --------------------
    @staticmethod
    def columns() -> tuple[Any, ...]:
        """The clock's columns, for a query whose rows :meth:`read` reads."""
        return col(Game.deadline_at), col(Game.reminders_due_at), col(Game.paused_remaining), col(Game.step_started_at)

    @staticmethod
    def running_clause() -> sa.ColumnElement[bool]:
        """The games whose clock runs: a step with a deadline."""
        return col(Game.deadline_at).is_not(None)

    @staticmethod
    def due_clause(now: datetime) -> sa.ColumnElement[bool]:
        """The games whose deadline has passed by ``now`` (the sweep auto-passes them)."""
        return col(Game.deadline_at) <= now

    @staticmethod
    def due_between_clause(since: datetime, now: datetime) -> sa.ColumnElement[bool]:
        """The games whose deadline fell in (``since``, ``now``] (an outage's gap)."""
        return sa.and_(col(Game.deadline_at) > since, col(Game.deadline_at) <= now)

    @staticmethod
    def overdue_clause(now: datetime, by: timedelta) -> sa.ColumnElement[bool]:
        """The games whose :meth:`overdue` at ``now`` is longer than ``by``."""
        return col(Game.deadline_at) < now - by

    @staticmethod
    def reminders_due_clause(now: datetime) -> sa.ColumnElement[bool]:
        """The games with a reminder due by ``now``."""
        return col(Game.reminders_due_at) <= now

    @staticmethod
    def step_started_before_clause(at: datetime) -> sa.ColumnElement[bool]:
        """The games whose awaited step began before ``at`` (a step left unannounced that long lost its job)."""
        return col(Game.step_started_at) < at

    @staticmethod
    def soonest_first() -> Any:
        """Soonest deadline first, then the games without one (on PostgreSQL, the order its index gives)."""
        return col(Game.deadline_at).asc().nulls_last()

    @staticmethod
    def soonest_reminder_first() -> Any:
        """Soonest reminder first, then the games without one (on PostgreSQL, the order its index gives)."""
        return col(Game.reminders_due_at).asc().nulls_last()


def set_clock(game: GameRecord, clock: Clock) -> None:
    """Write ``clock`` into the game's row: the only writer of its clock columns."""
    game.deadline_at = clock.deadline_at
    game.reminders_due_at = clock.reminders_due_at
    game.paused_remaining = clock.paused_remaining
    game.step_started_at = clock.step_started_at
