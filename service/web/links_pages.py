"""Opening a signed link in a browser (ARCHITECTURE §7): the link starts a session for its seat.

A bad link gets a clear page with status 403, never a stack trace and never any game data. The game and
turn pages themselves live with the other pages; until a player has a session, they see nothing.

An invitation link shows the invitation and a button: accepting is a POST from that page, never the GET,
since mail scanners open the links in mails (and would otherwise accept for the player). On that page the
player may change the name the host gave their seat, and chooses their own time zone.
"""

from __future__ import annotations

from typing import Any

from flask import (
    Blueprint,
    abort,
    make_response,
    redirect,
    render_template,
    render_template_string,
    request,
    session,
    url_for,
)
from pydantic import ValidationError
from sqlmodel import Session

from emails import times
from service.domain import lobby
from service.domain.errors import DomainError
from service.domain.games import seats_of, settings_of
from service.domain.links import INVITE, TURN, current_links
from service.domain.models import Game, Player, Seat
from service.domain.schemas import NAME_LENGTH, AcceptInvitation
from service.domain.text import zones
from service.infra.db import get_session
from service.web.access import seat_from_token
from service.web.form_errors import messages

bp = Blueprint("links", __name__)

REFUSED = """<!doctype html>
<html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Link not valid · Small World by Mail</title>
<style nonce="{{ csp_nonce() }}">
main { font-family: system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem }
</style>
<main>
<h1>This link does not work</h1>
<p>{{ message }}</p>
<p>Links from your game's emails open your seat. If you copied one, make sure you copied all of it.</p>
</main></html>"""


def start_seat_session(game_id: int, seat: Seat) -> None:
    """Remember the seat in the signed session cookie: the secret lets a replaced seat's session die, the
    player's ``links_serial`` a session of an address that signed out everywhere since
    (``service.web.pages.access``).

    Only the seat is replaced: a host who also plays keeps the admin right this browser holds.
    """
    player = get_session().get(Player, seat.player_id)
    serial = player.links_serial if player is not None else 0
    session["seat"] = {"game": game_id, "seat": seat.seat, "secret": seat.secret, "n": serial}
    session.permanent = True


def _seat_of(db: Session, token: str, purpose: str) -> tuple[Game, Seat]:
    """The game and seat a turn or invitation link (``purpose``) names; a link that does not work answers at
    once with :data:`REFUSED`, saying why."""
    try:
        return seat_from_token(db, current_links(), token, purpose=purpose)
    except DomainError as error:
        abort(make_response(render_template_string(REFUSED, message=error.message), error.status))


@bp.get("/play/<token>")
def open_turn_link(token: str) -> Any:
    game, seat = _seat_of(get_session(), token, TURN)
    start_seat_session(game.id or 0, seat)
    return redirect(url_for("links.seat_home", game_id=game.id))


@bp.get("/invite/<token>")
def open_invitation(token: str) -> Any:
    """The invitation and its form; a seat that accepted already just opens (nothing changes either way)."""
    db = get_session()
    game, seat = _seat_of(db, token, INVITE)
    if seat.accepted_at is not None:
        start_seat_session(game.id or 0, seat)
        return redirect(url_for("links.seat_home", game_id=game.id))
    player = db.get(Player, seat.player_id)
    assert player is not None
    form = {"name": seat.display_name, "time_zone": player.time_zone}
    return _invitation_page(game, seat, player, form, [])


@bp.post("/invite/<token>")
def accept_invitation(token: str) -> Any:
    db = get_session()
    game, seat = _seat_of(db, token, INVITE)
    player = db.get(Player, seat.player_id)
    assert player is not None
    form = {"name": request.form.get("name", ""), "time_zone": request.form.get("time_zone", "").strip() or "UTC"}
    try:
        chosen = AcceptInvitation.model_validate(form)
        lobby.accept_invitation(
            db, game.id or 0, seat.seat, current_links(), name=chosen.name, time_zone=chosen.time_zone
        )
    except ValidationError as error:
        return _invitation_page(game, seat, player, form, messages(error, FIELDS)), 400
    except DomainError as error:
        return _invitation_page(game, seat, player, form, [error.message]), error.status
    start_seat_session(game.id or 0, seat)
    return redirect(url_for("links.seat_home", game_id=game.id), code=303)


FIELDS = {"name": "Your name", "time_zone": "Your time zone"}


def _invitation_page(game: Game, seat: Seat, player: Player, form: dict[str, str], errors: list[str]) -> Any:
    settings = settings_of(game)
    return render_template(
        "lobby/invitation.html",
        game=game,
        names=[s.display_name for s, _ in seats_of(get_session(), game.id or 0)],
        turn_length=times.duration(settings.turn_length_seconds),
        starts_at_once=game.status != "inviting",
        form=form,
        errors=errors,
        zones=sorted(zones()),
        chosen_zone=player.time_zone != "UTC",
        name_length=NAME_LENGTH,
        block_url=current_links().block_url(player.email),
    )


@bp.get("/games/<int:game_id>/me")
def seat_home(game_id: int) -> Any:
    """Where a link lands: the turn page, which sends to the game page when the game waits for someone else."""
    return redirect(url_for("turn.page", game_id=game_id))
