"""The lobby: the front page and the host's form to create a game (``service.domain.lobby.create_game``).

The form is read into the same ``CreateGame`` request the JSON API validates, so both refuse the same
things with the same words. After creation the host sees the admin link (also mailed to them); the
players get their invitations by mail.
"""

from __future__ import annotations

from functools import cache
from typing import Any
from zoneinfo import available_timezones

from flask import Blueprint, redirect, render_template, request, session, url_for
from pydantic import ValidationError
from werkzeug.datastructures import MultiDict

from service.domain import lobby
from service.domain.links import current_links
from service.domain.models import GameStatus
from service.domain.schemas import HOUR, CreateGame, GameSettings
from service.infra.db import get_session

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
    try:
        body = read_form(form)
        created = CreateGame.model_validate(body)
    except ValueError as error:  # pydantic's ValidationError is a ValueError
        values = form.to_dict() | {"reminders": form.getlist("reminders")}
        return render_template("lobby/new.html", form=values, errors=_messages(error), **_choices()), 400
    game, admin_url = lobby.create_game(get_session(), created, current_links())
    session["created_game"] = {
        "id": game.id,
        "name": game.name,
        "admin_url": admin_url,
        "players": [{"name": p.name, "email": str(p.email)} for p in created.players],
        "host_email": str(created.host_email or created.players[0].email),
        "started": game.status == GameStatus.ACTIVE,
    }
    return redirect(url_for(".created"), code=303)


@bp.get("/games/created")
def created() -> Any:
    info = session.get("created_game")
    if not isinstance(info, dict):
        return redirect(url_for(".new_game"))
    return render_template("lobby/created.html", created=info)


def read_form(form: MultiDict[str, str]) -> dict[str, Any]:
    """The ``CreateGame`` request body the form describes (rows left blank are not players)."""
    players = []
    for i in range(MAX_PLAYERS):
        name, email = form.get(f"name-{i}", "").strip(), form.get(f"email-{i}", "").strip()
        if name or email:
            players.append({"name": name, "email": email, "time_zone": form.get(f"zone-{i}", "").strip() or "UTC"})
    settings: dict[str, Any] = {
        "turn_length_seconds": _seconds(form.get("turn_hours"), "Turn length"),
        "defender_turn_length_seconds": _seconds(form.get("defender_hours"), "Time to redeploy after an attack"),
        "reminders_before_seconds": [int(h) * HOUR for h in form.getlist("reminders") if h.isdigit()],
        "redeploy": form.get("redeploy", "auto"),
        "start_when_all_accepted": form.get("start", "accepted") == "accepted",
    }
    if form.get("auto_pass_alert_after", "").strip():
        settings["auto_pass_alert_after"] = _number(form["auto_pass_alert_after"], "Auto-passes before you hear")
    body: dict[str, Any] = {"name": form.get("name", "").strip(), "players": players, "settings": settings}
    if form.get("host_email", "").strip():
        body["host_email"] = form["host_email"].strip()
    if form.get("chat_url", "").strip():
        body["chat_url"] = form["chat_url"].strip()
    return body


def _seconds(value: str | None, label: str) -> int:
    hours = _number(value or "", label, float)
    return round(hours * HOUR)


def _number(value: str, label: str, kind: type = int) -> Any:
    try:
        return kind(value.strip().replace(",", "."))
    except ValueError:
        raise ValueError(f"{label}: {value!r} is not a number") from None


def _messages(error: ValueError) -> list[str]:
    """Readable lines, naming the form's fields rather than the request's."""
    if not isinstance(error, ValidationError):
        return [str(error)]
    out = []
    for item in error.errors():
        where = [str(x) for x in item.get("loc", ())]
        message = str(item.get("msg", "")).removeprefix("Value error, ")
        out.append(f"{_field_name(where)}: {message}" if where else message)
    return out


def _field_name(where: list[str]) -> str:
    if where[:1] == ["players"] and len(where) >= 2:
        field = {"name": "name", "email": "email", "time_zone": "time zone"}.get(where[2] if len(where) > 2 else "")
        return f"Player {int(where[1]) + 1}" + (f" {field}" if field else "")
    names = {
        "name": "Game name",
        "players": "Players",
        "host_email": "Host email",
        "turn_length_seconds": "Turn length",
        "defender_turn_length_seconds": "Time to redeploy after an attack",
        "reminders_before_seconds": "Reminders",
        "auto_pass_alert_after": "Auto-passes before you hear",
        "chat_url": "Chat address",
    }
    return names.get(where[-1], where[-1].replace("_", " ").capitalize())


def _defaults() -> dict[str, Any]:
    settings = GameSettings.model_validate({})
    return {
        "turn_hours": settings.turn_length_seconds // HOUR,
        "defender_hours": settings.defender_turn_length_seconds // HOUR,
        "reminders": [str(s // HOUR) for s in settings.reminders_before_seconds],
        "redeploy": settings.redeploy,
        "start": "accepted" if settings.start_when_all_accepted else "now",
        "auto_pass_alert_after": settings.auto_pass_alert_after,
    }


@cache
def _zones() -> list[str]:
    return sorted(available_timezones() | {"UTC"})


def _choices() -> dict[str, Any]:
    return {"max_players": MAX_PLAYERS, "reminder_choices": REMINDER_CHOICES, "zones": _zones()}
