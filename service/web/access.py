"""Who is asking: signed links and bearer tokens resolved to a game and a seat (ARCHITECTURE §7).

Every refusal is a :class:`Forbidden` whose message says what is wrong with the link and nothing about the
game, whether the game exists or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import sqlalchemy as sa
from sqlmodel import Session, select

from service.domain import views
from service.domain.errors import Forbidden
from service.domain.links import (
    ADMIN,
    DAYS_AFTER_END,
    INVITE,
    INVITE_MAX_AGE,
    SIGNED_OUT,
    TURN,
    LinkError,
    LinkMaker,
    serial_of,
)
from service.domain.models import AuditEntry, Game, Player, Seat, utcnow
from service.domain.rows import (
    GAME_COLUMNS,
    GAME_SELECTED,
    GAMES,
    PLAYERS,
    SEAT_SELECTED,
    SEATS,
    GameRecord,
    GameRow,
    SeatRow,
    game_row,
    seat_row,
    seated_at,
)

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


def _check_not_expired(game: GameRecord) -> None:
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
    game, seat, links_serial = row
    _check_seat(game, seat, payload, links_serial)
    return game, seat


def rows_from_token(session: Session, links: LinkMaker, token: str) -> tuple[GameRow, SeatRow]:
    """:func:`seat_from_token` for a turn token, as plain records (``service.domain.rows``): for the API's
    reads of a game (its legal actions, previews, history), in one Core statement; refused in the same words."""
    payload = _linked_payload(links, TURN, token)
    # The first read of a request: nothing to flush before it.
    row = session.connection().execute(_LINKED_ROWS, {"link_game": payload["g"], "link_seat": payload["s"]}).first()
    if row is None:
        _game(session, payload["g"])  # says "not valid" or "expired" as for any other link
        raise Forbidden(REVOKED)
    game, seat = game_row(row), seat_row(row, len(GAME_COLUMNS))
    _check_seat(game, seat, payload, seat.player.links_serial)
    return game, seat


@dataclass(frozen=True)
class AtTable:
    """A turn link's game and seat with the whole table: every seat with its player, by seat number, and
    whether the game has an audit trail (what a step and its answer read besides the game). Plain records
    (``service.domain.rows``), not the ORM's objects: a step writes the game with ``games.update_if_unmoved``."""

    game: GameRow
    seat: SeatRow
    seats: list[SeatRow]
    has_audit: bool

    def view_inputs(self, session: Session) -> views.ViewInputs:
        """The game's view's inputs from this read: its seats, and the audit trail only if there is one."""
        return views.ViewInputs(session, self.game.id, seats=self.seats, has_audit=self.has_audit)


def at_table(session: Session, game_id: int, seat: int) -> AtTable | None:
    """Seat ``seat`` of game ``game_id`` with the whole table, in one Core statement; None when the game has
    no such seat (or does not exist). Checks nothing: the callers check the seat against the link or the
    browser session that names it."""
    # One Core statement on the session's connection, its rows made into plain records: as the ORM's objects
    # the same read cost about three times as much. The first read of a request: nothing to flush before it.
    rows = session.connection().execute(_AT_TABLE, {"table_game": game_id, "table_seat": seat}).all()
    seats = [seat_row(row, len(GAME_COLUMNS)) for row in rows]
    linked = next((number for number, held in enumerate(seats) if held.seat == seat), None)
    if linked is None:
        return None
    return AtTable(game_row(rows[linked]), seats[linked], seats, bool(rows[0][-1]))


def at_table_from_token(session: Session, links: LinkMaker, token: str) -> AtTable:
    """:func:`seat_from_token` for a turn token, with the game's seats and players read in the same round trip
    (a step needs them for its mails and its answer); refused in the same words."""
    payload = _linked_payload(links, TURN, token)
    table = at_table(session, payload["g"], payload["s"])
    if table is None:
        _game(session, payload["g"])  # says "not valid" or "expired" as for any other link
        raise Forbidden(REVOKED)
    _check_seat(table.game, table.seat, payload, table.seat.player.links_serial)
    return table


def _linked_payload(links: LinkMaker, purpose: str, token: str) -> dict:
    payload = _payload(links, purpose, token, INVITE_MAX_AGE if purpose == INVITE else None)
    if not isinstance(payload.get("g"), int) or not isinstance(payload.get("s"), int):
        raise Forbidden("This link is not valid.")
    return payload


def _check_seat(game: GameRecord, seat: Seat | SeatRow, payload: dict, links_serial: int) -> None:
    _check_not_expired(game)
    if seat.secret != payload.get("k"):
        raise Forbidden(REVOKED)
    if seat.removed:
        raise Forbidden("This seat was removed from the game by its host.")
    # A link made before its seat's player signed out everywhere (``links.with_serial``): a leaked one (a mail
    # read by someone else, a sign-in link used by someone else who then opened My games) ends there. The
    # mails written after it carry the new serial.
    if serial_of(payload) != links_serial:
        raise Forbidden(SIGNED_OUT)


#: The game and seat a link names, built once: the callers use both as the ORM's objects (a step goes on to
#: change the game, the invitation pages read most of the seat), so only the statement's building is saved.
_LINKED = select(Game, Seat, Player.links_serial).where(
    Game.id == sa.bindparam("link_game"),
    Seat.game_id == Game.id,
    Seat.seat == sa.bindparam("link_seat"),
    Player.id == Seat.player_id,
)
_AUDIT: sa.Table = AuditEntry.__table__  # type: ignore[attr-defined]
#: :func:`rows_from_token`'s statement, built once: the game's columns and its seat's with the seat's player.
_LINKED_ROWS = sa.select(*GAME_SELECTED, *SEAT_SELECTED).where(
    GAMES.c.id == sa.bindparam("link_game"),
    SEATS.c.game_id == GAMES.c.id,
    SEATS.c.seat == sa.bindparam("link_seat"),
    SEATS.c.player_id == PLAYERS.c.id,
)
#: The game's JSON columns (its settings, state and result): sent and parsed once, not once per seat.
_GAME_JSON = frozenset(column for column in GAME_SELECTED if isinstance(column.type, sa.JSON))
#: :func:`at_table_from_token`'s statement, built once: the game's columns (``rows.GameRow``) on each of its
#: seats' rows, each seat's with its player's (``rows.SeatRow``), and whether the game has audit entries. The
#: game's JSON columns are on the linked seat's row only (NULL on the others): the state is a few kilobytes,
#: and the driver parses a JSON value on every row it comes on.
_AT_TABLE = seated_at(
    sa.select(
        *(
            sa.case((SEATS.c.seat == sa.bindparam("table_seat"), column)).label(column.name)
            if column in _GAME_JSON
            else column
            for column in GAME_SELECTED
        ),
        *SEAT_SELECTED,
        sa.exists().where(_AUDIT.c.game_id == GAMES.c.id).label("has_audit"),
    ).where(GAMES.c.id == sa.bindparam("table_game")),
    GAMES.c.id,
)


def game_from_admin_token(session: Session, links: LinkMaker, token: str) -> Game:
    payload = _payload(links, ADMIN, token)
    game = _game(session, payload.get("g"))
    if payload.get("k") != game.admin_secret:
        raise Forbidden("This admin link is no longer valid.")
    return game
