"""A game's admin page (``/admin/games/<id>``), for its host and for site admins, and the acts it offers.

Every act is a plain HTML form that POSTs and redirects back with a message (no JavaScript needed), and
goes through the same domain operation as the JSON API and the ``smallworld admin`` commands
(``service.domain.admin``). A refusal shows the operation's own words. Forms are read into the API's request
models (``service.domain.schemas``), so both refuse the same things.

The acts that concern the current turn (extend, pass now) carry the step the page showed: if the game moved
on to another player's step meanwhile, the act is refused rather than applied to a turn the admin never saw.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

import sqlalchemy as sa
from flask import Blueprint, flash, redirect, render_template, request, session, url_for
from pydantic import ValidationError
from sqlmodel import Session, col, select
from werkzeug.wrappers import Response

import rules
from emails import admin_acts, times
from service.domain import admin, bot_seats, chat_notices, table_talk, views, watching
from service.domain.admin import Actor
from service.domain.clock import Clock
from service.domain.errors import BadRequest, Conflict, DomainError, TooMany
from service.domain.games import seats_of, settings_of
from service.domain.links import LinkMaker, current_links
from service.domain.models import Game, GameStatus, MailStatus, OutboxMail, Player, SeatController, utcnow
from service.domain.schemas import HOUR, ChangeSettings, ReplacePlayer
from service.infra.chat import mask, service_name
from service.infra.db import get_session
from service.web import hosting
from service.web.access import game_from_admin_token
from service.web.admin_pages.access import Manager, manager_for, remember_host
from service.web.admin_pages.audit_log import audit_lines
from service.web.pages.access import refused_as
from service.web.pages.game_summary import deadline
from service.web.pages.lobby import REMINDER_CHOICES

bp = Blueprint("admin_game", __name__)

#: The session key of the time zone the admin pages show times in (else the host player's zone).
ZONE = "admin_zone"
#: Acts confirmed on the page first (a panel with the final button).
CONFIRMED = ("pass", "remove", "cancel")
#: Table-talk messages listed on the page (the latest), each with its "Hide" button.
TALK_ROWS = 50
#: Mails listed on the page: every failed one, and the latest others up to this many.
MAIL_ROWS = 60
UNITS = {"minutes": 60, "hours": HOUR, "days": 24 * HOUR}
STATUS_WORDS = {
    GameStatus.UNCONFIRMED: "waiting for its host to confirm it (nothing is sent to the players until then)",
    GameStatus.INVITING: "waiting for the players to accept their invitations",
    GameStatus.ACTIVE: "running",
    GameStatus.PAUSED: "paused",
    GameStatus.ENDING: "over: the final table is being tallied and mailed",
    GameStatus.FINISHED: "over",
    GameStatus.CANCELLED: "cancelled",
}


# -- opening the host's link ------------------------------------------------------------------------------
@bp.get("/admin/<token>")
def open_admin_link(token: str) -> Any:
    """The host's signed admin link: remember the right in this browser, then show the game's admin page."""
    with refused_as("This admin link does not work", 403):
        game = game_from_admin_token(get_session(), current_links(), token)
    remember_host(game)
    return redirect(url_for(".page", game_id=game.id))


# -- the page ---------------------------------------------------------------------------------------------
@bp.get("/admin/games/<int:game_id>")
def page(game_id: int) -> Any:
    manager = manager_for(game_id)
    return render_template("admin/game.html", **page_context(manager))


@dataclass(frozen=True)
class SeatRow:
    seat: int
    name: str
    email: str
    time_zone: str
    accepted: bool
    removed: bool
    #: The house bot plays the seat (``service.domain.bot_seats``).
    bot: bool
    awaited: bool
    auto_passes: int
    vacation_used: str
    #: Mail to the seat's address bounces: since when and why (``service.domain.inbound``), or None.
    bouncing: str | None = None


def page_context(manager: Manager) -> dict[str, Any]:
    db = get_session()
    game = manager.game
    view = views.game_view(db, game, None)
    zone = admin_zone(game)
    settings = settings_of(game)
    clock = Clock.read(game)
    state = rules.read_state(game.state) if game.state else None
    # Whom the game waits for, paused or not (the game view names nobody while the clock is stopped).
    awaited = (
        rules.awaiting(state) if state is not None and game.status in (GameStatus.ACTIVE, GameStatus.PAUSED) else set()
    )
    held = seats_of(db, game.id or 0)
    names = [s.display_name for s, _ in held]
    seats = [
        SeatRow(
            seat=s.seat,
            name=s.display_name,
            email=p.email,
            time_zone=p.time_zone,
            accepted=s.accepted_at is not None,
            removed=s.removed,
            bot=s.controller == SeatController.BOT,
            awaited=s.seat in awaited,
            auto_passes=state.players[s.seat].auto_passes if state and s.seat < len(state.players) else 0,
            vacation_used=times.duration(s.vacation_used_seconds) if s.vacation_used_seconds else "none",
            bouncing=f"since {times.local_time(p.bouncing_since, zone.key)}: {p.bounce_reason or 'undelivered'}"
            if p.bouncing_since is not None
            else None,
        )
        for s, p in held
    ]
    confirm = request.args.get("confirm") if request.args.get("confirm") in CONFIRMED else None
    confirm_seat = next((s for s in seats if str(s.seat) == request.args.get("seat", "")), None)
    if confirm == "remove" and (confirm_seat is None or confirm_seat.removed):
        confirm = None
    reminders = sorted(set(settings.reminders_before_seconds) | {h * HOUR for h in REMINDER_CHOICES}, reverse=True)
    return {
        "manager": manager,
        "game": view,
        "status_words": STATUS_WORDS.get(game.status, game.status),
        "running": game.status in (GameStatus.ACTIVE, GameStatus.PAUSED),
        "state": state,
        "step": game.step_key or "",
        "seats": seats,
        "awaited_names": [names[s] for s in sorted(awaited) if s < len(names)],
        "deadline": deadline(clock, utcnow(), zone),
        "deadline_input": f"{clock.deadline.astimezone(zone):%Y-%m-%dT%H:%M}" if clock.deadline else "",
        "paused_left": clock_words(clock.paused_left) if game.status == GameStatus.PAUSED else None,
        "zone": zone.key,
        "zones": sorted(known_zones()),
        "settings": settings,
        "turn_hours": _hours(settings.turn_length_seconds),
        "defender_hours": _hours(settings.defender_turn_length_seconds),
        "reminder_choices": [(s, times.duration(s)) for s in reminders],
        "reminder_warning": reminder_warning(settings.reminders_before_seconds, settings.turn_length_seconds),
        "units": list(UNITS),
        "confirm": confirm,
        "confirm_seat": confirm_seat,
        "audit": audit_lines(view.audit, zone, names, for_admins=True),
        "mail": mail_rows(game, zone),
        "mail_counts": mail_counts(game),
        "chat": {"url": mask(game.chat_url), "service": service_name(game.chat_url)},
        "notices": notice_rows(game, zone),
        "talk": [
            {
                "id": m.id,
                "author": m.author,
                "at": f"{m.at.astimezone(zone):%a %-d %b %H:%M}",
                "text": None if m.hidden else m.excerpt(300),
            }
            for m in table_talk.messages_of(db, game.id or 0, limit=TALK_ROWS)
        ],
        "watching": {
            "public": game.public,
            "url": watching.watch_url(game, current_links()),
            "public_url": current_links().url(url_for("watch.public", game_id=game.id)),
            "may": game.status != GameStatus.UNCONFIRMED,
        },
    }


def admin_zone(game: Game) -> ZoneInfo:
    """The zone this browser chose for the admin pages, else the host player's, else UTC."""
    chosen = session.get(ZONE)
    if isinstance(chosen, str) and chosen:
        return times.zone(chosen)
    host = get_session().exec(select(Player).where(Player.email == game.host_email)).first()
    return times.zone(host.time_zone if host else "UTC")


