"""Announcing a game's new step, after the step's commit (ARCHITECTURE §2, "the step does only the step").

A step's request stores the step: its event, the game's state and version, and when the awaited step changed,
its clock (``service.domain.play.after_change``). Telling the others is this module's, in a worker job sent once
that transaction commits (``worker/tasks/announce.py``): the mail of each seat now awaited ("your turn" or
"redeploy needed", with "Since your last turn" and the board's picture), the game's chat notice, and the house
bot's wake-up when it plays the awaited seat.

**Exactly once.** A step that makes the game await a new step (``Game.step_key``) sets ``Game.announced_key``
to None; :func:`announce` locks the game's row and does nothing unless it is None; it writes the mails and the
notice, sets ``announced_key`` to the step announced and commits, in one transaction. Of two jobs for the same
step the second finds it announced; a job killed midway commits nothing and the step is announced again, once;
and the rows' dedupe keys (the mail's per step, the notice's per step) hold besides.

**Only the current step.** A job runs a moment after its step, and the game may have moved on meanwhile (the
seat played on from its page, the sweep passed it, a host's act). It announces the step the game awaits when
it runs, never the one it was sent for: a mail asking for a step already gone would be stale (its link would
open a step that is over, and delivery drops such mail anyway, ARCHITECTURE §6). The mail shows the board and
the story as they stand when the job runs, a fraction of a second after the step as a rule.

**Nothing lost.** A crash between the step's commit and the job (the web process killed, the broker down)
leaves the step unannounced in the database; the deadline sweep looks for games whose step is unannounced
for longer than :data:`LEFT_UNANNOUNCED_AFTER` (:func:`left_unannounced`, through a partial index of those
games) and announces each in its own transaction (:func:`announce_left`); one that fails is logged and the
others go on.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

import rules
from emails.messages import RedeployNeeded, YourTurn
from service.domain import chat_notices, story
from service.domain.clock import Clock
from service.domain.games import MendReport, locked_for_job, mend_each, seats_by_number
from service.domain.links import LinkMaker
from service.domain.models import Game, GameStatus, SeatController, utcnow
from service.domain.outbox import queue_mail
from service.domain.play import load_state, passed_without_player, step_key, told_turns
from service.domain.rows import SeatRow
from service.domain.turn_mail import step_details
from service.infra.mail_wakeup import wake_bot_after_commit

logger = logging.getLogger(__name__)

#: A step unannounced for longer than this lost its job (the broker was down, a process died between the
#: commit and the send): the deadline sweep announces it. Long enough that the sweep never races a job that is
#: merely queued behind others; short beside a turn.
LEFT_UNANNOUNCED_AFTER = timedelta(seconds=10)

#: The statuses in which a game's step is announced: a paused game's too (its mail says the clock starts when
#: the game resumes), as the step's own transaction did before.
_ANNOUNCED_IN = (GameStatus.ACTIVE, GameStatus.PAUSED)


def announce(
    session: Session, game_id: int, links: LinkMaker, *, now: datetime | None = None, skip_locked: bool = False
) -> bool:
    """Announce the step ``game_id`` awaits, if it is not yet, in one transaction (committed here); whether
    this call did it.

    ``skip_locked`` (the sweep): a game whose row another transaction holds (a job announcing it, a step) is
    left to that transaction instead of waited for.
    """
    now = now or utcnow()
    game = locked_for_job(session, game_id, skip_locked=skip_locked)
    if (
        game is None
        or game.status not in _ANNOUNCED_IN
        or game.state is None
        or game.step_key is None
        or game.announced_key is not None
    ):
        session.rollback()
        return False
    state = load_state(game)
    key = step_key(state)
    first = state.last.get("kind") == "setup"  # no step taken yet: the game has just begun (rules.new_game)
    seats = seats_by_number(session, game_id)
    deadline = Clock.read(game).deadline
    _mail_the_awaited(session, game, state, key, seats, deadline, links, now)
    _tell_the_chat(session, game, state, key, seats, deadline, first, now)
    game.announced_key = game.step_key
    session.add(game)
    session.commit()
    return True


def _mail_the_awaited(
    session: Session,
    game: Game,
    state: rules.GameState,
    key: str,
    seats: dict[int, SeatRow],
    deadline: datetime | None,
    links: LinkMaker,
    now: datetime,
) -> None:
    """The mail of each seat the step awaits, or the house bot's wake-up for a seat it plays."""
    awaited_seats = sorted(rules.awaiting(state))
    defending = state.phase == rules.Phase.DEFEND
    names = {number: s.display_name for number, s in seats.items()}
    turns: list[story.Turn] | None = None
    told = False  # the log is replayed for the first mail that tells it, and only then
    for awaited in awaited_seats:
        seat = seats[awaited]
        if passed_without_player(seat):
            continue
        if seat.controller == SeatController.BOT:
            # The house bot plays the step in the worker, once this transaction commits; no mail to the
            # seat's address (its player was told the bot plays the seat, with the link to take it back).
            wake_bot_after_commit(session, game.id or 0)
            continue
        extra: dict[str, Any] = {}
        if not told:
            turns, told = told_turns(session, game, readers=awaited_seats), True
        if turns is not None:
            # "Since your last turn" (issue 18): the other players' turns in words, public facts only.
            seat_names = [names.get(n, f"Player {n + 1}") for n in range(len(state.players))]
            extra["since"] = story.since_words(turns, seat_names, awaited)
        kind = RedeployNeeded if defending else YourTurn
        message = kind.to_seat(
            game,
            seat,
            turn=state.turn,
            turns=state.turns,
            guide_url=links.url("/how-to-play"),
            deadline_at=deadline,
            version=game.version,
            step_key=key,
            # The board picture and words of the mail (emails/board/).
            **step_details(state, awaited, names),
            **extra,
        )
        queue_mail(session, seat.player, message, now=now)


