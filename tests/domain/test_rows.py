"""A game's rows as plain records (``service/domain/rows.py``): what a step reads and what it changed."""

from __future__ import annotations

from service.domain import rows
from service.domain.models import GameStatus, SeatController


def _game(**columns: object) -> rows.GameRow:
    values = dict.fromkeys(rows.GAME_COLUMNS) | {"id": 7, "name": "Friday", "version": 3} | columns
    return rows.GameRow(**values)  # type: ignore[arg-type]


def test_a_game_row_as_read_has_no_changes_and_records_each_column_set() -> None:
    game = _game(status=GameStatus.ACTIVE, step_key="1:0:-")
    assert game.changed == set()
    game.version += 1
    game.step_key = "1:0:-"  # set to what it was: written again, as the ORM writes an attribute set
    game.version += 1
    assert game.changed == {"version", "step_key"}
    assert (game.version, game.step_key, game.status) == (5, "1:0:-", GameStatus.ACTIVE)


def test_the_records_are_made_from_a_rows_columns_in_their_fields_order() -> None:
    game_values = tuple(range(len(rows.GAME_COLUMNS)))
    seat_values = (2, "Ann", "s3cret", None, False, SeatController.BOT, None, 41, "ann@example.org", "Europe/Paris", 0)
    row = (*game_values, *seat_values, True)
    game = rows.game_row(row)
    assert [getattr(game, name) for name in rows.GAME_COLUMNS] == list(game_values)
    assert game.changed == set()
    seat = rows.seat_row(row, len(rows.GAME_COLUMNS))
    assert seat == rows.SeatRow(
        2,
        "Ann",
        "s3cret",
        None,
        False,
        SeatController.BOT,
        None,
        rows.PlayerRow(41, "ann@example.org", "Europe/Paris", 0),
    )
    assert len(rows.SEAT_SELECTED) == len(seat_values)
    assert [c.name for c in rows.GAME_SELECTED] == list(rows.GAME_COLUMNS)