def mail_rows(game: Game, zone: ZoneInfo) -> list[dict[str, Any]]:
    """The game's mail, failed first, then the newest; addresses and outcomes only (never the links inside)."""
    rows = (
        get_session()
        .exec(
            select(OutboxMail)
            .where(OutboxMail.game_id == game.id)
            .order_by(sa.case((col(OutboxMail.status) == MailStatus.FAILED, 0), else_=1), col(OutboxMail.id).desc())
            .limit(MAIL_ROWS)
        )
        .all()
    )
    return [
        {
            "id": m.id,
            "to": m.to_email,
            "what": admin_acts.MAIL_NAMES.get(m.template, m.template),
            "status": m.status,
            "attempts": m.attempts,
            "last_error": m.last_error,
            "queued": f"{m.created_at.astimezone(zone):%a %-d %b %H:%M}",
            "sent": f"{m.sent_at.astimezone(zone):%a %-d %b %H:%M}" if m.sent_at else None,
        }
        for m in rows
    ]


def notice_rows(game: Game, zone: ZoneInfo) -> list[dict[str, Any]]:
    """The game's chat notices, failed first, then the newest."""
    return [
        {
            "title": n.title,
            "status": n.status,
            "attempts": n.attempts,
            "last_error": n.last_error,
            "queued": f"{n.created_at.astimezone(zone):%a %-d %b %H:%M}",
            "sent": f"{n.sent_at.astimezone(zone):%a %-d %b %H:%M}" if n.sent_at else None,
        }
        for n in chat_notices.notices_of(get_session(), game.id or 0)
    ]


