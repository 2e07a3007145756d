"""Creating and confirming games and giving a seat to someone else, for the JSON API, the lobby and the admin
page alike, within the limits on what strangers may have the service mail (ARCHITECTURE §9;
``service.web.rate_limits.MailQuotas``): invitations per address, and mail to addresses that never played
with the host (``service.domain.strangers``) per host and per client."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from flask import current_app

from service.domain import admin, games, lobby
from service.domain.errors import Forbidden
from service.domain.links import CONFIRM, LinkError, current_links
from service.domain.models import Game, SeatController
from service.domain.schemas import CreateGame
from service.domain.strangers import strangers_to
from service.domain.text import zones
from service.infra.db import get_session
from service.web.rate_limits import mail_quotas


def new_game(request: CreateGame) -> Game:
    """Create ``request``'s game within the limits on what strangers may mail (the lobby's form too)."""
    quotas = mail_quotas()
    quotas.check_new_game(request.host, [p.email for p in request.players if p.email])
    config = current_app.config
    game = lobby.create_game(
        get_session(),
        request,
        current_links(),
        unconfirmed_cap=int(config["UNCONFIRMED_GAMES_PER_HOST"]),
        confirm_within=timedelta(hours=float(config["UNCONFIRMED_GAME_HOURS"])),
    )
    quotas.count_new_game(request.host)
    return game


def confirm(
    token: str, time_zone: str | None, *, seat_host: bool = False, host_seat_name: str | None = None
) -> lobby.Confirmed:
    """Confirm the game of a confirmation token, within the limit on invitations per address (the page
    too). ``seat_host``: the confirm page seats a host who plays, under ``host_seat_name``."""
    session = get_session()
    payload = confirmation_payload(token)
    game = games.get_game(session, payload["g"])
    if not secrets.compare_digest(game.admin_secret, payload["k"]):
        raise Forbidden("This confirmation link is not valid.")
    invitees = _invitees(game)
    strangers = strangers_to(session, game.host_email, invitees, game.id or 0)
    if game.status == lobby.UNCONFIRMED:
        mail_quotas().check_invitations(invitees)
        mail_quotas().check_strangers(game.host_email, strangers)
    confirmed = lobby.confirm_game(
        session,
        payload["g"],
        payload["k"],
        current_links(),
        time_zone=time_zone or payload.get("z"),
        seat_host=seat_host,
        host_seat_name=host_seat_name,
    )
    if confirmed.now:  # the invitations went out now: they count
        mail_quotas().note_invitations(invitees)
        mail_quotas().note_strangers(game.host_email, strangers)
    return confirmed


def confirm_as_host(game: Game) -> lobby.Confirmed:
    """Confirm ``game`` for a host who proved the address already (a rematch, started from the host's own seat,
    whose link was mailed to that address), within the same limit on invitations per address."""
    session = get_session()
    invitees = _invitees(game)
    strangers = strangers_to(session, game.host_email, invitees, game.id or 0)
    mail_quotas().check_invitations(invitees)
    mail_quotas().check_strangers(game.host_email, strangers)
    confirmed = lobby.confirm_game(session, game.id or 0, game.admin_secret, current_links())
    if confirmed.now:
        mail_quotas().note_invitations(invitees)
        mail_quotas().note_strangers(game.host_email, strangers)
    return confirmed


def _invitees(game: Game) -> list[str]:
    return [p.email for s, p in games.seats_of(get_session(), game.id or 0) if s.controller == SeatController.PERSON]


def replace_player(game_id: int, actor: admin.Actor, seat_no: int, email: str, name: str) -> Game:
    """Give a seat to someone else (the admin API and the admin page), within the limits: the newcomer's
    invitation counts against the invitations to that address, and it and the "the seat changed hands" mail
    to the player who had the seat count against the mail to strangers of the game's host and of the client."""
    session = get_session()
    game = games.get_game(session, game_id)
    had_it = [player.email for seat, player in games.seats_of(session, game_id) if seat.seat == seat_no]
    strangers = strangers_to(session, game.host_email, [email, *had_it], game_id)
    quotas = mail_quotas()
    quotas.check_invitations([email])
    quotas.check_strangers(game.host_email, strangers)
    game = admin.replace_player(session, game_id, actor, current_links(), seat_no, email, name)
    quotas.note_invitations([email])
    quotas.note_strangers(game.host_email, strangers)
    return game


def confirmation_payload(token: str) -> dict[str, Any]:
    """A confirmation token's payload, or :class:`Forbidden` (expired once the game would have lapsed)."""
    hours = float(current_app.config["UNCONFIRMED_GAME_HOURS"])
    try:
        payload = current_links().signer.verify(CONFIRM, token, max_age=int(hours * 3600) + 3600)
    except LinkError as error:
        raise Forbidden(str(error)) from None
    if not isinstance(payload.get("g"), int) or not isinstance(payload.get("k"), str):
        raise Forbidden("This link is not valid.")
    zone = payload.get("z")
    if zone is not None and (not isinstance(zone, str) or zone not in zones()):
        payload.pop("z")
    if get_session().get(Game, payload["g"]) is None:
        raise Forbidden("This link is not valid.")
    return payload
