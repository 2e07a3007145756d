"""Opening a signed link in a browser (DESIGN §7): the link starts a session for its seat.

A bad link gets a clear page with status 403, never a stack trace and never any game data. The game and
turn pages themselves live with the other pages; until a player has a session, they see nothing.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, redirect, render_template_string, session, url_for

from service.domain import lobby
from service.domain.errors import DomainError
from service.domain.links import INVITE, current_links
from service.infra.db import get_session
from service.web.access import seat_from_token

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


def start_seat_session(game_id: int, seat: int, secret: str) -> None:
    """Remember the seat in the signed session cookie (the secret lets a replaced seat's session die).

    Only the seat is replaced: a host who also plays keeps the admin right this browser holds.
    """
    session["seat"] = {"game": game_id, "seat": seat, "secret": secret}
    session.permanent = True


@bp.get("/play/<token>")
def open_turn_link(token: str) -> Any:
    try:
        game, seat = seat_from_token(get_session(), current_links(), token)
    except DomainError as error:
        return render_template_string(REFUSED, message=error.message), error.status
    start_seat_session(game.id or 0, seat.seat, seat.secret)
    return redirect(url_for("links.seat_home", game_id=game.id))


@bp.get("/invite/<token>")
def open_invitation(token: str) -> Any:
    db = get_session()
    try:
        game, seat = seat_from_token(db, current_links(), token, purpose=INVITE)
    except DomainError as error:
        return render_template_string(REFUSED, message=error.message), error.status
    lobby.accept_invitation(db, game, seat, current_links())
    start_seat_session(game.id or 0, seat.seat, seat.secret)
    return redirect(url_for("links.seat_home", game_id=game.id))


@bp.get("/games/<int:game_id>/me")
def seat_home(game_id: int) -> Any:
    """Where a link lands: the turn page, which sends to the game page when the game waits for someone else."""
    return redirect(url_for("turn.page", game_id=game_id))
