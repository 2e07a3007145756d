"""A game's rows as plain records: what a step, its mails and its answer read, without the ORM.

A player's step reads its game with every seat and seat's player (``service.web.access.at_table_from_token``)
and writes the game back under the version guard (``games.update_if_unmoved``). As the ORM's objects, that
read cost about three times its statement: here it is one Core statement whose rows become these records.
The domain's operations take either these or the ORM's objects (``Game``, ``Seat``, ``Player``); the ORM's
stay for what changes seats and players (the lobby, the host's acts) and what reads more of a game.

So a game has two storages and one type (ARCHITECTURE §2, "Two storages of a game, one type"): an operation
that a step and the ORM's callers share takes a :class:`GameRecord`, the columns both the ORM's ``Game`` and
:class:`GameRow` have, and mypy checks that both are one. Only ``games.update_if_unmoved``, which writes a
game back, asks which of the two it holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Protocol

import sqlalchemy as sa

from service.domain.models import ActionKind, Game, GameAction, GameStatus, Player, Seat, SeatController


class GameRecord(Protocol):
    """A game as the domain reads and changes it, whichever storage holds it: the ORM's ``Game`` or a
    :class:`GameRow` read with one statement for a step. It declares exactly the columns the shared operations
    use, so a column that only one of the two has is a type error where it is read, not a surprise at run time.

    The columns a step moves (its status, state, version, step, announcement, clock and end) are attributes;
    the rest are read only. The id is read only too: the ORM's is ``None`` until the game is first flushed.
    """

    status: GameStatus
    version: int
    state: dict[str, Any] | None
    step_key: str | None
    #: The step last announced, or None while the step the game awaits is not (ARCHITECTURE §2).
    announced_key: str | None
    finished_at: datetime | None
    #: The clock's columns, in the clock's order: only ``clock.set_clock`` writes them (ARCHITECTURE §5).
    deadline_at: datetime | None
    reminders_due_at: datetime | None
    paused_remaining: int | None
    step_started_at: datetime | None

    @property
    def id(self) -> int | None: ...
    @property
    def name(self) -> str: ...
    @property
    def settings(self) -> dict[str, Any]: ...
    @property
    def seed(self) -> str: ...
    @property
    def chat_url(self) -> str | None: ...
    @property
    def pause_reason(self) -> str | None: ...
    @property
    def result(self) -> list[dict[str, Any]] | None: ...
    @property
    def created_at(self) -> datetime: ...


@dataclass(frozen=True, slots=True)
class PlayerRow:
    """A seat's player as a step reads it: whom its mails go to (and the time zone the pages show times in)."""

    id: int
    email: str
    time_zone: str
    #: ``Player.links_serial``: a turn link or a browser's seat made before it moved on no longer opens the seat.
    links_serial: int


@dataclass(frozen=True, slots=True)
class SeatRow:
    """A seat as a step, its mails and a game's view read it, with its player."""

    seat: int
    display_name: str
    secret: str
    accepted_at: datetime | None
    removed: bool
    controller: SeatController
    resigned_at: datetime | None
    player: PlayerRow


@dataclass(slots=True, eq=False)
class GameRow:
    """A game's row as a step reads and changes it: the columns a step, its mails and its answer use.

    Changed as the ORM's ``Game`` is (a step sets its version, state, step and clock), and written back by
    ``games.update_if_unmoved``, which writes the columns set since the row was read (:attr:`changed`), as the
    ORM writes the attributes set on its object: never a column the step did not set (the deadline sweep
    moves ``reminders_due_at`` of a game under way without moving its version).
    """

    #: The columns set since the row was read, by name: what ``games.update_if_unmoved`` writes.
    changed: set[str] = field(default_factory=set, init=False, repr=False)
    id: int
    name: str
    status: GameStatus
    settings: dict[str, Any]
    state: dict[str, Any] | None
    version: int
    seed: str
    step_key: str | None
    #: ``Game.announced_key``: set to None by a step that makes the game await a new step.
    announced_key: str | None
    finished_at: datetime | None
    step_started_at: datetime | None
    deadline_at: datetime | None
    reminders_due_at: datetime | None
    paused_remaining: int | None
    pause_reason: str | None
    result: list[dict[str, Any]] | None
    chat_url: str | None
    #: Whose address hosts the game, and when it was made: what the turn page reads besides a step's columns.
    host_email: str
    created_at: datetime

    def __post_init__(self) -> None:
        self.changed.clear()  # the values given to __init__ are the row as read

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _GAME_COLUMN_SET:
            self.changed.add(name)


