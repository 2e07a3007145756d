"""Deadlines (ARCHITECTURE §5: the database is the truth): the sweep beat runs every ~30 seconds.

One sweep, in order:

1. **Outage guard.** The sweep records its time (``service_status``, read by ``/health``). If the previous
   sweep is older than ``outage_after``, the service was down: deadlines that fell in the gap are pushed
   back by the gap's length, and their players told, instead of everyone being auto-passed at once. Only
   the sweep whose conditional update moves the recorded time from the value it read does this, so two
   sweeps starting together never push twice.
2. **Auto-pass** every active game whose deadline has passed, one game per transaction, through the
   domain operation :func:`service.domain.play.auto_pass` guarded by the version read under the row lock
   (the next due game is found and locked by one statement, ``FOR UPDATE SKIP LOCKED`` on PostgreSQL;
   SQLite runs one writer at a time). A concurrent or repeated sweep finds the row
   locked, or the version moved, and does nothing: one auto-pass, one mail.
3. **Reminders**: for each game whose ``reminders_due_at`` has passed, every reminder of the current step
   whose time has come and that has no :class:`~service.domain.models.ReminderSent` record yet. The record is
   unique per (game, step, reminder), so a late or skipped sweep sends it late rather than never, and a
   repeated one never sends it twice.
4. **Games left waiting**: a game still inviting though every seat has accepted (a start that was lost) is
   started, under its row lock, through the same operation as the last accept
   (:func:`service.domain.lobby.start_if_all_accepted`), so it starts once; and a game its host never
   confirmed lapses after ``unconfirmed_max_age`` (:func:`service.domain.lobby.expire_unconfirmed`).
   Only an accept makes a game fully accepted (:func:`service.domain.lobby.left_inviting` lists the ways a
   seat changes before the start), so a sweep looks only among the seats accepted since the previous sweep,
   less ``INVITING_MARGIN`` (an accept slower to commit than that, or a clock further behind, waits for
   the full look). Once every ``FULL_INVITING_LOOK_EVERY`` one sweep (the one that moves the time kept in
   ``service_status`` as ``last_full_inviting_look``) looks at every inviting game instead, as does the
   first sweep ever: games repaired by hand, and older ones, are still found.

A sweep runs on one connection (taken from the pool once, not per transaction). The outage guard's
transaction also asks, in one statement, which of the parts 2–6 have anything to do, and only those run:
a sweep with nothing due is six round trips (the pool's ping, BEGIN, the recorded times, the guard's
update, that statement, COMMIT). On PostgreSQL that commit does not wait for the disk when it holds only
recorded times (``synchronous_commit`` off for that transaction; a crash of the server may lose it, as if
the sweep had not run); an outage's push back waits as every other write does.

Nothing here is a Celery ETA or countdown: a task delayed past the broker's visibility timeout would run
twice (Celery docs, "ETA and Countdown"; kombu #337). Every time comes from the database and ``now``.

5. **Games left ending**: the last step marks its game ``ending`` in its own transaction
   (:func:`service.domain.games.begin_ending`) and the tally task is sent after the commit; a game still
   ending a minute later lost its task (the broker was down, a worker died with it), and is tallied here
   through the same operation (:func:`service.domain.tally.tally_game`), which does it once whoever runs it.
   The sweep also marks ending, through that same operation, a due game whose rules state is over while it
   is still marked active, which no domain operation leaves behind (a safety net for hand-repaired rows).
6. **Steps left unannounced**: a step's announcement (its turn mails, chat notice, bot wake-up) is a job sent
   after the step commits (:mod:`service.domain.announce`); a step still unannounced a few seconds later
   lost its job, and is announced here through the same operation, which does it once whoever runs it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

import rules
from emails.messages import AdminChange, Reminder
from service.domain import announce, chat_notices, lobby, status, tally
from service.domain.clock import Clock, set_clock
from service.domain.errors import Conflict
from service.domain.games import begin_ending, get_game, seats_of, update_if_unmoved
from service.domain.links import LinkMaker
from service.domain.models import Game, GameStatus, ReminderSent, Seat, SeatController, ServiceStatus, utcnow
from service.domain.outbox import queue_mail
from service.domain.play import auto_pass, load_state
from service.domain.turn_mail import orders_of
from service.infra.logfmt import log

logger = logging.getLogger(__name__)

#: The reason an auto-pass of a resigned seat records (``admin.resign``).
RESIGNED = "resigned"

#: Games with reminders due read per query; the sweep loops until none is left or its time budget is spent.
BATCH = 200

#: A sweep looks for games left inviting among the seats accepted since the previous sweep less this: an
#: accept's time is taken when its request starts, and its transaction may commit after the previous
#: sweep looked (a slow request, a clock a little behind on another machine, a sweep that stopped early).
INVITING_MARGIN = timedelta(minutes=10)
#: How often a sweep looks at every game still inviting (claimed in ``service_status``, so one sweep does).
FULL_INVITING_LOOK_EVERY = timedelta(hours=1)


@dataclass
class SweepReport:
    now: datetime
    #: How long the service was away, when the outage guard acted.
    outage: timedelta | None = None
    pushed_back: int = 0
    auto_passed: int = 0
    finished: int = 0
    reminders: int = 0
    #: Fully accepted games found still inviting, and started.
    started: int = 0
    #: Games never confirmed by their host, dropped.
    lapsed: int = 0
    #: Games left ending (their tally task was lost), tallied.
    tallied: int = 0
    #: Steps left unannounced (their announcement's job was lost), announced.
    announced: int = 0
    #: Due games another sweep or a player's step got to first.
    raced: int = 0
    errors: int = 0


def sweep(
    session: Session,
    links: LinkMaker,
    *,
    now: datetime | None = None,
    outage_after: timedelta = timedelta(minutes=10),
    budget_seconds: float = 25.0,
    unconfirmed_max_age: timedelta = lobby.UNCONFIRMED_MAX_AGE,
) -> SweepReport:
    """Run one deadline sweep as of ``now`` (default: the real time; tests pass their own)."""
    now = now or utcnow()
    report = SweepReport(now=now)
    stop_at = time.monotonic() + budget_seconds
    with _one_connection(session):
        inviting_since = _guard_outage(session, links, now, outage_after, report)
        due = _what_is_due(session, now, inviting_since, unconfirmed_max_age)
        session.commit()  # the guard's record, with what it pushed back
        if due.auto_passes:
            _auto_pass_due(session, links, now, stop_at, report)
        if due.reminders:
            _send_due_reminders(session, now, stop_at, report)
        if due.left_inviting:
            _start_stuck_games(session, links, now, inviting_since, stop_at, report)
        if due.unconfirmed:
            report.lapsed = lobby.expire_unconfirmed(session, now, unconfirmed_max_age)
        if due.left_ending:
            healed = tally.tally_left_ending(session, now, stop_at=stop_at)
            report.tallied, report.errors = healed.mended, report.errors + healed.errors
        if due.left_unannounced:
            told = announce.announce_left(session, links, now, stop_at=stop_at)
            report.announced, report.errors = told.mended, report.errors + told.errors
    return report


@contextmanager
def _one_connection(session: Session) -> Iterator[None]:
    """Within: every transaction of ``session`` on one connection, taken from the pool (and pinged) once
    instead of once per transaction. Left as it is when the session is in a transaction already or is bound
    to a connection."""
    engine = session.bind
    if not isinstance(engine, sa.Engine) or session.in_transaction():
        yield
        return
    with engine.connect() as connection:
        session.bind = connection
        try:
            yield
        finally:
            if session.in_transaction():
                session.rollback()
            session.bind = engine


# -- 1. the outage guard ----------------------------------------------------------------------------------
def _guard_outage(
    session: Session, links: LinkMaker, now: datetime, outage_after: timedelta, report: SweepReport
) -> datetime | None:
    """Record this sweep's time and push back the deadlines of an outage, in a transaction the caller
    commits; claim the hourly full look for games left inviting when it is due. Returns the time since which
    to look for games left inviting: ``None`` for a full look."""
    names = (status.LAST_DEADLINE_SWEEP, status.LAST_FULL_INVITING_LOOK)
    columns: list[Any] = [col(ServiceStatus.name), col(ServiceStatus.at)]
    if _is_postgres(session):
        # Recorded times alone need no flush to disk before the commit returns (most of a sweep's wait on a
        # busy server): lost in a crash of the server, they are as if that sweep had not run. Set in this
        # statement, not one of its own; an outage's push back sets it back (below).
        columns.append(sa.func.set_config("synchronous_commit", "off", True))
    rows = session.execute(sa.select(*columns).where(col(ServiceStatus.name).in_(names)))
    recorded: dict[str, datetime] = {row[0]: row[1] for row in rows}
    previous, full_look = recorded.get(status.LAST_DEADLINE_SWEEP), recorded.get(status.LAST_FULL_INVITING_LOOK)
    inviting_since = None if previous is None else previous - INVITING_MARGIN
    full_look_due = full_look is None or full_look <= now - FULL_INVITING_LOOK_EVERY
    if full_look_due and status.claim(session, status.LAST_FULL_INVITING_LOOK, full_look, now):
        inviting_since = None
    if previous is not None and now <= previous:  # a later sweep already recorded itself
        return inviting_since
    if not status.claim(session, status.LAST_DEADLINE_SWEEP, previous, now) or previous is None:
        # The first sweep ever (nothing was missed), or another sweep recorded itself since we read the time:
        # it owns any outage push, committed with its record (on PostgreSQL our update waited for that commit).
        return inviting_since
    gap = now - previous
    if gap > outage_after:
        if _is_postgres(session):
            session.execute(sa.text("SET LOCAL synchronous_commit TO on"))  # the deadlines moved: durable
        report.outage = gap
        report.pushed_back = _push_back(session, links, previous, now, gap)
        log(
            logger,
            logging.WARNING,
            "deadline.outage",
            since=previous.isoformat(),
            seconds=int(gap.total_seconds()),
            pushed_back=report.pushed_back,
        )
    return inviting_since


@dataclass(frozen=True)
class _Due:
    """Which of the sweep's parts have anything to do, read in one statement."""

    auto_passes: bool
    reminders: bool
    left_inviting: bool
    unconfirmed: bool
    left_ending: bool
    left_unannounced: bool


