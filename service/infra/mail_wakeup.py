"""Waking the mail worker once mail is committed: the web and the sweep send the delivery task after every
commit that wrote outbox rows (:data:`MAIL_WRITTEN`), never before it. Chat notices are woken the same
way (:data:`CHAT_WRITTEN` sends :data:`DELIVER_CHAT`, on the ``chat`` queue), and so is the end of a game:
a commit that marked games ``ending`` (:data:`TALLY_WANTED`) sends :data:`TALLY_GAME` for each of them, and
a commit that made games wait for a new step (:data:`ANNOUNCE_WANTED`) sends :data:`ANNOUNCE_STEP` for each.

The tasks themselves live in ``worker/tasks/mail.py`` and ``worker/tasks/chat.py``; they are sent by name,
so this module needs no import of the worker (dependencies go worker → service, never back).
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flask import current_app, has_app_context
from sqlalchemy import event
from sqlalchemy.orm import Session as OrmSession

from service.infra.logfmt import log

logger = logging.getLogger(__name__)

#: The delivery task's name (``worker.tasks.mail.deliver_outbox``), routed to the ``mail`` queue.
DELIVER_OUTBOX = "worker.tasks.mail.deliver_outbox"
_THROTTLE = "smallworld.mail_task_throttle"

#: Set in ``session.info`` by the outbox when a mail row was written in the session's transaction:
#: :func:`send_after_commit`'s hook then asks for a delivery once the transaction commits.
MAIL_WRITTEN = "smallworld.mail_written"

#: The chat notices' delivery task (``worker.tasks.chat.deliver_chat_notices``), routed to the ``chat`` queue.
DELIVER_CHAT = "worker.tasks.chat.deliver_chat_notices"
#: Set in ``session.info`` when a chat notice was written (``service.domain.chat_notices``).
CHAT_WRITTEN = "smallworld.chat_written"

#: What each flag asks for once its transaction commits.
_TASKS = {MAIL_WRITTEN: DELIVER_OUTBOX, CHAT_WRITTEN: DELIVER_CHAT}

#: The end-of-game task (``worker.tasks.tally.tally_game``), sent with the game's id.
TALLY_GAME = "worker.tasks.tally.tally_game"
#: A set of game ids in ``session.info``: the games the transaction marked ``ending``
#: (``service.domain.games.begin_ending``); each gets its tally task once the transaction commits. A task
#: lost on the way (broker down) is made up for by the deadline sweep, which tallies games left ending.
TALLY_WANTED = "smallworld.tally_wanted"

#: The house bot's task (``worker.tasks.bots.play_bot_turns``), sent with a game's id once a transaction that
#: made the game wait for a seat the house bot plays commits (``service.domain.house_bot``).
PLAY_BOT_TURNS = "worker.tasks.bots.play_bot_turns"
#: ``session.info`` key: the ids of the games whose bot seat is awaited, written in this transaction.
BOT_TURNS = "smallworld.bot_turns"

#: The announcement of a game's new step (``worker.tasks.announce.announce_step``), sent with the game's id once
#: the step's transaction commits (ARCHITECTURE §2): its turn mails, chat notice and bot wake-up are made there
#: (``service.domain.announce``), not in the step's request. A task lost on the way is made up for by the sweep.
ANNOUNCE_STEP = "worker.tasks.announce.announce_step"
#: ``session.info`` key: the games whose awaited step changed in this transaction, by id, each with the link
#: maker the step was made with (what an announcement made in this process, as the tests' is, mints links
#: with; the worker's task uses its own app's, which production configures alike).
ANNOUNCE_WANTED = "smallworld.announce_wanted"


def want_announcement(session: OrmSession, game_id: int, links: object) -> None:
    """Ask for :data:`ANNOUNCE_STEP` for ``game_id`` once the session's transaction commits (never before: the
    worker would find the step not yet there)."""
    session.info.setdefault(ANNOUNCE_WANTED, {})[game_id] = links


def wake_bot_after_commit(session: OrmSession, game_id: int) -> None:
    """Ask for :data:`PLAY_BOT_TURNS` for this game once the session's transaction commits (never before:
    the worker would find the game as it was)."""
    session.info.setdefault(BOT_TURNS, set()).add(game_id)


# -- sending the task once the mail is committed ---------------------------------------------------------
def send_after_commit() -> None:
    """Send :func:`deliver_outbox` after every commit that wrote outbox rows, and only then.

    Sent before the commit, a worker could look for the mail before it exists, and find nothing; sent
    from a transaction that then rolls back, it would look for mail that never was (Warehouse enqueues
    its tasks after the commit for the same reason).
    """
    if not event.contains(OrmSession, "after_commit", _send_if_mail_queued):
        event.listen(OrmSession, "after_commit", _send_if_mail_queued)
        event.listen(OrmSession, "after_rollback", _forget_mail_queued)


def _forget_mail_queued(session: OrmSession) -> None:
    for flag in _TASKS:
        session.info.pop(flag, None)
    session.info.pop(BOT_TURNS, None)
    session.info.pop(TALLY_WANTED, None)
    session.info.pop(ANNOUNCE_WANTED, None)


def want_tally(session: OrmSession, game_id: int) -> None:
    """Ask for :data:`TALLY_GAME` for ``game_id`` once the session's transaction commits."""
    session.info.setdefault(TALLY_WANTED, set()).add(game_id)


