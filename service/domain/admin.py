"""Managing a game's deadlines and seats: the host (admin link) and site admins (ARCHITECTURE §1 item 4, §5).

Every act is validated, recorded in the audit log, announced by mail to the players concerned, and moves
the game's version on (an ``admin`` event in the log), so a deadline sweep that read the game before the
act finds it changed and does nothing (``play.auto_pass(expected_version=…)``).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

import rules
from emails import admin_acts
from emails.messages import AdminChange, Invitation
from service.domain import block_list, chat_notices
from service.domain.clock import Clock, set_clock
from service.domain.errors import BadRequest, Conflict, NotFound
from service.domain.games import get_game, seats_of, settings_of, update_if_unmoved
from service.domain.links import LinkMaker
from service.domain.lobby import player_for
from service.domain.models import (
    ActionKind,
    AuditEntry,
    Game,
    GameStatus,
    MailStatus,
    OutboxMail,
    Player,
    Seat,
    SeatController,
    utcnow,
)
from service.domain.outbox import queue_mail
from service.domain.play import auto_pass, commit_step, forget_turn_starts, load_state, new_event
from service.domain.schemas import NAME_LENGTH, GameSettings
from service.domain.text import checked, mail_address, printable_text
from service.infra import chat
from service.infra.mail_wakeup import wake_bot_after_commit

MAX_EXTENSION = timedelta(days=60)


@dataclass(frozen=True)
class Actor:
    """Who acts: ``host``, ``site admin a@b.org``, ``seat 2`` — as shown in the audit log."""

    label: str


HOST = Actor("host")


def site_admin(email: str) -> Actor:
    return Actor(f"site admin {email}")


# -- deadlines --------------------------------------------------------------------------------------------
def extend_deadline(
    session: Session,
    game_id: int,
    actor: Actor,
    links: LinkMaker,
    *,
    by: timedelta | None = None,
    to: datetime | None = None,
    now: datetime | None = None,
) -> Game:
    """Push the current deadline back by a duration, or to a date and time (aware; the caller converts
    from the admin's time zone)."""
    now = now or utcnow()
    game = _running(session, game_id, paused_ok=True)
    if (by is None) == (to is None):
        raise BadRequest("Give either a duration or a new date and time for the deadline")
    if game.status == GameStatus.PAUSED:
        raise Conflict("The game is paused: resume it first, or extend it after resuming")
    if to is not None and to.tzinfo is None:
        raise BadRequest("The new deadline needs a time zone")
    if by is not None and by <= timedelta(0):
        raise BadRequest("An extension must be longer than zero")
    clock = Clock.of(game)
    current = clock.deadline or now
    # A moment far from now is refused before any time is computed from it (year 1 less a reminder's
    # offset is no date at all).
    if to is not None and to <= now:
        raise BadRequest("The new deadline is in the past")
    if to is not None and to - current > MAX_EXTENSION:
        raise BadRequest("A deadline can be extended by at most 60 days at a time")
    extended = clock.extend(now, by=by, to=to)
    new = extended.deadline
    assert new is not None
    if new <= now:
        raise BadRequest("The new deadline is in the past")
    if new - current > MAX_EXTENSION:
        raise BadRequest("A deadline can be extended by at most 60 days at a time")
    set_clock(game, extended)
    details = {"from": current.isoformat(), "to": new.isoformat()}
    return _act(session, game, actor, "extend", details, links)


def pause(
    session: Session, game_id: int, actor: Actor, links: LinkMaker, reason: str, now: datetime | None = None
) -> Game:
    """Stop the clock; the time left is kept (ARCHITECTURE §5: pause stores the remaining time)."""
    now = now or utcnow()
    game = _running(session, game_id)
    reason = (reason or "").strip()
    if not reason:
        raise BadRequest("Say why the game is paused; the players will see it")
    if len(reason) > 300:
        raise BadRequest("Keep the reason under 300 characters")
    clock = Clock.of(game)
    remaining = clock.remaining(now)
    game.status = GameStatus.PAUSED
    set_clock(game, clock.pause(now))
    game.pause_reason = reason
    return _act(session, game, actor, "pause", {"reason": reason, "remaining_seconds": remaining}, links)


def resume(session: Session, game_id: int, actor: Actor, links: LinkMaker, now: datetime | None = None) -> Game:
    """Start the clock again with exactly the time that was left (ARCHITECTURE §5: deadline = now + remaining)."""
    now = now or utcnow()
    game = get_game(session, game_id)
    if game.status != GameStatus.PAUSED:
        raise Conflict("The game is not paused")
    clock = Clock.of(game)
    remaining = clock.remaining(now)
    game.status = GameStatus.ACTIVE
    set_clock(game, clock.resume(now))
    game.pause_reason = None
    return _act(session, game, actor, "resume", {"remaining_seconds": remaining}, links)


def pass_now(session: Session, game_id: int, actor: Actor, links: LinkMaker) -> Game:
    """Auto-pass whoever the game waits for, exactly as a missed deadline would (``rules.auto_pass``)."""
    game = _running(session, game_id)
    state = load_state(game)
    seat = min(rules.awaiting(state))
    session.add(AuditEntry(game_id=game_id, actor=actor.label, act="pass", details={"seat": seat}))
    auto_pass(session, game_id, seat, links, expected_version=game.version, reason=actor.label)
    return game  # the session's object, which the pass changed


def change_settings(
    session: Session,
    game_id: int,
    actor: Actor,
    links: LinkMaker,
    *,
    turn_length_seconds: int | None = None,
    defender_turn_length_seconds: int | None = None,
    reminders_before_seconds: list[int] | None = None,
    redeploy: str | None = None,
    vacation_days: int | None = None,
) -> Game:
    """Turn length and reminders apply from the next turn; the redeploy mode from the next end of turn."""
    game = _running(session, game_id, paused_ok=True)
    changes = {
        key: value
        for key, value in {
            "turn_length_seconds": turn_length_seconds,
            "defender_turn_length_seconds": defender_turn_length_seconds,
            "reminders_before_seconds": reminders_before_seconds,
            "redeploy": redeploy,
            "vacation_days": vacation_days,
        }.items()
        if value is not None
    }
    if not changes:
        raise BadRequest("Nothing to change")
    try:
        settings = GameSettings.model_validate(game.settings | changes)
    except ValueError as error:
        raise BadRequest(f"Invalid settings: {error}") from None
    game.settings = settings.model_dump()
    state = load_state(game)
    if redeploy is not None and redeploy != state.options.get("redeploy"):
        # The mode is part of the rules state: record it in the log so a replay applies it at this point.
        new_state = rules.with_options(state, {"redeploy": redeploy})
        return _act(session, game, actor, "settings", changes, links, new_state=new_state)
    return _act(session, game, actor, "settings", changes, links)


# -- seats ------------------------------------------------------------------------------------------------
def replace_player(
    session: Session,
    game_id: int,
    actor: Actor,
    links: LinkMaker,
    seat_no: int,
    email: str,
    name: str,
    now: datetime | None = None,
) -> Game:
    """Give a seat to someone else: same seat, new player; the old seat secret is revoked, so every old
    link of the seat dies; the new player is invited with the game as it stands. Before the game starts
    (an invitation nobody answers), the newcomer accepts their own invitation like the others."""
    now = now or utcnow()
    game = _running(session, game_id, paused_ok=True, inviting_ok=True)
    seat = _seat(session, game_id, seat_no)
    email = checked("The new player's email address", mail_address, email)
    name = name if name.strip() else email.split("@")[0]  # a seat needs a name: the address's, if none given
    name = checked("The new player's name", lambda text: printable_text(text, longest=NAME_LENGTH), name)
    old = session.get(Player, seat.player_id)
    old_name = seat.display_name
    taken = {p.email for s, p in seats_of(session, game_id) if s.seat != seat_no}
    if email in taken:
        raise BadRequest("That player already holds another seat in this game")
    block_list.refuse_blocked(session, [email])
    new = player_for(session, email)
    seat.player_id = new.id or 0
    seat.display_name = name
    seat.secret = secrets.token_urlsafe(16)
    started = game.state is not None
    seat.accepted_at = now if started else None
    seat.removed = False
    seat.controller = SeatController.PERSON  # the newcomer plays the seat, not the house bot
    session.add(seat)
    awaited = rules.awaiting(load_state(game)) if started else set()
    if game.status == GameStatus.ACTIVE and seat_no in awaited:
        # A fresh turn for the newcomer.
        settings = settings_of(game)
        set_clock(game, Clock.of(game, settings).restart(now, settings.turn_length_seconds))
    invitation = Invitation(
        game_id=game_id,
        game_name=game.name,
        player_name=name,
        players=[s.display_name for s, _ in seats_of(session, game_id)],
        invite_url=links.invite_url(game_id, seat_no, seat.secret, serial=new.links_serial),
        replacing=old_name,
        your_turn=seat_no in awaited,
        turn_length_seconds=settings_of(game).turn_length_seconds,
        starts_at_once=started,
        seat=seat_no,
        seat_secret=seat.secret,
        block_url=links.block_url(email),
    )
    queue_mail(session, new, invitation)
    details = {"seat": seat_no, "from": old_name, "to": name}
    also = [(old, old_name)] if old else []
    return _act(session, game, actor, "replace", details, links, also=also)


def remove_player(session: Session, game_id: int, actor: Actor, links: LinkMaker, seat_no: int) -> Game:
    """The seat stays in the game but is auto-passed for the rest of it (at once when its turn comes)."""
    game = _running(session, game_id, paused_ok=True)
    seat = _seat(session, game_id, seat_no)
    if seat.removed:
        raise Conflict(f"Seat {seat_no} was already removed")
    seat.removed = True
    session.add(seat)
    state = load_state(game)
    if seat_no in rules.awaiting(state):
        # Running, the next sweep passes the seat; paused, no time is left for it when the game resumes.
        set_clock(game, Clock.of(game).run_out(utcnow()))
    return _act(session, game, actor, "remove", {"seat": seat_no}, links)


def cancel(session: Session, game_id: int, actor: Actor, links: LinkMaker, reason: str = "") -> Game:
    """End the game for good, running or still waiting for its invitations to be accepted."""
    game = _running(session, game_id, paused_ok=True, inviting_ok=True)
    game.status = GameStatus.CANCELLED
    set_clock(game, Clock.of(game).stop())
    game.finished_at = utcnow()
    forget_turn_starts(session, game_id)  # a cache for the turn mails (play.told_turns): none come now
    return _act(session, game, actor, "cancel", {"reason": reason.strip()[:300]}, links)


# -- the game's chat ------------------------------------------------------------------------------------
def set_chat_url(session: Session, game_id: int, actor: Actor, chat_url: str | None) -> Game:
    """Connect the game to a chat (an apprise URL: ``service.infra.chat``), or disconnect it (``None``).

    Audited with the chat service's name only (the address is a secret, and the log is shown to players);
    neither mailed to the players nor a new version of the game: their play does not change. A newly
    connected chat gets a first notice at once, so the host sees that it works.
    """
    game = _running(session, game_id, paused_ok=True, inviting_ok=True)
    url: str | None = None
    if chat_url is not None and chat_url.strip():
        try:
            url = chat.check_chat_url(chat_url)
        except chat.ChatUrlError as error:
            raise BadRequest(f"chat_url: {error}") from None
    if url == game.chat_url:
        raise BadRequest("chat_url: the game's chat is already that one" if url else "chat_url: the game has no chat")
    game.chat_url = url
    session.add(game)
    entry = AuditEntry(game_id=game_id, actor=actor.label, act="chat", details={"service": chat.service_name(url)})
    session.add(entry)
    session.flush()
    if url is not None:
        chat_notices.queue_notice(session, game, chat_notices.connected_notice(game, audit_id=entry.id or 0))
    session.commit()
    return game


# -- players' own time ------------------------------------------------------------------------------------
def take_vacation(session: Session, game_id: int, seat_no: int, links: LinkMaker, days: float) -> Game:
    """A player extends their own current deadline, within the game's vacation allowance (visible to all)."""
    game = _running(session, game_id)
    seat = _seat(session, game_id, seat_no)
    state = load_state(game)
    if seat_no not in rules.awaiting(state):
        raise Conflict("A vacation extends your own turn: take it while the game waits for you")
    seconds = int(days * 86400)
    if seconds <= 0:
        raise BadRequest("Take at least part of a day")
    allowance = settings_of(game).vacation_days * 86400
    left = allowance - seat.vacation_used_seconds
    if seconds > left:
        raise BadRequest(f"You have {left / 86400:.1f} days of vacation left in this game")
    seat.vacation_used_seconds += seconds
    session.add(seat)
    clock = Clock.of(game).vacation(utcnow(), seconds)
    set_clock(game, clock)
    assert clock.deadline is not None
    details = {"seat": seat_no, "days": days, "until": clock.deadline.isoformat()}
    return _act(session, game, Actor(f"seat {seat_no}"), "vacation", details, links)


def resign(session: Session, game_id: int, seat_no: int, links: LinkMaker) -> Game:
    """The seat's player leaves the game for good (ARCHITECTURE §9), from their own pages; announced to every player,
    told in the history, counted in their record (``service.domain.tally``).

    The seat stays in the game with what it holds (its coins count for its place in the final table); its
    steps are then passed at once by the deadline sweep, or played by the house bot, as the host chose
    (``GameSettings.resigned_seats``). A resignation cannot be taken back, nor the seat from the bot.
    Nothing hidden is told: the announcement names the seat and what becomes of it, never a coin.
    """
    game = _running(session, game_id, paused_ok=True)
    seat = _seat(session, game_id, seat_no)
    if seat.resigned_at is not None:
        raise Conflict("You resigned from this game already")
    if seat.removed:
        raise Conflict("The host removed this seat from the game already")
    then = settings_of(game).resigned_seats
    now = utcnow()
    seat.resigned_at = now
    awaited = seat_no in rules.awaiting(load_state(game))
    if then == "bot":
        seat.controller = SeatController.BOT
        if awaited and game.status == GameStatus.ACTIVE:
            wake_bot_after_commit(session, game_id)  # the bot plays the step under way
    elif awaited:
        # Running, the next sweep passes the seat; paused, no time is left for it when the game resumes.
        set_clock(game, Clock.of(game).run_out(now))
    session.add(seat)
    details = {"seat": seat_no, "then": then}
    return _act(session, game, Actor(f"seat {seat_no}"), "resign", details, links)


# -- the game's mail -------------------------------------------------------------------------------------
def resend_mail(session: Session, game_id: int, mail_id: int, actor: Actor) -> OutboxMail:
    """Give a failed mail of the game a new round of attempts: pending again, attempts counted from zero,
    due at once (the worker's next drain sends it). Its last error stays visible until the next outcome.

    Audited, but neither announced to the players nor a new version of the game: the game does not change.
    Allowed whatever the game's status (a final table that bounced is worth resending after the end).
    """
    get_game(session, game_id)
    mail = session.get(OutboxMail, mail_id)
    if mail is None or mail.game_id != game_id:
        raise NotFound("There is no such mail in this game")
    if mail.body_purged_at is not None:
        # service.domain.retention: what the mail said is no longer kept, so it cannot be written again.
        raise Conflict(
            "That mail's body was purged after the retention period (or its address erased): it cannot be resent"
        )
    # Conditional, so that two clicks (or two admins) put the mail back once, and a mail that is not
    # failed (pending, being sent, sent) is left alone.
    moved = session.exec(
        sa.update(OutboxMail)
        .where(
            col(OutboxMail.id) == mail_id,
            col(OutboxMail.status) == MailStatus.FAILED,
            col(OutboxMail.body_purged_at).is_(None),
        )
        .values(status=MailStatus.PENDING, attempts=0, next_attempt_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    if moved.rowcount != 1:
        session.rollback()
        raise Conflict("That mail has not failed (it is waiting to be sent, or was sent): nothing to resend")
    details = {"mail": mail_id, "to": mail.to_email, "template": mail.template}
    session.add(AuditEntry(game_id=game_id, actor=actor.label, act="resend", details=details))
    session.commit()
    session.refresh(mail)
    return mail


# -- internals --------------------------------------------------------------------------------------------
def _running(session: Session, game_id: int, paused_ok: bool = False, inviting_ok: bool = False) -> Game:
    game = get_game(session, game_id)
    allowed = (
        (GameStatus.ACTIVE,)
        + ((GameStatus.PAUSED,) if paused_ok else ())
        + ((GameStatus.INVITING,) if inviting_ok else ())
    )
    if game.status not in allowed:
        if game.status == GameStatus.PAUSED:
            raise Conflict("The game is paused: resume it first")
        if game.status == GameStatus.INVITING:
            raise Conflict("The game has not started yet: it waits for every player to accept the invitation")
        if game.status == GameStatus.UNCONFIRMED:
            raise Conflict(
                "The game waits for its host to confirm it by the link mailed to them: nothing is sent to its "
                "players until then, and it lapses if nobody confirms it"
            )
        raise Conflict(f"The game is {game.status}: nothing to manage")
    return game


def _seat(session: Session, game_id: int, seat_no: int) -> Seat:
    seat = session.exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == seat_no)).first()
    if seat is None:
        raise NotFound(f"There is no seat {seat_no} in this game")
    return seat


def _act(
    session: Session,
    game: Game,
    actor: Actor,
    act: str,
    details: dict[str, Any],
    links: LinkMaker,
    *,
    new_state: rules.GameState | None = None,
    also: list[tuple[Player, str]] | None = None,
) -> Game:
    """Audit, announce and commit one act as a new version of the game.

    ``also``: players who are no longer seated but must hear of the act, with the name their seat had.
    """
    session.add(AuditEntry(game_id=game.id or 0, actor=actor.label, act=act, details=details))
    version = game.version + 1
    seated = seats_of(session, game.id or 0)
    names = [seat.display_name for seat, _ in seated]
    for seat, player in concerned(act, game, seated, details):
        _announce(session, game, player, seat.display_name, seat.seat, act, actor, details, version, names)
    for player, name in also or []:
        _announce(session, game, player, name, None, act, actor, details, version, names)
    told = chat_notices.admin_notice(game, actor=actor.label, act=act, details=details, version=version, names=names)
    chat_notices.queue_notice(session, game, told)
    if game.state is None:
        return _commit_before_start(session, game, version)
    state_before = load_state(game)
    state = new_state or state_before
    kind = ActionKind.OPTIONS if new_state is not None else ActionKind.ADMIN
    entry = new_event(
        game_id=game.id or 0,
        seat=None,
        kind=kind,
        action={
            "act": act,
            **told_act(actor, act, details),
            **(_options_change(state_before, new_state) if new_state is not None else {}),
        },
        version=version,
        undo_point=True,
    )
    commit_step(session, game, entry, state, links, utcnow(), None, -1)
    return game


#: Acts whose mail goes to the seats the game waits for only: they move that seat's deadline.
FOR_THE_AWAITED = frozenset({"extend", "vacation"})
#: Acts about one seat (``details["seat"]``): only its player is mailed. A replaced player is mailed through
#: ``also`` (the seat is the newcomer's now, and the newcomer gets an invitation instead).
FOR_THE_SEAT = frozenset({"remove"})
FOR_NOBODY_SEATED = frozenset({"replace"})


def concerned(
    act: str, game: Game, seated: list[tuple[Seat, Player]], details: dict[str, Any]
) -> list[tuple[Seat, Player]]:
    """The seats an act's mail goes to: only those it concerns (issue 18). A deadline moved reaches the
    player it waits for; a removal, the removed player; a change of hands, the two players concerned (see
    :func:`replace_player`); a pause, a resume, new settings and a cancellation, every player, once. The
    game's chat and its history tell everyone of every act."""
    if act in FOR_NOBODY_SEATED:
        return []
    if act in FOR_THE_SEAT:
        return [(seat, player) for seat, player in seated if seat.seat == details.get("seat")]
    if act in FOR_THE_AWAITED and game.state is not None:
        awaited = rules.awaiting(load_state(game))
        return [(seat, player) for seat, player in seated if seat.seat in awaited]
    return seated


def told_act(actor: Actor, act: str, details: dict[str, Any]) -> dict[str, Any]:
    """What the log entry of an act keeps for the game's story (``service.domain.story.admin_words``): who
    acted as a role ("host", "site admin", "seat 2": never an address) and the act's details, all of them
    shown to the players already by the act's mail."""
    by = "site admin" if actor.label.startswith("site admin") else actor.label
    kept = {"changes": details} if act == "settings" else details
    return {"by": by, **{key: value for key, value in kept.items() if key != "remaining_seconds"}}


def _commit_before_start(session: Session, game: Game, version: int) -> Game:
    """An act on a game still inviting: there is no rules state nor event log yet, so the audit entry is its
    record; the version moves on all the same (under the same guard as a step)."""
    with session.no_autoflush:  # the act's changes to the game go out in the guarded UPDATE
        game.version = version
        if not update_if_unmoved(session, game, version - 1):
            session.rollback()
            raise Conflict("The game changed meanwhile: reload it and try again")
    session.commit()
    return game


def _options_change(before: rules.GameState, after: rules.GameState) -> dict[str, Any]:
    """What an ``options`` event records: the new options, and the ones they replace (for a replay from the
    seed, which starts with the options the game started with)."""
    return {"options": after.last["options"], "previous": {k: before.options[k] for k in after.last["options"]}}


def _announce(
    session: Session,
    game: Game,
    player: Player,
    name: str,
    seat: int | None,
    act: str,
    actor: Actor,
    details: dict[str, Any],
    version: int,
    names: list[str],
) -> None:
    change = admin_acts.ACTS[act].change
    assert change is not None, f"the act {act!r} is not mailed"
    announcement = AdminChange(
        game_id=game.id or 0,
        game_name=game.name,
        player_name=name,
        change=change,
        actor=actor.label,
        seat=seat,
        names=names,
        details=details,
        deadline_at=Clock.read(game).deadline,
        pause_reason=game.pause_reason,
        version=version,
        player_id=player.id,
    )
    queue_mail(session, player, announcement)
