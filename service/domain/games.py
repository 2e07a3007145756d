"""A game's rows as the other operations read and write them: the game, its seats and settings, the guarded
version update, and the end of the game's play (ARCHITECTURE §9; the tally that follows is ``tally``). Creating and
starting a game is ``lobby``."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session, col, select

from service.domain.clock import Clock, set_clock
from service.domain.errors import NotFound
from service.domain.models import Game, GameAction, GameStatus, Player, Seat
from service.domain.rows import GAMES, SEAT_SELECTED, GameRecord, GameRow, SeatRow, by_number, seat_row, seated_at
from service.domain.schemas import GameSettings
from service.infra.logfmt import log
from service.infra.mail_wakeup import want_tally


def get_game(session: Session, game_id: int, *, lock: bool = False) -> Game:
    """The game; with ``lock``, its row locked for this transaction (``SELECT … FOR UPDATE`` on PostgreSQL;
    SQLite's transactions hold the write lock already) and read again, so what the caller read before is
    replaced by what another transaction committed before the lock was granted."""
    game = session.get(Game, game_id, with_for_update=lock or None, populate_existing=lock or None)
    if game is None:
        raise NotFound(f"There is no game {game_id}")
    return game


def update_if_unmoved(
    session: Session, game: GameRecord, version: int, *, event: Mapping[str, Any] | None = None
) -> bool:
    """Write ``game``'s pending changes in one ``UPDATE … WHERE id = ? AND version = ?``; ``False`` (and
    nothing written) if the row's version is no longer ``version``: something else moved the game first.

    With ``event`` (a log entry's row, every column but the id), the entry's INSERT goes in the same statement,
    on PostgreSQL only (:func:`_update_and_event`): one round trip for both, the entry written only once the
    UPDATE locked and wrote the game's row (it raises ``IntegrityError`` when the log's unique (game, version)
    refuses it), and ``False``, with nothing written, when the version guard stops the UPDATE.

    A plain row's pending changes are the columns set since it was read (``GameRow.changed``); once written,
    it has none. An ORM object's changes are then the ORM's committed state, so the commit's flush writes
    nothing more for the game; when they were all of the game's pending changes, the game is marked clean as
    the ORM marks an object its flush wrote, so that the commit's flush does not go through its unit of work
    for nothing (on a step that cost about as much as the UPDATE's execution). Callers change an ORM game
    under ``session.no_autoflush`` until this runs, or a flush would write it first without the guard.

    The UPDATE is a Core statement on the table, built once: its SET clause is the changed columns named in
    the parameters, so a step builds no statement and the ORM neither plans nor synchronises a bulk update.
    """
    if isinstance(game, GameRow):
        written = {name: getattr(game, name) for name in game.changed}
        if not _guarded_update(session, written, game.id, version, event):
            return False
        game.changed.clear()
        return True
    state = sa.inspect(game)
    # The attributes set since the game was read (the ORM keeps their old values in ``committed_state``; one
    # set back to the value it had is written again, unchanged): cheaper than asking each column's history.
    values = state.dict
    changes = {_COLUMN_OF[key]: values[key] for key in state.committed_state if key in _COLUMN_OF}
    if not _guarded_update(session, changes, game.id, version, event):
        return False
    if len(changes) == len(state.committed_state) and state.session is session:
        # Every pending change was written (the game has no relationships, each change is a column): the
        # ORM's own step after its flush wrote an object (``InstanceState._commit_all``; SQLAlchemy has no
        # public name for it).
        state._commit_all(values, session.identity_map)
    else:
        for key, value in changes.items():
            set_committed_value(game, _ATTRIBUTE_OF[key], value)
    return True


def _guarded_update(
    session: Session, changes: dict[str, Any], game_id: int | None, version: int, event: Mapping[str, Any] | None
) -> bool:
    """:func:`update_if_unmoved`'s statement, with ``event``'s INSERT when it has one; whether the game moved."""
    guard = {"unmoved_id": game_id, "unmoved_version": version}
    if event is None:
        moved = session.connection().execute(_UNMOVED, {**changes, **guard})
    else:
        entry = {_EVENT_PARAMETER[name]: value for name, value in event.items()}
        both = _update_and_event(frozenset(changes), frozenset(event))
        # The row the entry's INSERT returns (the driver counts no rows for an INSERT … SELECT).
        return session.connection().execute(both, {**changes, **entry, **guard}).first() is not None
    return moved.rowcount == 1


@functools.cache
def event_insert(dialect: str, columns: frozenset[str]) -> sa.Insert:
    """A log entry's INSERT (of ``columns``, from the parameters of their names), made only
    while the game's row is locked at the version before the entry's, built once per set of columns:

        INSERT INTO actions (…) SELECT CAST(? AS …), … FROM games
        WHERE games.id = <game_id> AND games.version + 1 = <version> FOR UPDATE

    So a step takes its game's row lock before it writes anything, as the deadline sweep does (it locks the
    game it auto-passes first, then writes the auto-pass's entry, mail and seats): the two take their locks in
    one order and wait for each other, never deadlock. Before, a step wrote its entry first, holding the log's
    unique (game, version), and then waited for the game's row, which the sweep held while it waited for that
    same unique key: PostgreSQL's "deadlock detected", a 503 to a bot whose step met an auto-pass. A game that
    moved meanwhile (READ COMMITTED checks the version again on the row as the other transaction left it) gives
    no row: nothing is inserted. SQLite (``dialect``) writes one transaction at a time: there it is a plain
    INSERT of the parameters.
    """
    names = sorted(columns)
    if dialect != "postgresql":
        return sa.insert(_EVENTS).values({name: sa.bindparam(name) for name in names}).returning(_EVENTS.c.game_id)
    values = [_typed(name, _EVENTS.c[name].type) for name in names]
    locked = (
        sa.select(*values)
        .where(
            GAMES.c.id == sa.bindparam("game_id"),
            GAMES.c.version + 1 == sa.bindparam("version"),
        )
        .with_for_update()
    )
    # Its count is read from the row it returns (the driver counts no rows for an INSERT … SELECT).
    return sa.insert(_EVENTS).from_select(names, locked).returning(_EVENTS.c.game_id)


@functools.cache
def _update_and_event(changed: frozenset[str], columns: frozenset[str]) -> sa.Insert:
    """The guarded UPDATE (setting the game's ``changed`` columns) and the log entry's INSERT (of ``columns``,
    from the parameters named ``event_<column>``) in one PostgreSQL statement, built once per pair of sets (a
    common step changes the same columns every time, and its entry has all of them):

        WITH moved AS (UPDATE games SET … WHERE games.id = ? AND games.version = ? RETURNING games.id)
        INSERT INTO actions (…) SELECT … FROM moved

    The entry's row comes from the UPDATE's one returned row, so the game's row is locked and written first
    and the entry goes in only then: the order of every other writer of a step's entry (the game's row lock,
    then the entry; :func:`event_insert`), so two steps, or a step and the sweep, racing for a version wait for
    each other, never deadlock. The version guard is the UPDATE's own, checked again on the row's latest version
    when another transaction moved it meanwhile (READ COMMITTED): then nothing is written, and the statement's
    count is 0. (An entry INSERTed first, holding the log's unique (game, version), while the row's lock was
    waited for, deadlocked with the sweep, which holds that lock when it writes its entry.)
    """
    moved = (
        GAMES.update()
        .where(GAMES.c.id == sa.bindparam("unmoved_id"), GAMES.c.version == sa.bindparam("unmoved_version"))
        .values({name: sa.bindparam(name, type_=GAMES.c[name].type) for name in sorted(changed)})
        .returning(GAMES.c.id)
        .cte("moved")
    )
    names = sorted(columns)
    values = [_typed(_EVENT_PARAMETER[name], _EVENTS.c[name].type) for name in names]
    return sa.insert(_EVENTS).from_select(names, sa.select(*values).select_from(moved)).returning(_EVENTS.c.game_id)


def _typed(parameter: str, kind: Any) -> sa.ColumnElement[Any]:
    """The parameter as a value of the column type ``kind`` in a SELECT's list (PostgreSQL: there it has no
    column to take its type from)."""
    return sa.cast(sa.bindparam(parameter, type_=kind), kind)


#: The guarded UPDATE of :func:`update_if_unmoved`; the columns it sets come with each execution's parameters.
_UNMOVED = GAMES.update().where(
    GAMES.c.id == sa.bindparam("unmoved_id"), GAMES.c.version == sa.bindparam("unmoved_version")
)
_EVENTS: sa.Table = GameAction.__table__  # type: ignore[attr-defined]
#: The parameter of each column of a log entry in :func:`_update_and_event` (the game has columns of the same
#: names, set from parameters named as they are).
_EVENT_PARAMETER = {column.name: f"event_{column.name}" for column in _EVENTS.columns}
#: The game's attribute of each column (they share their names today; the guard must not depend on it).
_ATTRIBUTE_OF = {attr.columns[0].key: attr.key for attr in sa.inspect(Game).column_attrs}
_COLUMN_OF = {attribute: column for column, attribute in _ATTRIBUTE_OF.items()}


def seats_of(session: Session, game_id: int) -> list[tuple[Seat, Player]]:
    """The game's seats with their players, by seat number: the ORM's objects, which callers change (the
    lobby, the host's acts) and which a step's mails and answer read in the step's transaction."""
    return [(seat, player) for seat, player in session.exec(_SEATS, params={"seats_game": game_id}).all()]


#: :func:`seats_of`'s statement, built once (it runs on every step).
_SEATS = (
    select(Seat, Player)
    .where(Seat.game_id == sa.bindparam("seats_game"), Seat.player_id == Player.id)
    .order_by(col(Seat.seat))
)


def seat_rows(session: Session, game_id: int) -> list[SeatRow]:
    """The game's seats with their players, by seat number, as plain records (``service.domain.rows``): what
    a step's mails and a game's view read of them, in one Core statement."""
    if session.autoflush:  # as the ORM's own queries do: what this transaction changed is seen
        session.flush()
    return [seat_row(row) for row in session.connection().execute(_SEAT_ROWS, {"seats_game": game_id})]


#: :func:`seat_rows`'s statement, built once.
_SEAT_ROWS = seated_at(sa.select(*SEAT_SELECTED), sa.bindparam("seats_game"))


def seats_by_number(session: Session, game_id: int) -> dict[int, SeatRow]:
    """:func:`seat_rows` by seat number."""
    return by_number(seat_rows(session, game_id))


def settings_of(game: GameRecord) -> GameSettings:
    return GameSettings.model_validate(game.settings)


def begin_ending(session: Session, game: GameRecord, now: datetime) -> None:
    """The last step is played (ARCHITECTURE §9, "The end of the game is a worker job"): the game stops its clock and
    waits, ``ending``, for the worker's tally (``service.domain.tally.tally_game``), which stores the results,
    updates ratings and records, mails the final table and marks the game finished, exactly once.

    The tally task is sent once the caller's transaction commits (never before: a worker would find the game
    still running); a task lost on the way is made up for by the deadline sweep.
    """
    game.status = GameStatus.ENDING
    game.finished_at = now
    set_clock(game, Clock.of(game).stop())
    game.step_key = None
    want_tally(session, game.id or 0)


@dataclass
class MendReport:
    """What a sweep's repair of left-behind games did (:func:`mend_each`): the games it mended, and how many
    failed."""

    games: list[int] = field(default_factory=list)
    errors: int = 0

    @property
    def mended(self) -> int:
        return len(self.games)


def mend_each(
    session: Session,
    game_ids: Iterable[int | None],
    mend: Callable[[int], bool],
    *,
    stop_at: float | None,
    logger: logging.Logger,
    events: tuple[str, str],
) -> MendReport:
    """The deadline sweep's repair of games a lost job left behind (a tally, an announcement): ``mend`` each
    game, which commits its own transaction and says whether it did the work; a game a job is mending now is
    skipped by ``mend`` itself, one that fails is logged and rolled back and the others go on, and none is begun
    after ``stop_at`` (``time.monotonic``). Each game mended or failed is logged with ``events`` (mended,
    failed)."""
    report = MendReport()
    for game_id in game_ids:
        if game_id is None or (stop_at is not None and time.monotonic() > stop_at):
            continue
        try:
            if mend(game_id):
                report.games.append(game_id)
                log(logger, logging.WARNING, events[0], game=game_id)
        except Exception as error:  # one broken game must not stop the others
            session.rollback()
            report.errors += 1
            log(logger, logging.ERROR, events[1], game=game_id, error=repr(error))
            logger.exception("%s: game %s", events[1], game_id)
    return report


def locked_for_job(session: Session, game_id: int, *, skip_locked: bool = False) -> Game | None:
    """The game's row read afresh and locked for the rest of a job's transaction (a tally, an announcement),
    or None when there is no such game. ``skip_locked`` (the sweep): a row another transaction holds (a job
    doing the same work now, a step) reads as None, left to that transaction instead of waited for. SQLite
    locks no rows: its writers take turns on the whole database."""
    query = select(Game).where(col(Game.id) == game_id).execution_options(populate_existing=True)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=skip_locked)
    return session.exec(query).first()
