"""Who is asking: signed links and bearer tokens resolved to a game and a seat (DESIGN §7).

Every refusal is a :class:`Forbidden` whose message says what is wrong with the link and nothing about the
game, whether the game exists or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import sqlalchemy as sa
from sqlmodel import Session, col, select

from service.domain.errors import Forbidden
from service.domain.links import ADMIN, DAYS_AFTER_END, INVITE, INVITE_MAX_AGE, TURN, LinkError, LinkMaker
from service.domain.models import AuditEntry, Game, Player, Seat, utcnow

REVOKED = "This link is no longer valid: the seat was given to someone else. Ask the game's host."


def _payload(links: LinkMaker, purpose: str, token: str, max_age: int | None = None) -> dict:
    try:
        return links.signer.verify(purpose, token, max_age=max_age)
    except LinkError as error:
        raise Forbidden(str(error)) from None


def _game(session: Session, game_id: object) -> Game:
    if not isinstance(game_id, int):
        raise Forbidden("This link is not valid.")
    game = session.get(Game, game_id)
    if game is None:
        raise Forbidden("This link is not valid.")
    _check_not_expired(game)
    return game


def _check_not_expired(game: Game) -> None:
    if game.finished_at is not None and utcnow() - game.finished_at > timedelta(days=DAYS_AFTER_END):
        raise Forbidden("This link has expired: the game ended more than a month ago.")


def seat_from_token(session: Session, links: LinkMaker, token: str, purpose: str = TURN) -> tuple[Game, Seat]:
    """A turn (or invitation) token's game and seat; refused if tampered, expired or revoked."""
    payload = _linked_payload(links, purpose, token)
    # One round trip for the game and the seat (this runs on every request of a player).
    row = session.exec(_LINKED, params={"link_game": payload["g"], "link_seat": payload["s"]}).first()
    if row is None:
        _game(session, payload["g"])  # says "not valid" or "expired" as for any other link
        raise Forbidden(REVOKED)
    game, seat = row
    return game, _checked(game, seat, payload)


@dataclass(frozen=True)
class AtTable:
    """A turn link's game and seat with the whole table: every seat with its player, by seat number, and
    whether the game has an audit trail (what a step and its answer read besides the game)."""

    game: Game
    seat: Seat
    seats: list[tuple[Seat, Player]]
    has_audit: bool


def at_table_from_token(session: Session, links: LinkMaker, token: str) -> AtTable:
    """:func:`seat_from_token` for a turn token, with the game's seats and players read in the same round trip
    (a step needs them for its mails and its answer); refused in the same words."""
    payload = _linked_payload(links, TURN, token)
    rows = session.exec(_AT_TABLE, params={"table_game": payload["g"]}).all()
    if not rows:
        _game(session, payload["g"])  # says "not valid" or "expired" as for any other link
        raise Forbidden(REVOKED)
    game = rows[0][0]
    seats = [(seat, player) for _, seat, player, _ in rows]
    seat = next((seat for seat, _ in seats if seat.seat == payload["s"]), None)
    if seat is None:
        _check_not_expired(game)
        raise Forbidden(REVOKED)
    return AtTable(game, _checked(game, seat, payload), seats, bool(rows[0][3]))


def _linked_payload(links: LinkMaker, purpose: str, token: str) -> dict:
    payload = _payload(links, purpose, token, INVITE_MAX_AGE if purpose == INVITE else None)
    if not isinstance(payload.get("g"), int) or not isinstance(payload.get("s"), int):
        raise Forbidden("This link is not valid.")
    return payload


def _checked(game: Game, seat: Seat, payload: dict) -> Seat:
    _check_not_expired(game)
    if seat.secret != payload.get("k"):
        raise Forbidden(REVOKED)
    if seat.removed:
        raise Forbidden("This seat was removed from the game by its host.")
    return seat


#: The game and seat a link names, built once: the callers use both as the ORM's objects (a step goes on to
#: change the game, the invitation pages read most of the seat), so only the statement's building is saved.
_LINKED = select(Game, Seat).where(
    Game.id == sa.bindparam("link_game"), Seat.game_id == Game.id, Seat.seat == sa.bindparam("link_seat")
)
#: :func:`at_table_from_token`'s statement, built once: the game on each of its seats' rows (the ORM makes
#: one object of it), each seat's player, and whether the game has audit entries.
_AT_TABLE = (
    select(Game, Seat, Player, sa.exists().where(col(AuditEntry.game_id) == Game.id).label("has_audit"))
    .where(Game.id == sa.bindparam("table_game"), Seat.game_id == Game.id, Seat.player_id == Player.id)
    .order_by(col(Seat.seat))
)


def game_from_admin_token(session: Session, links: LinkMaker, token: str) -> Game:
    payload = _payload(links, ADMIN, token)
    game = _game(session, payload.get("g"))
    if payload.get("k") != game.admin_secret:
        raise Forbidden("This admin link is no longer valid.")
    return game