@dataclass(frozen=True, slots=True)
class EventRow:
    """An entry of a game's event log as its story reads it (``service.domain.story.LogEntry``): the log a
    turn's mail tells "Since your last turn" from, read at each turn that passes."""

    version: int
    seat: int | None
    kind: ActionKind
    action: dict[str, Any] | None
    die: int | None
    undo_point: bool
    undone: bool
    by_bot: bool
    created_at: datetime


#: The columns of :class:`GameRow`, :class:`SeatRow` and :class:`PlayerRow`, in their fields' order.
GAME_COLUMNS = tuple(f.name for f in fields(GameRow) if f.name != "changed")
_GAME_COLUMN_SET = frozenset(GAME_COLUMNS)
SEAT_COLUMNS = tuple(f.name for f in fields(SeatRow) if f.name != "player")
PLAYER_COLUMNS = tuple(f.name for f in fields(PlayerRow))

#: The tables these records are read from, for the statements that select them (``GAME_SELECTED`` …).
GAMES: sa.Table = Game.__table__  # type: ignore[attr-defined]
SEATS: sa.Table = Seat.__table__  # type: ignore[attr-defined]
PLAYERS: sa.Table = Player.__table__  # type: ignore[attr-defined]
_ACTIONS: sa.Table = GameAction.__table__  # type: ignore[attr-defined]
#: The table columns a select of these records names, in their fields' order.
GAME_SELECTED = tuple(GAMES.c[name] for name in GAME_COLUMNS)
SEAT_SELECTED = tuple(SEATS.c[name] for name in SEAT_COLUMNS) + tuple(PLAYERS.c[name] for name in PLAYER_COLUMNS)
EVENT_SELECTED = tuple(_ACTIONS.c[f.name] for f in fields(EventRow))


def seated_at(statement: sa.Select[Any], game_id: sa.ColumnElement[Any]) -> sa.Select[Any]:
    """``statement`` (a select of :data:`SEAT_SELECTED` among its columns) narrowed to the seats of the game
    ``game_id`` names, each seat's row joined with its player's, by seat number: the join every read of a
    game's table (``games.seat_rows``, a link's read of its game with its seats) selects from."""
    return statement.where(SEATS.c.game_id == game_id, SEATS.c.player_id == PLAYERS.c.id).order_by(SEATS.c.seat)


def by_number(seats: Iterable[SeatRow]) -> dict[int, SeatRow]:
    """``seats`` by seat number: how a step looks up the seat it mails or the seat a bot plays."""
    return {seat.seat: seat for seat in seats}


def game_row(values: sa.Row[Any] | tuple[Any, ...]) -> GameRow:
    """The game of a row that starts with :data:`GAME_SELECTED`."""
    return GameRow(*values[: len(GAME_COLUMNS)])


def seat_row(values: sa.Row[Any] | tuple[Any, ...], start: int = 0) -> SeatRow:
    """The seat of a row that holds :data:`SEAT_SELECTED` from ``start`` on."""
    end = start + len(SEAT_COLUMNS)
    return SeatRow(*(*values[start:end], PlayerRow(*values[end : end + len(PLAYER_COLUMNS)])))


def _both_are_game_records(game: Game, row: GameRow) -> tuple[GameRecord, GameRecord]:
    """Never called: mypy checks here that the ORM's game and the plain row are both a :class:`GameRecord`."""
    return game, row
