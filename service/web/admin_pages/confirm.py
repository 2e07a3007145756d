"""A host's confirmation of a new game (ARCHITECTURE §9): the link mailed to the host when the game was created.

``GET`` shows the game as its invitations will be sent (names, addresses, turn length) with two buttons,
confirm and discard, and the host's own time zone; it changes nothing, since mail scanners open the links in
mails. ``POST`` confirms (the invitations go, the host gets the admin link and this browser the admin right)
or discards the game (nobody is told: its players never heard of it).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, redirect, render_template, request, session, url_for
from sqlmodel import select

from emails import times
from service.domain import lobby
from service.domain.errors import DomainError
from service.domain.games import get_game, seats_of, settings_of
from service.domain.links import current_links
from service.domain.models import Game, GameStatus, Player
from service.domain.schemas import NAME_LENGTH, ConfirmGame
from service.domain.text import checked, printable_text, zones
from service.infra.db import get_session
from service.web import hosting
from service.web.admin_pages.access import remember_host
from service.web.form_errors import messages, retry_after
from service.web.pages.access import refused_as

bp = Blueprint("confirm_game", __name__)


@bp.get("/games/confirm/<token>")
def confirm_page(token: str) -> Any:
    """The host's confirmation link: the game as it will be sent, and buttons to confirm or discard it."""
    with refused_as("This link does not work", 403):
        payload = hosting.confirmation_payload(token)
    db = get_session()
    game = get_game(db, payload["g"])
    host = db.exec(select(Player).where(Player.email == game.host_email)).first()
    zone = payload.get("z") or (host.time_zone if host else "UTC")
    return _confirm_page(game, zone, [])


@bp.post("/games/confirm/<token>")
def confirm(token: str) -> Any:
    with refused_as("This link does not work", 403):
        payload = hosting.confirmation_payload(token)
    db = get_session()
    zone = request.form.get("time_zone", "").strip() or "UTC"
    if request.form.get("act") == "discard":
        try:
            game = lobby.discard_game(db, payload["g"], payload["k"])
        except DomainError as error:
            return _confirm_page(get_game(db, payload["g"]), zone, [error.message]), error.status
        return render_template("lobby/discarded.html", game=game)
    typed_name = request.form.get("seat_name")
    try:
        chosen = ConfirmGame.model_validate({"time_zone": zone})
        # A host who plays takes their seat here (issue 35): its name and the time zone asked once.
        seat_name = None
        if typed_name is not None:
            seat_name = checked("Your name in this game", lambda v: printable_text(v, longest=NAME_LENGTH), typed_name)
        confirmed = hosting.confirm(token, chosen.time_zone, seat_host=True, host_seat_name=seat_name)
    except ValueError as error:
        problems = messages(error, {"time_zone": "Your time zone"})
        return _confirm_page(get_game(db, payload["g"]), zone, problems, typed_name), 400
    except DomainError as error:
        page = _confirm_page(get_game(db, payload["g"]), zone, [error.message], typed_name)
        return page, error.status, retry_after(error)
    game = confirmed.game
    remember_host(game)
    session["created_game"] = {
        "id": game.id,
        "name": game.name,
        "admin_url": confirmed.admin_url,
        "players": [{"name": s.display_name, "email": p.email} for s, p in seats_of(db, game.id or 0)],
        "host_email": game.host_email,
        "host_seated": lobby.host_seat(seats_of(db, game.id or 0), game.host_email) is not None,
        "started": game.status == GameStatus.ACTIVE,
    }
    return redirect(url_for(".confirmed", game_id=game.id), code=303)


@bp.get("/games/<int:game_id>/confirmed")
def confirmed(game_id: int) -> Any:
    """After the host's confirmation: the invitations are on their way; the admin link."""
    info = session.get("created_game")
    if not isinstance(info, dict) or info.get("id") != game_id or "admin_url" not in info:
        return redirect(url_for("lobby.home"))
    return render_template("lobby/confirmed.html", created=info)


def _confirm_page(game: Game, zone: str, errors: list[str], seat_name: str | None = None) -> Any:
    db = get_session()
    settings = settings_of(game)
    seats = seats_of(db, game.id or 0)
    host_seat = lobby.host_seat(seats, game.host_email)
    return render_template(
        "lobby/confirm.html",
        game=game,
        seats=[{"name": s.display_name, "email": p.email, "host": s is host_seat} for s, p in seats],
        host_seat=host_seat,
        seat_name=seat_name if seat_name is not None else (host_seat.display_name if host_seat else ""),
        name_length=NAME_LENGTH,
        turn_length=times.duration(settings.turn_length_seconds),
        starts_at_once=not settings.start_when_all_accepted,
        zone=zone,
        zones=sorted(zones()),
        errors=errors,
        confirm_hours=current_app.config["UNCONFIRMED_GAME_HOURS"],
        block_url=current_links().block_url(game.host_email),
    )