def _what_is_due(
    session: Session, now: datetime, inviting_since: datetime | None, unconfirmed_max_age: timedelta
) -> _Due:
    """One statement instead of a transaction per part that finds nothing (most sweeps): each part runs
    only if this found something for it. A full look for games left inviting always runs (hourly)."""
    left_inviting = sa.true() if inviting_since is None else lobby.left_inviting(inviting_since).exists()
    row = session.execute(
        sa.select(
            sa.exists().where(_due(now)),
            sa.exists().where(_reminders_due(now)),
            left_inviting,
            sa.exists().where(lobby.unconfirmed_too_long(now, unconfirmed_max_age)),
            sa.exists().where(tally.left_ending(now)),
            sa.exists().where(announce.left_unannounced(now)),
        )
    ).one()
    return _Due(*(bool(flag) for flag in row))


def _push_back(session: Session, links: LinkMaker, since: datetime, now: datetime, gap: timedelta) -> int:
    """Move every deadline that fell in (since, now] forward by ``gap``, and tell the players it concerns."""
    query = (
        select(Game)
        .where(Game.status == GameStatus.ACTIVE, Clock.due_between_clause(since, now))
        .execution_options(populate_existing=True)
    )
    if _is_postgres(session):
        query = query.with_for_update()
    games = list(session.exec(query).all())
    for game in games:
        clock = Clock.of(game).push_back(now, gap)
        set_clock(game, clock)
        session.add(game)
        state = load_state(game)
        for seat, player in seats_of(session, game.id or 0):
            if seat.seat not in rules.awaiting(state) or seat.removed:
                continue
            notice = AdminChange.to_seat(
                game,
                seat,
                change="outage",
                actor="system",
                details={"from": since.isoformat(), "to": now.isoformat(), "seconds": int(gap.total_seconds())},
                deadline_at=clock.deadline,
                seat=seat.seat,
            )
            queue_mail(session, player, notice, now=now)
        told = chat_notices.outage_notice(game, since=since, now=now, deadline_at=clock.deadline)
        chat_notices.queue_notice(session, game, told, now=now)
    return len(games)