def mail_counts(game: Game) -> dict[str, int]:
    rows = (
        get_session()
        .execute(
            select(OutboxMail.status, sa.func.count()).where(OutboxMail.game_id == game.id).group_by(OutboxMail.status)
        )
        .all()
    )
    return {status: count for status, count in rows}


def clock_words(seconds: int | None) -> str:
    """The time kept on a paused game's clock ("5 hours 7 minutes", or "none")."""
    return times.time_left(timedelta(seconds=seconds)) if seconds else "none"


@cache
def known_zones() -> frozenset[str]:
    return frozenset(available_timezones() | {"UTC"})


def remember_zone() -> None:
    """Keep the time zone the form names for every admin page in this browser (:func:`admin_zone`), or say
    that this server does not know it."""
    name = request.form.get("zone", "").strip()
    if name in known_zones():
        session[ZONE] = name
        flash(f"Times are shown in {name}.", "done")
    else:
        flash(f"{name or 'That'} is not a time zone this server knows: try a name like Europe/Paris.", "refusal")


def _hours(seconds: int) -> str:
    return f"{seconds / HOUR:g}"


# -- the acts ---------------------------------------------------------------------------------------------
def _back(game_id: int) -> Response:
    # To the top of the page, where the outcome is shown (a link to a section would scroll it out of view).
    return redirect(url_for(".page", game_id=game_id), code=303)


def reminder_warning(reminders_before: list[int], turn_length: int) -> str | None:
    """Why some reminders will never be sent: they would come before the turn starts (``clock.next_reminder_at``
    keeps only the reminders still ahead), so the host is told rather than left to wonder (issue 35).

    >>> reminder_warning([48 * 3600, 3600], 24 * 3600)
    'The reminder 48 hours before the deadline is longer than a turn (24 hours): it is never sent.'
    >>> reminder_warning([3600], 24 * 3600) is None
    True
    >>> reminder_warning([48 * 3600, 24 * 3600, 3600], 12 * 3600)
    'The reminders 48 hours and 24 hours before the deadline are longer than a turn (12 hours): they are never sent.'

    """
    longer = sorted((s for s in reminders_before if s >= turn_length), reverse=True)
    if not longer:
        return None
    which = " and ".join(times.duration(s) for s in longer)
    many = len(longer) > 1
    return (
        f"The reminder{'s' if many else ''} {which} before the deadline {'are' if many else 'is'} longer than a "
        f"turn ({times.duration(turn_length)}): {'they are' if many else 'it is'} never sent."
    )


def _run(game_id: int, done: str, act: Any) -> Response:
    """Run one act; flash its outcome (the domain's refusal as it is) and go back to the page."""
    try:
        act()
    except TooMany as error:
        # A limit on mail to strangers (ARCHITECTURE §9): 429 with Retry-After, the page showing why.
        flash(error.message, "refusal")
        answer = Response(page(game_id), status=429)
        if isinstance(error.extra.get("retry_after"), int):
            answer.headers["Retry-After"] = str(error.extra["retry_after"])
        return answer
    except DomainError as error:
        flash(error.message, "refusal")
    else:
        flash(done, "done")
    return _back(game_id)


def _run_with_reason(game_id: int, done: str, act: Callable[[Session, int, Actor, LinkMaker, str], object]) -> Response:
    """Run an act the players are told with the reason the form gives (pause, cancel), as :func:`_run`."""
    manager = manager_for(game_id)
    reason = request.form.get("reason", "")
    return _run(game_id, done, lambda: act(get_session(), game_id, manager.actor, current_links(), reason))


def _same_step(manager: Manager) -> None:
    shown = request.form.get("step", "")
    if shown != (manager.game.step_key or ""):
        raise Conflict(
            "The game moved on since this page was shown: here it is as it stands now. Check, then try again"
        )


