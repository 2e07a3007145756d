"""The game's rows as the other operations write them (``service/domain/games.py``): the guarded version
update (of the ORM's object and of a plain row) and the seats, on SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from sqlmodel import Session

from service.domain import games, rows
from service.domain.models import Game, GameStatus
from tests.factories import GameFactory, PlayerFactory, SeatFactory


def _row(session: Session, game_id: int) -> sa.Row:
    table = Game.__table__  # type: ignore[attr-defined]
    return session.connection().execute(sa.select(table).where(table.c.id == game_id)).one()


def test_the_guarded_update_writes_the_changed_columns_once_and_leaves_nothing_pending(db_session: Session) -> None:
    game = GameFactory(started=True, players=2)
    db_session.flush()
    version = game.version
    with db_session.no_autoflush:
        game.version = version + 1
        game.step_key = "9:1:-"
        game.state = {**(game.state or {}), "marker": [1, 2]}
        game.status = GameStatus.PAUSED
        assert games.update_if_unmoved(db_session, game, version)
    row = _row(db_session, game.id or 0)
    assert (row.version, row.step_key, row.state["marker"], row.status) == (version + 1, "9:1:-", [1, 2], "paused")
    # The changes are the ORM's committed state now: the session has nothing more to write for the game.
    assert not db_session.is_modified(game)
    assert not sa.inspect(game).attrs.version.history.has_changes()
    # Every pending change was written: the game is clean, as after the ORM's own flush (so the commit's
    # flush does not walk its unit of work over it).
    assert game not in db_session.dirty
    assert game.version == version + 1 and game.state["marker"] == [1, 2]


def test_the_guarded_update_writes_nothing_when_the_version_moved(db_session: Session) -> None:
    game = GameFactory(started=True, players=2)
    db_session.flush()
    version = game.version
    table = Game.__table__  # type: ignore[attr-defined]
    db_session.connection().execute(table.update().where(table.c.id == game.id).values(version=version + 1))
    with db_session.no_autoflush:
        game.version = version + 1
        game.step_key = "9:1:-"
        assert not games.update_if_unmoved(db_session, game, version)
    row = _row(db_session, game.id or 0)
    assert row.step_key != "9:1:-"
    assert sa.inspect(game).attrs.step_key.history.has_changes()  # still pending: the caller rolls back


def test_the_guarded_update_touches_only_its_game(db_session: Session) -> None:
    game, other = GameFactory(started=True, players=2), GameFactory(started=True, players=2)
    db_session.flush()
    before = _row(db_session, other.id or 0)
    with db_session.no_autoflush:
        game.version += 1
        game.step_key = "9:1:-"
        assert games.update_if_unmoved(db_session, game, game.version - 1)
    assert _row(db_session, other.id or 0) == before


def test_the_seats_come_with_their_players_by_seat_number(db_session: Session) -> None:
    game, other = GameFactory(), GameFactory()
    players = [PlayerFactory() for _ in range(3)]
    db_session.flush()
    for seat in (2, 0, 1):
        SeatFactory(game_id=game.id, player_id=players[seat].id, seat=seat)
    SeatFactory(game_id=other.id, player_id=players[0].id, seat=0)
    db_session.flush()
    seated = games.seats_of(db_session, game.id or 0)
    assert [(s.seat, p.id) for s, p in seated] == [(0, players[0].id), (1, players[1].id), (2, players[2].id)]
    assert all(s.game_id == game.id for s, _ in seated)
    assert games.seats_of(db_session, 10**9) == []


def _game_row(session: Session, game_id: int) -> rows.GameRow:
    table = Game.__table__  # type: ignore[attr-defined]
    return rows.game_row(
        session.connection().execute(sa.select(*rows.GAME_SELECTED).where(table.c.id == game_id)).one()
    )


def test_the_guarded_update_of_a_plain_row_writes_only_the_columns_set_since_it_was_read(db_session: Session) -> None:
    game = GameFactory(started=True, players=2)
    db_session.flush()
    row = _game_row(db_session, game.id or 0)
    # Meanwhile the deadline sweep moves the next reminder, without moving the version (its row lock held).
    table = Game.__table__  # type: ignore[attr-defined]
    reminder = datetime(2030, 1, 2, 3, 4, tzinfo=UTC)
    db_session.connection().execute(table.update().where(table.c.id == game.id).values(reminders_due_at=reminder))
    version = row.version
    row.version = version + 1
    row.step_key = "9:1:-"
    row.state = {**(row.state or {}), "marker": [1, 2]}
    assert row.changed == {"version", "step_key", "state"}
    assert games.update_if_unmoved(db_session, row, version)
    stored = _row(db_session, game.id or 0)
    assert (stored.version, stored.step_key, stored.state["marker"]) == (version + 1, "9:1:-", [1, 2])
    assert stored.reminders_due_at == reminder  # not set by the step: not written back as it was read
    assert row.changed == set()  # written: nothing pending


def test_the_guarded_update_of_a_plain_row_writes_nothing_when_the_version_moved(db_session: Session) -> None:
    game = GameFactory(started=True, players=2)
    db_session.flush()
    row = _game_row(db_session, game.id or 0)
    table = Game.__table__  # type: ignore[attr-defined]
    db_session.connection().execute(table.update().where(table.c.id == game.id).values(version=row.version + 1))
    row.version += 1
    row.step_key = "9:1:-"
    assert not games.update_if_unmoved(db_session, row, row.version - 1)
    assert _row(db_session, game.id or 0).step_key != "9:1:-"
    assert row.changed == {"version", "step_key"}  # still pending: the caller rolls back


def test_the_seat_rows_come_with_their_players_by_seat_number_as_the_session_holds_them(db_session: Session) -> None:
    game, other = GameFactory(), GameFactory()
    players = [PlayerFactory() for _ in range(3)]
    db_session.flush()
    seats = [SeatFactory(game_id=game.id, player_id=players[seat].id, seat=seat) for seat in (2, 0, 1)]
    SeatFactory(game_id=other.id, player_id=players[0].id, seat=0)
    db_session.flush()
    seats[0].removed = True  # changed in the session, not yet flushed: the read sees it, as the ORM's would
    seated = games.seat_rows(db_session, game.id or 0)
    assert [(s.seat, s.player.id, s.player.email) for s in seated] == [
        (n, players[n].id, players[n].email) for n in range(3)
    ]
    assert [s.removed for s in seated] == [False, False, True]
    orm = {s.seat: s for s, _ in games.seats_of(db_session, game.id or 0)}
    for record in seated:
        kept = orm[record.seat]
        assert (record.display_name, record.secret, record.accepted_at, record.controller, record.resigned_at) == (
            kept.display_name,
            kept.secret,
            kept.accepted_at,
            kept.controller,
            kept.resigned_at,
        )
    assert games.seat_rows(db_session, 10**9) == []