# -- 2. auto-passes ---------------------------------------------------------------------------------------
def _auto_pass_due(session: Session, links: LinkMaker, now: datetime, stop_at: float, report: SweepReport) -> None:
    given_up: set[int] = set()
    while time.monotonic() < stop_at:
        game = _lock_next_due(session, now, given_up)
        if game is None:  # nothing is due, or every due game is another sweep's now
            return
        if not _pass_one(session, links, game, now, report):
            given_up.add(game.id or 0)


def _lock_next_due(session: Session, now: datetime, given_up: set[int]) -> Game | None:
    """The due game with the earliest deadline, locked for this transaction; ``None`` when none is left.

    One statement finds and locks it, one game per transaction. On PostgreSQL the games other sweeps hold
    are skipped (``SKIP LOCKED``), so concurrent sweeps take different games instead of each trying the
    same ones in turn. Ordered by the deadline alone, which its index gives without sorting every due row.
    """
    query = select(Game).where(_due(now))
    if given_up:
        query = query.where(col(Game.id).not_in(given_up))
    query = query.order_by(Clock.soonest_first()).limit(1).execution_options(populate_existing=True)
    if _is_postgres(session):
        query = query.with_for_update(skip_locked=True)
    game = session.exec(query).first()
    if game is None:
        session.rollback()  # no transaction (and, on SQLite, no write lock) held between sweeps
    return game


