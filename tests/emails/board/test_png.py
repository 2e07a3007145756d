"""emails.board.png: the mail's picture of the board, a deterministic PNG of the pages' map, tokens coloured
by owner, made for a phone's column."""

from __future__ import annotations

import dataclasses
import doctest
import io
import struct
import zlib

import pytest
from PIL import Image, ImageChops

import rules
from emails.board import MAIL, board_scene, palette, png
from emails.board.public import PublicBoard
from emails.board.shapes import Group, Rect
from emails.samples import BOARD

SAMPLE = PublicBoard.from_mail(BOARD)


def picture(board: PublicBoard) -> Image.Image:
    return Image.open(io.BytesIO(png.picture(board)))


def test_the_picture_is_a_small_png_of_the_announced_size() -> None:
    data = png.picture(SAMPLE)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) < 40_000
    assert picture(SAMPLE).size == png.size_of(SAMPLE)


def test_the_same_board_gives_the_same_bytes() -> None:
    first = png.picture(SAMPLE)
    png.drawn.cache_clear()
    assert png.picture(PublicBoard.from_mail(dict(BOARD))) == first
    # Drawn again, not only taken from the cache.
    assert png.draw(SAMPLE).data == first


def test_a_picture_leaves_nothing_behind_for_the_next() -> None:
    # Pieces are drawn once per process and pasted: drawing another board in between changes nothing.
    first = png.draw(SAMPLE).data
    other = dict(
        BOARD, you=0, regions=[dict(region, owner=0) if "owner" in region else region for region in BOARD["regions"]]
    )
    assert png.draw(PublicBoard.from_mail(other)).data != first
    assert png.draw(SAMPLE).data == first


@pytest.mark.parametrize("board", rules.BOARD_NAMES)
def test_a_board_prepared_at_start_has_its_ground_and_palette_drawn_for_its_first_picture(board: str) -> None:
    # What a worker draws as it starts (png.prepare) is the costly part of a board's first picture: its ground
    # and palette are there (the blank picture's height follows the key's lines: a copy, well under a ms).
    # The bytes are the same.
    players = rules.load_board(board).players
    mail = {
        "players": [{"name": f"Player {i}", "active": "Ratmen", "declined": []} for i in range(players)],
        "regions": [{"terrain": r.terrain} for r in rules.load_board(board).regions],
        "you": 0,
    }
    mail["regions"][3] |= {"owner": 1, "race": "Ratmen", "tokens": 4}
    public = PublicBoard.from_mail(mail)
    expected = png.draw(public).data
    drawn_once = (png._ground, png._palette)
    # As in a new worker: nothing drawn yet (a specimen drawn by an earlier test in this process, such as a
    # worker's start in tests/worker, keeps its blank, made of both, and prepare would then draw neither).
    for cached in (*drawn_once, png._blank):
        cached.cache_clear()

    png.prepare([board])
    misses = [cached.cache_info().misses for cached in drawn_once]
    assert misses == [1, 1]
    assert png.draw(public).data == expected
    assert [cached.cache_info().misses for cached in drawn_once] == misses


def badge_point(board: PublicBoard, region: int) -> tuple[int, int]:
    """A pixel inside the badge of the region's token chip, above its number."""
    scene = board_scene(board, style=MAIL)
    k = png.WIDTH / scene.box[2]
    labels = scene.labels[region]
    chip_row = next(
        row
        for row in labels.items
        if isinstance(row, Group) and any(isinstance(i, Group) and i.cls.startswith("chip") for i in row.items)
    )
    assert isinstance(chip_row, Group)
    x = labels.x + (chip_row.x + 13) * labels.scale
    y = labels.y + (chip_row.y + 6) * labels.scale
    return round((x - scene.box[0]) * k), round((y - scene.box[1]) * k)


def test_tokens_are_coloured_by_their_owner() -> None:
    image = picture(SAMPLE).convert("RGB")

    def colour(region: int) -> tuple[int, int, int]:
        return image.getpixel(badge_point(SAMPLE, region))  # type: ignore[return-value]

    # Every fill is in the picture's palette: it comes out exact.
    assert colour(1) == palette.rgb(palette.seat_colour(0))  # Ann's Orcs
    assert colour(14) == palette.rgb(palette.seat_colour(1))  # Bob's Giants
    assert colour(9) == palette.rgb(palette.seat_colour(1))  # Bob's In Decline Ratmen: his badge…
    assert colour(6) == palette.rgb(palette.LOST_TRIBE)
    # … on stripes.
    x, y = badge_point(SAMPLE, 9)
    chip = {image.getpixel((x + dx, y + 14)) for dx in range(14, 40)}
    assert palette.rgb(palette.DECLINE_LIGHT) in chip and palette.rgb(palette.DECLINE_DARK) in chip