def _tell_the_chat(
    session: Session,
    game: Game,
    state: rules.GameState,
    key: str,
    seats: dict[int, SeatRow],
    deadline: datetime | None,
    first: bool,
    now: datetime,
) -> None:
    """The game's chat, if it has one: whose turn and until when, nothing private (no link, no coins)."""
    for awaited in sorted(rules.awaiting(state)):
        seat = seats.get(awaited)
        turn = chat_notices.turn_notice(
            game,
            step_key=key,
            turn=state.turn,
            turns=state.turns,
            name=seat.display_name if seat is not None else f"Player {awaited + 1}",
            defending=state.phase == rules.Phase.DEFEND,
            deadline_at=deadline,
            removed=seat is not None and passed_without_player(seat),
            first=first,
        )
        chat_notices.queue_notice(session, game, turn, now=now)


# -- the sweep's part: steps whose job was lost ----------------------------------------------------------
def left_unannounced(now: datetime, older_than: timedelta = LEFT_UNANNOUNCED_AFTER) -> sa.ColumnElement[bool]:
    """The games :func:`announce_left` announces: running or paused, awaiting a step that began before
    ``now - older_than`` and is not announced (the partial index ``ix_games_unannounced`` holds them)."""
    return sa.and_(
        col(Game.announced_key).is_(None),
        col(Game.step_key).is_not(None),
        col(Game.status).in_(_ANNOUNCED_IN),
        Clock.step_started_before_clause(now - older_than),
    )


def announce_left(
    session: Session,
    links: LinkMaker,
    now: datetime,
    *,
    older_than: timedelta = LEFT_UNANNOUNCED_AFTER,
    stop_at: float | None = None,
    limit: int = 200,
) -> MendReport:
    """The deadline sweep's part: announce every game whose step is unannounced since before ``now -
    older_than`` (its job was lost), one transaction each; a game a job is announcing now is skipped, one
    that fails is logged and the others go on."""
    left = list(session.exec(select(Game.id).where(left_unannounced(now, older_than)).limit(limit)).all())
    session.rollback()
    return mend_each(
        session,
        left,
        lambda game_id: announce(session, game_id, links, now=now, skip_locked=True),
        stop_at=stop_at,
        logger=logger,
        events=("game.announced_left_unannounced", "game.announce_failed"),
    )