def _pass_one(session: Session, links: LinkMaker, game: Game, now: datetime, report: SweepReport) -> bool:
    """Auto-pass one due game, locked by the caller; ``False`` when it was not passed (the sweep then
    leaves it alone: it would be found due again at once)."""
    game_id = game.id or 0
    try:
        state = load_state(game)
        if state.over:
            return _finish_left_over(session, game, state, now, report)
        awaited = sorted(rules.awaiting(state))
        if not awaited:
            session.rollback()
            report.errors += 1
            log(logger, logging.ERROR, "deadline.nothing_awaited", game=game_id, version=game.version)
            return False
        version = game.version
        # A seat whose player resigned is passed at once, and that is no missed deadline (their record).
        seat = session.exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == awaited[0])).first()
        reason = RESIGNED if seat is not None and seat.resigned_at is not None else "deadline"
        auto_pass(session, game_id, awaited[0], links, expected_version=version, reason=reason, now=now)
    except Conflict:  # moved on meanwhile (a player's step): not due now, or not this sweep's to retry
        session.rollback()
        report.raced += 1
        return False
    except Exception as error:  # one broken game must not stop the sweep for every other game
        session.rollback()
        report.errors += 1
        log(logger, logging.ERROR, "deadline.auto_pass_failed", game=game_id, error=repr(error))
        logger.exception("auto-pass of game %s failed", game_id)
        return False
    report.auto_passed += 1
    log(logger, logging.INFO, "deadline.auto_pass", game=game_id, seat=awaited[0], version=version + 1)
    return True


def _finish_left_over(session: Session, game: Game, state: rules.GameState, now: datetime, report: SweepReport) -> bool:
    """The safety net: the game is over by the rules but still active. Mark it ending, once (version guard);
    its tally task is sent after the commit."""
    with session.no_autoflush:  # the change goes out in the guarded UPDATE of the game
        version = game.version
        game.version += 1
        begin_ending(session, game, now)
        if not update_if_unmoved(session, game, version):
            session.rollback()
            report.raced += 1
            return True
    session.commit()
    report.finished += 1
    log(logger, logging.WARNING, "deadline.finished_left_over_game", game=game.id, version=game.version)
    return True


# -- 3. reminders -----------------------------------------------------------------------------------------
def _send_due_reminders(session: Session, now: datetime, stop_at: float, report: SweepReport) -> None:
    given_up: set[int] = set()
    while time.monotonic() < stop_at:
        query = select(Game.id).where(_reminders_due(now))
        if given_up:
            query = query.where(col(Game.id).not_in(given_up))
        due = list(session.execute(query.order_by(Clock.soonest_reminder_first(), col(Game.id)).limit(BATCH)).scalars())
        session.rollback()
        if not due:
            return
        for game_id in due:
            try:
                _remind_one(session, game_id, now, report)
            except IntegrityError:  # another sweep recorded these reminders first
                session.rollback()
                report.raced += 1
            except Exception as error:
                session.rollback()
                report.errors += 1
                given_up.add(game_id)
                log(logger, logging.ERROR, "deadline.reminder_failed", game=game_id, error=repr(error))
                logger.exception("reminders of game %s failed", game_id)
            if time.monotonic() >= stop_at:
                return


