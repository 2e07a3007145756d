"""The lobby: the front page, the host's form to create a game, and the host's confirmation of it
(``service.domain.lobby``; ARCHITECTURE §9).

The form is read into the same ``CreateGame`` request the JSON API validates, so both refuse the same
things with the same words, and goes through the same limits (``service.web.hosting``). A new game mails
only its host, a link to confirm it; that link's page shows the game and two buttons (a mail scanner opening
the link confirms nothing). On confirming, the host sees the admin link (also mailed to them) and the
players get their invitations.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any
from zoneinfo import available_timezones

from flask import Blueprint, current_app, redirect, render_template, request, session, url_for
from pydantic import ValidationError
from werkzeug.datastructures import MultiDict

from service.domain.errors import DomainError
from service.domain.schemas import GAME_NAME_LENGTH, HOUR, LONGEST_TURN, NAME_LENGTH, CreateGame, GameSettings
from service.web import hosting
from service.web.form_errors import messages, retry_after

bp = Blueprint("lobby", __name__)

MAX_PLAYERS = 5
#: Reminder offsets the form offers, in hours before the deadline.
REMINDER_CHOICES = (48, 24, 12, 6, 2, 1)


@bp.get("/")
def home() -> Any:
    mine = session.get("seat")
    return render_template("lobby/home.html", your_game=mine.get("game") if isinstance(mine, dict) else None)


@bp.route("/games/new", methods=["GET", "POST"])
def new_game() -> Any:
    if request.method == "GET":
        return render_template("lobby/new.html", form=_defaults(), errors=[], **_choices())
    form = request.form
    values = form.to_dict() | {"reminders": form.getlist("reminders")}
    try:
        body = read_form(form)
        created = CreateGame.model_validate(body)
    except ValueError as error:  # pydantic's ValidationError is a ValueError
        errors, invalid = _messages(error), invalid_fields(error, form)
        page = render_template("lobby/new.html", form=values, errors=errors, invalid=invalid, **_choices())
        return page, 400
    try:
        game = hosting.new_game(created)
    except DomainError as error:  # an address that asked never to be invited, a limit reached
        response = render_template("lobby/new.html", form=values, errors=[error.message], **_choices())
        return response, error.status, retry_after(error)
    session["created_game"] = {
        "id": game.id,
        "name": game.name,
        "players": [{"name": p.name, "email": p.address} for p in created.players],
        "host_email": created.host,
    }
    return redirect(url_for(".created"), code=303)


@bp.get("/games/created")
def created() -> Any:
    """After the form: the game waits for its host's confirmation, by the link mailed to them."""
    info = session.get("created_game")
    if not isinstance(info, dict):
        return redirect(url_for(".new_game"))
    hours = current_app.config["UNCONFIRMED_GAME_HOURS"]
    return render_template("lobby/created.html", created=info, confirm_hours=hours)


def read_form(form: MultiDict[str, str]) -> dict[str, Any]:
    """The ``CreateGame`` request body the form describes (rows left blank are not players)."""
    players = []
    for i in range(MAX_PLAYERS):
        name, email = form.get(f"name-{i}", ""), form.get(f"email-{i}", "").strip()
        if form.get(f"bot-{i}"):  # a seat of the house bot (play against bots): a name, no address
            players.append({"name": name, "bot": True} | ({"email": email} if email else {}))
        elif name.strip() or email:
            players.append({"name": name, "email": email})
    settings: dict[str, Any] = {
        "turn_length_seconds": _seconds(form.get("turn_hours"), "Turn length"),
        "defender_turn_length_seconds": _seconds(form.get("defender_hours"), "Time to redeploy after an attack"),
        "reminders_before_seconds": [
            int(h) * HOUR for h in form.getlist("reminders") if h.isascii() and h.isdigit() and len(h) < 6
        ],
        "redeploy": form.get("redeploy", "auto"),
        "resigned_seats": form.get("resigned_seats", "auto_pass"),
        "start_when_all_accepted": form.get("start", "accepted") == "accepted",
    }
    if form.get("auto_pass_alert_after", "").strip():
        settings["auto_pass_alert_after"] = _number(form["auto_pass_alert_after"], "Auto-passes before you hear")
    if form.get("bot_after_missed_turns", "").strip():
        settings["bot_after_missed_turns"] = _number(form["bot_after_missed_turns"], "Missed turns before the bot")
    body: dict[str, Any] = {"name": form.get("name", ""), "players": players, "settings": settings}
    if form.get("host_email", "").strip():
        body["host_email"] = form["host_email"].strip()
    if form.get("host_zone", "").strip():
        body["host_time_zone"] = form["host_zone"].strip()
    if form.get("chat_url", "").strip():
        body["chat_url"] = form["chat_url"].strip()
    return body