#: After a failed send, this process does not try again for this long (seconds). Reaching a broker that is
#: down takes kombu a few seconds of retries, which a web request should not pay at every commit; the mail
#: is not lost meanwhile, only sent by beat's next drain instead of at once.
BROKER_PAUSE = 30.0
_broker_down_until: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()


@contextmanager
def throttled_delivery_task(session: OrmSession, every: float = 1.0) -> Iterator[None]:
    """Within: the commits of ``session`` that write mail send :func:`deliver_outbox` at most once every
    ``every`` seconds, and once more at the end if mail was written since the last send.

    For the deadline sweep, which commits once per game: a drain takes every due mail, so a task a second
    delivers as soon, without a task (a broker round trip, then a drain finding nothing) per auto-pass.
    """
    throttle: dict[str, Any] = {"every": every, "sent_at": {}, "pending": set()}
    session.info[_THROTTLE] = throttle
    try:
        yield
    finally:
        session.info.pop(_THROTTLE, None)
        for task in sorted(throttle["pending"]):
            _send_delivery_task(task)


def _send_if_mail_queued(session: OrmSession) -> None:
    for flag, task in _TASKS.items():
        if session.info.pop(flag, False):
            _send_throttled(session, task)
    for game_id in sorted(session.info.pop(BOT_TURNS, ())):
        _send_delivery_task(PLAY_BOT_TURNS, [game_id])
    for game_id in sorted(session.info.pop(TALLY_WANTED, ())):
        _send_delivery_task(TALLY_GAME, [game_id])
    for game_id in sorted(session.info.pop(ANNOUNCE_WANTED, {})):
        _send_delivery_task(ANNOUNCE_STEP, [game_id])


def _send_throttled(session: OrmSession, task: str) -> None:
    throttle = session.info.get(_THROTTLE)
    if throttle is not None:
        now = time.monotonic()
        sent_at = throttle["sent_at"].get(task)
        if sent_at is not None and now - sent_at < throttle["every"]:
            throttle["pending"].add(task)  # sent at the next commit with rows after the wait, or at the end
            return
        throttle["sent_at"][task] = now
        throttle["pending"].discard(task)
    _send_delivery_task(task)


def _send_delivery_task(task: str = DELIVER_OUTBOX, args: list[Any] | None = None) -> None:
    if not has_app_context():
        return  # no app (a script or a test on a bare session): the periodic drain delivers it
    celery_app = current_app.extensions.get("celery")
    if celery_app is None or time.monotonic() < _broker_down_until.get(celery_app, 0.0):
        return
    try:
        celery_app.send_task(task, args=args, retry=False)
    except Exception as error:
        _broker_down_until[celery_app] = time.monotonic() + BROKER_PAUSE
        log(logger, logging.WARNING, "mail.enqueue_failed", task=task, error=repr(error), paused_seconds=BROKER_PAUSE)