def _remind_one(session: Session, game_id: int, now: datetime, report: SweepReport) -> None:
    game = _lock_if(session, game_id, Clock.reminders_due_clause(now))
    if game is None:
        report.raced += 1
        return
    clock = Clock.of(game)
    due = clock.reminders_due(now)
    sent = set(
        session.execute(
            select(ReminderSent.before_seconds).where(
                ReminderSent.game_id == game_id, ReminderSent.step_key == game.step_key
            )
        ).scalars()
    )
    new = [s for s in due if s not in sent]
    if new and game.step_key:
        # Several due at once (the sweep did not run for a while): one mail, the most urgent, stating the
        # time left now; all are recorded, so none comes later either.
        mailed = min(new)
        for before in new:
            session.add(
                ReminderSent(
                    game_id=game_id, step_key=game.step_key, before_seconds=before, sent_at=now, mailed=before == mailed
                )
            )
        report.reminders += _queue_reminders(session, game, clock, mailed, now)
        log(
            logger,
            logging.INFO,
            "deadline.reminder",
            game=game_id,
            step=game.step_key,
            before_seconds=mailed,
            recorded=len(new),
        )
    set_clock(game, clock.reminded(now))
    session.add(game)
    session.commit()


def _queue_reminders(session: Session, game: Game, clock: Clock, before: int, now: datetime) -> int:
    state = load_state(game)
    awaited = rules.awaiting(state)
    queued = 0
    seats = seats_of(session, game.id or 0)
    names = {seat.seat: seat.display_name for seat, _ in seats}
    for seat, player in seats:
        if seat.seat not in awaited or seat.removed or seat.controller == SeatController.BOT:
            continue  # the house bot plays a bot seat's turns: no reminder to its player's address
        reminder = Reminder.to_seat(
            game,
            seat,
            deadline_at=clock.deadline,
            step_key=game.step_key,
            before_seconds=before,
            defending=state.phase == rules.Phase.DEFEND,
            turn=state.turn,
            turns=state.turns,
            seat=seat.seat,
            **orders_of(state, seat.seat, names),
        )
        written = queue_mail(session, player, reminder, now=now)
        queued += written
    return queued


# -- internals --------------------------------------------------------------------------------------------
# -- 4. games left waiting --------------------------------------------------------------------------------
def _start_stuck_games(
    session: Session, links: LinkMaker, now: datetime, since: datetime | None, stop_at: float, report: SweepReport
) -> None:
    stuck = lobby.stuck_inviting(session, since)
    session.rollback()
    for game_id in stuck:
        if time.monotonic() > stop_at:
            return
        try:
            game = get_game(session, game_id, lock=True)
            started = lobby.start_if_all_accepted(session, game, links, now=now)
            session.commit()
        except Exception as error:  # one broken game must not stop the others
            session.rollback()
            report.errors += 1
            log(logger, logging.ERROR, "deadline.start_failed", game=game_id, error=repr(error))
            continue
        if started:
            report.started += 1
            log(logger, logging.WARNING, "deadline.started_stuck_game", game=game_id)


def _due(now: datetime) -> sa.ColumnElement[bool]:
    """The games whose deadline has passed."""
    return sa.and_(col(Game.status) == GameStatus.ACTIVE, Clock.due_clause(now))


def _reminders_due(now: datetime) -> sa.ColumnElement[bool]:
    """The games with reminders due."""
    return sa.and_(col(Game.status) == GameStatus.ACTIVE, Clock.reminders_due_clause(now))


def _is_postgres(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _lock_if(session: Session, game_id: int, condition: sa.ColumnElement[bool]) -> Game | None:
    """The game, locked for this transaction, if it is active and ``condition`` still holds; else ``None``.

    On PostgreSQL a row another sweep holds is skipped, not waited for. Sessions keep objects after
    commit (service.infra.db), so the row is read afresh (``populate_existing``).
    """
    query = (
        select(Game)
        .where(Game.id == game_id, Game.status == GameStatus.ACTIVE, condition)
        .execution_options(populate_existing=True)
    )
    if _is_postgres(session):
        query = query.with_for_update(skip_locked=True)
    game = session.exec(query).first()
    if game is None:
        session.rollback()
    return game