@bp.post("/admin/games/<int:game_id>/talk/<int:message_id>/hide")
def hide_message(game_id: int, message_id: int) -> Response:
    """Hide a message of the game's table talk for everyone (``service.domain.table_talk.hide_message``)."""
    manager = manager_for(game_id)
    return _run(
        game_id,
        "The message is hidden for everyone: the pages show it as hidden by the host.",
        lambda: table_talk.hide_message(get_session(), manager.game, message_id, manager.actor.label),
    )


@bp.post("/admin/games/<int:game_id>/extend")
def extend(game_id: int) -> Response:
    manager = manager_for(game_id)
    form = request.form

    def act() -> None:
        _same_step(manager)
        if form.get("mode") == "to":
            to = _local_moment(form.get("to", ""), admin_zone(manager.game))
            admin.extend_deadline(get_session(), game_id, manager.actor, current_links(), to=to)
        else:
            amount = _number(form.get("amount", ""), "The extension")
            unit = UNITS.get(form.get("unit", ""), HOUR)
            admin.extend_deadline(
                get_session(), game_id, manager.actor, current_links(), by=timedelta(seconds=round(amount * unit))
            )

    return _run(game_id, "The deadline was moved; the player the game waits for was told.", act)


@bp.post("/admin/games/<int:game_id>/pause")
def pause(game_id: int) -> Response:
    return _run_with_reason(game_id, "The game is paused; the players were told why.", admin.pause)


@bp.post("/admin/games/<int:game_id>/resume")
def resume(game_id: int) -> Response:
    manager = manager_for(game_id)
    return _run(
        game_id,
        "The game runs again with the time that was left; the players were told.",
        lambda: admin.resume(get_session(), game_id, manager.actor, current_links()),
    )


@bp.post("/admin/games/<int:game_id>/pass")
def pass_now(game_id: int) -> Response:
    manager = manager_for(game_id)

    def act() -> None:
        _same_step(manager)
        admin.pass_now(get_session(), game_id, manager.actor, current_links())

    return _run(game_id, "The turn was passed; the next player was told.", act)


@bp.post("/admin/games/<int:game_id>/settings")
def change_settings(game_id: int) -> Response:
    manager = manager_for(game_id)
    form = request.form

    def act() -> None:
        current = settings_of(manager.game)
        asked: dict[str, Any] = {
            "turn_length_seconds": round(_number(form.get("turn_hours", ""), "Time for a turn") * HOUR),
            "defender_turn_length_seconds": round(
                _number(form.get("defender_hours", ""), "Time to redeploy after an attack") * HOUR
            ),
            "reminders_before_seconds": sorted(
                {int(x) for x in form.getlist("reminders") if x.isdigit()}, reverse=True
            ),
            "redeploy": form.get("redeploy", current.redeploy),
            "vacation_days": _whole(form.get("vacation_days", ""), "Vacation allowance"),
        }
        changes = {key: value for key, value in asked.items() if value != getattr(current, key)}
        if not changes:
            raise BadRequest("Nothing was changed: the settings are as they were.")
        try:
            ChangeSettings.model_validate(changes)
        except ValidationError as error:
            raise BadRequest(_first_error(error, SETTING_LABELS)) from None
        admin.change_settings(get_session(), game_id, manager.actor, current_links(), **changes)

    return _run(game_id, "The settings were changed for the turns to come; the players were told.", act)


SETTING_LABELS = {
    "turn_length_seconds": "Time for a turn",
    "defender_turn_length_seconds": "Time to redeploy after an attack",
    "reminders_before_seconds": "Reminders",
    "redeploy": "Redeployment after an attack",
    "vacation_days": "Vacation allowance",
}


@bp.post("/admin/games/<int:game_id>/replace")
def replace(game_id: int) -> Response:
    manager = manager_for(game_id)
    form = request.form

    def act() -> None:
        try:
            seat = int(form.get("seat", ""))
        except ValueError:
            raise BadRequest("Choose the seat to give to someone else.") from None
        try:
            asked = ReplacePlayer.model_validate(
                {"seat": seat, "email": form.get("email", "").strip(), "name": form.get("name", "").strip()}
            )
        except ValidationError as error:
            raise BadRequest(_first_error(error, {"seat": "Seat", "email": "Email", "name": "Name"})) from None
        hosting.replace_player(game_id, manager.actor, asked.seat, str(asked.email), asked.name)

    return _run(
        game_id,
        "The seat has a new player, who was invited; the old links of the seat no longer work.",
        act,
    )


