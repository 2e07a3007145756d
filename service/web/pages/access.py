"""Who is looking at a page: the seat whose signed link started the browser session (ARCHITECTURE §7).

Opening ``/play/<token>`` or ``/invite/<token>`` (directly, or through My games) stores ``{"game", "seat",
"secret", "n"}`` in the signed session cookie (``service.web.links_pages``). Every page checks it again against
the seat's row, so a session dies as soon as the host gives the seat to someone else (the secret rotates) or
removes it, or its player signs out everywhere (``n``: their ``links_serial`` then, which it moves on).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from flask import session
from sqlmodel import Session, select

from service.domain.errors import DomainError
from service.domain.models import Game, GameStatus, Player, Seat, SeatController
from service.domain.rows import GameRecord, GameRow, PlayerRow, SeatRow
from service.infra.db import get_session
from service.web.access import REVOKED, AtTable, at_table

#: What a browser session keeps as signed in (:func:`signed_in_as`).
Kept = TypeVar("Kept")

OPEN_YOUR_LINK = "Open the link from your game's email: it opens your seat in this browser."
SIGNED_OUT_HERE = (
    "You signed out everywhere, so this browser no longer opens your seat. Open the link from your next game "
    "mail, or sign in again (a sign-in link comes by mail) and open the game from My games."
)


class PageRefused(Exception):
    """A page this browser may not see; ``message`` is safe to show (it tells nothing about the game), under
    ``heading`` (the refusal page's own when none)."""

    def __init__(self, message: str, status: int = 403, heading: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.heading = heading


def signed_in_as(key: str, check: Callable[[Session, Any], Kept | None]) -> Kept | None:
    """Who this browser's session says is signed in (kept under ``key``: a player's sign-in, a site admin), if
    ``check`` finds it still on; else the session forgets it (signed out everywhere, too old)."""
    kept = session.get(key)
    if kept is None:
        return None
    found = check(get_session(), kept)
    if found is None:
        session.pop(key, None)
    return found


@contextmanager
def refused_as(heading: str, status: int | None = None) -> Iterator[None]:
    """A ``DomainError`` the block raises (a signed link that does not work, a game that cannot be shown)
    refuses the page, with its words under ``heading``, and its status unless ``status`` is given."""
    try:
        yield
    except DomainError as error:
        raise PageRefused(error.message, status or error.status, heading) from None


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
        return bot_plays(self.game, self.seat)


@dataclass(frozen=True)
class Seated:
    """:class:`Viewer` as plain records (``service.domain.rows``), with the whole table: the turn page's read,
    the one the API's steps make (``service.web.access.at_table``), for a page drawn or a step taken on it."""

    table: AtTable

    @property
    def game(self) -> GameRow:
        return self.table.game

    @property
    def seat(self) -> SeatRow:
        return self.table.seat

    @property
    def player(self) -> PlayerRow:
        return self.table.seat.player

    @property
    def number(self) -> int:
        return self.table.seat.seat

    @property
    def bot_plays(self) -> bool:
        """The house bot plays this seat (``service.domain.bot_seats``) in a game still going on."""
        return bot_plays(self.game, self.seat)


def bot_plays(game: GameRecord, seat: Seat | SeatRow) -> bool:
    running = game.status in (GameStatus.ACTIVE, GameStatus.PAUSED, GameStatus.INVITING)
    return running and seat.controller == SeatController.BOT


def viewer_for(game_id: int) -> Viewer:
    """The seat this browser holds in game ``game_id``, or :class:`PageRefused`."""
    mine = _session_seat(game_id)
    db = get_session()
    row = db.exec(
        select(Seat, Player, Game)
        .where(Seat.game_id == game_id, Seat.seat == mine.get("seat"))
        .where(Seat.player_id == Player.id, Game.id == Seat.game_id)
    ).first()
    if row is None:
        raise _refused(OPEN_YOUR_LINK)
    seat, player, game = row
    _check_seat(mine, seat, player.links_serial)
    return Viewer(game=game, seat=seat, player=player)


def seated_for(game_id: int) -> Seated:
    """:func:`viewer_for` as plain records with the whole table, in one Core statement; refused alike."""
    mine = _session_seat(game_id)
    number = mine.get("seat")
    table = at_table(get_session(), game_id, number) if isinstance(number, int) else None
    if table is None:
        raise _refused(OPEN_YOUR_LINK)
    _check_seat(mine, table.seat, table.seat.player.links_serial)
    return Seated(table)


def _session_seat(game_id: int) -> dict:
    """The seat this browser's session names in game ``game_id`` (not yet checked against its row)."""
    mine = session.get("seat")
    if not isinstance(mine, dict) or mine.get("game") != game_id:
        raise PageRefused(OPEN_YOUR_LINK)
    return mine


def _check_seat(mine: dict, seat: Seat | SeatRow, links_serial: int) -> None:
    """Refused when the seat was given to someone else (its secret rotated) or removed, or when its player
    signed out everywhere since this browser opened it (a session kept before ``n`` existed counts as 0)."""
    if seat.secret != mine.get("secret") or seat.removed:
        raise _refused(REVOKED if not seat.removed else "This seat was removed from the game by its host.")
    if mine.get("n", 0) != links_serial:
        raise _refused(SIGNED_OUT_HERE)


def _refused(message: str) -> PageRefused:
    """The refusal of a seat this browser no longer holds: the session forgets it."""
    session.pop("seat", None)
    return PageRefused(message)


#: Who is looking at a seat's page: the ORM's objects (:func:`viewer_for`) or the plain records (:func:`seated_for`).
AnyViewer = Viewer | Seated