def test_the_picture_shows_the_map_with_its_terrains() -> None:
    colours = {colour for _count, colour in picture(SAMPLE).convert("RGB").getcolors(256) or []}
    for terrain in {region.terrain for region in rules.load_board("2-players").regions}:
        assert palette.rgb(palette.TERRAIN[terrain][0]) in colours, terrain


def test_a_five_player_board_fits() -> None:
    board = {
        "players": [{"name": f"Player {i}", "active": "Flying Elves", "declined": []} for i in range(5)],
        "regions": [{"terrain": "hill", "owner": i % 5, "race": "Elves", "tokens": 2} for i in range(48)],
        "you": 2,
    }
    public = PublicBoard.from_mail(board)
    width, height = picture(public).size
    assert (width, height) == png.size_of(public)
    assert width <= 600


@pytest.mark.parametrize("board", rules.BOARD_NAMES)
def test_labels_are_readable_on_a_phone(board: str) -> None:
    """Drawn as wide as a mail's picture (480 px): every region's number is at least 11 px high, token counts
    larger."""
    state = rules.new_game(int(board[0]), seed="phone").to_json()
    state["regions"] = [dict(r, owner=0, race="Elves", tokens=12) for r in state["regions"]]
    scene = board_scene(PublicBoard.from_state(state), style=MAIL)
    k = png.WIDTH / scene.box[2]
    assert png.size_of(PublicBoard.from_state(state))[0] == png.WIDTH
    for labels in scene.labels:
        texts = [(t, labels.scale) for row in labels.items if isinstance(row, Group) for t in _texts(row)]
        number = next(t for t, _ in texts if t.cls == "region-number")
        assert number.size * labels.scale * k >= 11
        count = next(t for t, _ in texts if t.cls == "count")
        assert count.size * labels.scale * k >= 14


def _texts(group: Group) -> list:
    out = []
    for item in group.items:
        if isinstance(item, Group):
            out += _texts(item)
        elif not isinstance(item, Rect) and getattr(item, "text", None):
            out.append(item)
    return out


def test_the_picture_is_drawn_once_per_game_state() -> None:
    png.drawn.cache_clear()
    for you in (0, 1):  # one picture for every reader: it shows nothing of theirs
        png.picture(PublicBoard.from_mail(dict(BOARD, you=you)))
    assert png.drawn.cache_info().misses == 1
    assert png.drawn.cache_info().hits == 1


def test_coins_cannot_reach_the_picture() -> None:
    state = rules.new_game(3, seed="coins")
    rich = state.to_json()
    for player, coins in zip(rich["players"], (7, 99, 1234), strict=True):
        player["coins"] = coins
    assert PublicBoard.from_state(rich) == PublicBoard.from_state(rules.player_view(state, None))
    assert "coins" not in {f.name for cls in (PublicBoard,) for f in dataclasses.fields(cls)}


def test_a_change_on_one_region_changes_only_the_picture_around_its_labels() -> None:
    emptied = dict(BOARD, regions=[{"terrain": r["terrain"]} if n == 13 else r for n, r in enumerate(BOARD["regions"])])
    before, after = picture(SAMPLE).convert("RGB"), picture(PublicBoard.from_mail(emptied)).convert("RGB")
    changed = ImageChops.difference(before, after).getbbox()
    assert changed is not None
    scene = board_scene(SAMPLE, style=MAIL)
    k = png.WIDTH / scene.box[2]
    labels = scene.labels[13]
    x, y = (labels.x - scene.box[0]) * k, (labels.y - scene.box[1]) * k
    # The stack of labels is at most 100 units high and wide around its point, at its scale.
    reach = 50 * labels.scale * k
    left, top, right, bottom = changed
    assert x - reach <= left and right <= x + reach and y - reach <= top and bottom <= y + reach


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """The chunks of a PNG file, each checked against its CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        assert struct.unpack(">I", data[at + 8 + length : at + 12 + length])[0] == zlib.crc32(kind + body), kind
        out.append((kind, body))
        at += 12 + length
    return out


@pytest.mark.parametrize("board", rules.BOARD_NAMES)
def test_the_file_is_a_valid_png_compressed_in_one_stream(board: str) -> None:
    state = rules.new_game(int(board[0]), seed="bands").to_json()
    public = PublicBoard.from_state(state)
    data = png.draw(public).data
    found = chunks(data)
    assert [kind for kind, _ in found] == [b"IHDR", b"PLTE", b"IDAT", b"IEND"]
    width, height, depth, colour_type = struct.unpack(">IIBB", found[0][1][:10])
    assert (width, height, depth, colour_type) == (*png.size_of(public), 8, 3)
    rows = zlib.decompress(found[2][1])  # checks the Adler-32
    assert len(rows) == height * (width + 1)
    assert all(rows[y * (width + 1)] == 0 for y in range(height))
    image = Image.open(io.BytesIO(data))
    image.load()
    assert image.size == (width, height)


def test_the_doctests() -> None:
    from emails.board import geometry, shapes

    for module in (png, shapes, geometry):
        assert doctest.testmod(module).failed == 0, module.__name__