@bp.post("/admin/games/<int:game_id>/bot")
def give_to_bot(game_id: int) -> Response:
    """The house bot plays the seat until its player takes it back from their link (ARCHITECTURE §10)."""
    manager = manager_for(game_id)

    def act() -> None:
        try:
            seat = int(request.form.get("seat", ""))
        except ValueError:
            raise BadRequest("Choose the seat to give to the house bot.") from None
        bot_seats.host_gives_seat_to_bot(get_session(), game_id, seat, manager.actor.label, current_links())

    return _run(game_id, "The house bot plays that seat now; its player may take it back from their link.", act)


@bp.post("/admin/games/<int:game_id>/remove")
def remove(game_id: int) -> Response:
    manager = manager_for(game_id)

    def act() -> None:
        try:
            seat = int(request.form.get("seat", ""))
        except ValueError:
            raise BadRequest("Choose the player to remove.") from None
        admin.remove_player(get_session(), game_id, manager.actor, current_links(), seat)

    return _run(game_id, "The player was removed: their turns are passed automatically.", act)


@bp.post("/admin/games/<int:game_id>/cancel")
def cancel(game_id: int) -> Response:
    return _run_with_reason(game_id, "The game is cancelled; the players were told.", admin.cancel)


@bp.post("/admin/games/<int:game_id>/chat")
def set_chat(game_id: int) -> Response:
    manager = manager_for(game_id)
    removing = request.form.get("remove") == "1"
    url = None if removing else request.form.get("chat_url", "").strip()
    if not removing and not url:
        flash("Chat address: give one, or use “Disconnect the chat”.", "refusal")
        return _back(game_id)
    return _run(
        game_id,
        "The chat is disconnected." if removing else "The chat is connected: a first notice is on its way there.",
        lambda: admin.set_chat_url(get_session(), game_id, manager.actor, url),
    )


@bp.post("/admin/games/<int:game_id>/watching")
def set_watching(game_id: int) -> Response:
    """Make the game public (anyone may watch it, and it is listed) or private again."""
    manager = manager_for(game_id)
    public = request.form.get("public") == "1"
    done = (
        "The game is public: anyone may watch it, and it is on the list of public games."
        if public
        else "The game is private: only those with its watch link may watch it."
    )
    return _run(game_id, done, lambda: watching.set_public(get_session(), game_id, manager.actor, public))


@bp.post("/admin/games/<int:game_id>/watch-link")
def new_watch_link(game_id: int) -> Response:
    """A new watch link: the ones shared before stop working."""
    manager = manager_for(game_id)
    return _run(
        game_id,
        "A new watch link is made: the ones shared before no longer work.",
        lambda: watching.new_watch_link(get_session(), game_id, manager.actor),
    )


@bp.post("/admin/games/<int:game_id>/mail/<int:mail_id>/resend")
def resend(game_id: int, mail_id: int) -> Response:
    manager = manager_for(game_id)
    return _run(
        game_id,
        "The mail will be sent again within a minute.",
        lambda: admin.resend_mail(get_session(), game_id, mail_id, manager.actor),
    )


@bp.post("/admin/games/<int:game_id>/zone")
def choose_zone(game_id: int) -> Response:
    manager_for(game_id)
    remember_zone()
    return _back(game_id)


# -- reading the forms ------------------------------------------------------------------------------------
def _number(value: str, label: str) -> float:
    try:
        number = float(value.strip().replace(",", "."))
    except ValueError:
        raise BadRequest(f"{label}: {value or 'nothing'!r} is not a number.") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise BadRequest(f"{label}: give a number.")
    return number


def _whole(value: str, label: str) -> int:
    number = _number(value, label)
    if number != int(number):
        raise BadRequest(f"{label}: give a whole number.")
    return int(number)


def _local_moment(value: str, zone: ZoneInfo) -> datetime:
    """A ``datetime-local`` input's value, read in the admin's time zone."""
    try:
        naive = datetime.fromisoformat(value.strip())
    except ValueError:
        raise BadRequest("Give the new deadline's date and time, e.g. 2026-12-01 18:00.") from None
    if naive.tzinfo is not None:
        return naive
    return naive.replace(tzinfo=zone)


def _first_error(error: ValidationError, labels: dict[str, str]) -> str:
    item = error.errors()[0]
    where = [str(x) for x in item.get("loc", ())]
    label = labels.get(where[0], where[0]) if where else ""
    message = str(item.get("msg", "")).removeprefix("Value error, ")
    return f"{label}: {message}" if label else message
