"""Who is looking at a page: the seat whose signed link started the browser session (DESIGN §7).

Opening ``/play/<token>`` or ``/invite/<token>`` stores ``{"game", "seat", "secret"}`` in the signed
session cookie (``service.web.links_pages``). Every page checks it again against the seat's row, so a session
dies as soon as the host gives the seat to someone else (the secret rotates) or removes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import session
from sqlmodel import select

from service.domain.models import Game, GameStatus, Player, Seat, SeatController
from service.infra.db import get_session
from service.web.access import REVOKED

OPEN_YOUR_LINK = "Open the link from your game's email: it opens your seat in this browser."


class PageRefused(Exception):
    """A page this browser may not see; ``message`` is safe to show (it tells nothing about the game)."""

    def __init__(self, message: str, status: int = 403) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Viewer:
    game: Game
    seat: Seat
    player: Player

    @property
    def number(self) -> int:
        return self.seat.seat

    @property
    def bot_plays(self) -> bool:
        """The house bot plays this seat (``service.domain.bot_seats``) in a game still going on."""
        running = self.game.status in (GameStatus.ACTIVE, GameStatus.PAUSED, GameStatus.INVITING)
        return running and self.seat.controller == SeatController.BOT


def viewer_for(game_id: int) -> Viewer:
    """The seat this browser holds in game ``game_id``, or :class:`PageRefused`."""
    mine = session.get("seat")
    if not isinstance(mine, dict) or mine.get("game") != game_id:
        raise PageRefused(OPEN_YOUR_LINK)
    db = get_session()
    row = db.exec(
        select(Seat, Player, Game)
        .where(Seat.game_id == game_id, Seat.seat == mine.get("seat"))
        .where(Seat.player_id == Player.id, Game.id == Seat.game_id)
    ).first()
    if row is None:
        session.pop("seat", None)
        raise PageRefused(OPEN_YOUR_LINK)
    seat, player, game = row
    if seat.secret != mine.get("secret") or seat.removed:
        session.pop("seat", None)
        raise PageRefused(REVOKED if not seat.removed else "This seat was removed from the game by its host.")
    return Viewer(game=game, seat=seat, player=player)
