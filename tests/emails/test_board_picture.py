"""emails.board_picture: a deterministic PNG of the board, coloured by owner."""

from __future__ import annotations

import io

from PIL import Image

from emails import board_picture
from emails.samples import BOARD


def picture(board: dict) -> Image.Image:
    return Image.open(io.BytesIO(board_picture.draw(board)))


def test_the_picture_is_a_small_png_of_the_announced_size() -> None:
    data = board_picture.draw(BOARD)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) < 40_000
    assert picture(BOARD).size == board_picture.size_of(BOARD)


def test_the_same_board_gives_the_same_bytes() -> None:
    assert board_picture.draw(BOARD) == board_picture.draw(dict(BOARD))


def test_a_picture_leaves_nothing_behind_for_the_next() -> None:
    # Cells are drawn once per process and pasted: drawing another board in between changes nothing.
    first = board_picture.draw(BOARD)
    other = dict(
        BOARD, you=0, regions=[dict(region, owner=0) if "owner" in region else region for region in BOARD["regions"]]
    )
    assert board_picture.draw(other) != first
    assert board_picture.draw(BOARD) == first


def test_regions_are_coloured_by_their_owner() -> None:
    image = picture(BOARD).convert("RGB")

    def centre_colour(region: int) -> tuple[int, int, int]:
        row, column = divmod(region, board_picture.COLUMNS)
        x = board_picture.MARGIN + column * (board_picture.CELL_W + board_picture.GAP) + 8
        y = board_picture.MARGIN + board_picture.TITLE_H + row * (board_picture.CELL_H + board_picture.GAP) + 22
        return image.getpixel((x, y))  # type: ignore[return-value]

    # Every fill is in the picture's palette: it comes out exact.
    assert centre_colour(1) == board_picture.seat_colour(0)  # Ann's Orcs
    assert centre_colour(14) == board_picture.seat_colour(1)  # Bob's Giants
    assert centre_colour(9) == board_picture._tint(board_picture.seat_colour(1), 0.55)  # In Decline Ratmen
    assert centre_colour(6) == board_picture.LOST_TRIBE
    assert centre_colour(0) == board_picture.WATER_FILL


def test_a_five_player_board_fits() -> None:
    board = {
        "players": [{"name": f"Player {i}", "active": "Elves (Flying)", "declined": []} for i in range(5)],
        "regions": [{"terrain": "hill", "owner": i % 5, "race": "Elves", "tokens": 2} for i in range(48)],
        "you": 2,
    }
    width, height = picture(board).size
    assert (width, height) == board_picture.size_of(board)
    assert width <= 700