def _seconds(value: str | None, label: str) -> int:
    hours = _number(value or "", label, float)
    if not math.isfinite(hours) or not 0 < hours <= LONGEST_TURN / HOUR:
        raise ValueError(f"{label}: give a number of hours between 0 and {LONGEST_TURN // HOUR}")
    return max(1, round(hours * HOUR))


def _number(value: str, label: str, kind: type = int) -> Any:
    try:
        return kind(value.strip().replace(",", "."))
    except ValueError:
        raise ValueError(f"{label}: {value[:40]!r} is not a number") from None


def _messages(error: ValueError) -> list[str]:
    """Readable lines, naming the form's fields rather than the request's."""
    return messages(error, _field_name)


#: The form's field for each field of the request (``CreateGame``), and for the form's own checks (by label).
FORM_FIELDS = {
    "name": "name",
    "host_email": "host_email",
    "host_time_zone": "host_zone",
    "turn_length_seconds": "turn_hours",
    "defender_turn_length_seconds": "defender_hours",
    "auto_pass_alert_after": "auto_pass_alert_after",
    "chat_url": "chat_url",
    "bot_after_missed_turns": "bot_after_missed_turns",
}
LABELLED_FIELDS = {
    "Missed turns before the bot": "bot_after_missed_turns",
    "Turn length": "turn_hours",
    "Time to redeploy after an attack": "defender_hours",
    "Auto-passes before you hear": "auto_pass_alert_after",
}


def invalid_fields(error: ValueError, form: MultiDict[str, str]) -> dict[str, str]:
    """The ids of the form's fields that are wrong, each with the id of the line saying why (the page marks
    them ``aria-invalid`` and ties each to its line with ``aria-describedby``); in the order of the lines."""
    found: dict[str, str] = {}
    if not isinstance(error, ValidationError):
        label = str(error).split(":")[0]
        if label in LABELLED_FIELDS:
            found[LABELLED_FIELDS[label]] = "form-error-0"
        return found
    # The rows a player was typed in: the request's players are those rows, in order.
    rows = [
        i
        for i in range(MAX_PLAYERS)
        if form.get(f"bot-{i}") or form.get(f"name-{i}", "").strip() or form.get(f"email-{i}", "").strip()
    ]
    for line, item in enumerate(error.errors()):
        where = [str(x) for x in item.get("loc", ())]
        field = None
        if where[:1] == ["players"] and len(where) >= 3 and where[1].isdigit() and int(where[1]) < len(rows):
            field = f"{'email' if where[2] == 'email' else 'name'}-{rows[int(where[1])]}"
        elif where[:1] == ["players"]:
            field = "name-0"
        else:
            field = next((FORM_FIELDS[w] for w in reversed(where) if w in FORM_FIELDS), None)
        if field and field not in found:
            found[field] = f"form-error-{line}"
    return found


def _field_name(where: list[str]) -> str:
    if where[:1] == ["players"] and len(where) >= 2:
        field = {"name": "name", "email": "email"}.get(where[2] if len(where) > 2 else "")
        return f"Player {int(where[1]) + 1}" + (f" {field}" if field else "")
    names = {
        "name": "Game name",
        "players": "Players",
        "host_email": "Host email",
        "host_time_zone": "Your time zone",
        "turn_length_seconds": "Turn length",
        "defender_turn_length_seconds": "Time to redeploy after an attack",
        "reminders_before_seconds": "Reminders",
        "auto_pass_alert_after": "Auto-passes before you hear",
        "bot_after_missed_turns": "Missed turns before the house bot",
        "chat_url": "Chat address",
        "resigned_seats": "A player who resigns",
    }
    return next((names[w] for w in reversed(where) if w in names), where[-1].replace("_", " ").capitalize())


def _defaults() -> dict[str, Any]:
    settings = GameSettings.model_validate({})
    return {
        "turn_hours": settings.turn_length_seconds // HOUR,
        "defender_hours": settings.defender_turn_length_seconds // HOUR,
        "reminders": [str(s // HOUR) for s in settings.reminders_before_seconds],
        "redeploy": settings.redeploy,
        "resigned_seats": settings.resigned_seats,
        "start": "accepted" if settings.start_when_all_accepted else "now",
        "auto_pass_alert_after": settings.auto_pass_alert_after,
        "bot_after_missed_turns": settings.bot_after_missed_turns,
    }


@cache
def _zones() -> list[str]:
    return sorted(available_timezones() | {"UTC"})


def _choices() -> dict[str, Any]:
    return {
        "max_players": MAX_PLAYERS,
        "reminder_choices": REMINDER_CHOICES,
        "zones": _zones(),
        "name_length": NAME_LENGTH,
        "game_name_length": GAME_NAME_LENGTH,
    }
