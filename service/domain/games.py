"""A game's rows as the other operations read and write them: the game, its seats and settings, the guarded
version update, and the end of the game's play (DESIGN §9; the tally that follows is ``tally``). Creating and
starting a game is ``lobby``."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session, col, select

from service.domain.clock import Clock, set_clock
from service.domain.errors import NotFound
from service.domain.models import Game, GameStatus, Player, Seat
from service.domain.schemas import GameSettings
from service.infra.mail_wakeup import want_tally


def get_game(session: Session, game_id: int, *, lock: bool = False) -> Game:
    """The game; with ``lock``, its row locked for this transaction (``SELECT … FOR UPDATE`` on PostgreSQL;
    SQLite's transactions hold the write lock already) and read again, so what the caller read before is
    replaced by what another transaction committed before the lock was granted."""
    game = session.get(Game, game_id, with_for_update=lock or None, populate_existing=lock or None)
    if game is None:
        raise NotFound(f"There is no game {game_id}")
    return game


def update_if_unmoved(session: Session, game: Game, version: int) -> bool:
    """Write ``game``'s pending changes in one ``UPDATE … WHERE id = ? AND version = ?``; ``False`` (and
    nothing written) if the row's version is no longer ``version``: something else moved the game first.

    The changes are then the ORM's committed state, so the commit's flush writes nothing more for the game.
    Callers change the game under ``session.no_autoflush`` until this runs, or a flush would write it first
    without the guard.
    """
    state = sa.inspect(game)
    changes = {
        attr.key: history.added[0]
        for attr in state.mapper.column_attrs
        if (history := state.attrs[attr.key].history).added
    }
    moved = session.exec(sa.update(Game).where(col(Game.id) == game.id, col(Game.version) == version).values(**changes))
    if moved.rowcount != 1:
        return False
    for key, value in changes.items():
        set_committed_value(game, key, value)
    return True


def seats_of(session: Session, game_id: int) -> list[tuple[Seat, Player]]:
    rows = session.exec(
        select(Seat, Player).where(Seat.game_id == game_id, Seat.player_id == Player.id).order_by(col(Seat.seat))
    ).all()
    return [(seat, player) for seat, player in rows]


def settings_of(game: Game) -> GameSettings:
    return GameSettings.model_validate(game.settings)


def begin_ending(session: Session, game: Game, now: datetime) -> None:
    """The last step is played (DESIGN §9, "The end of the game is a worker job"): the game stops its clock and
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
