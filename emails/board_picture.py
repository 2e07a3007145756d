"""A small picture of the board for the "your turn" mail: a schematic, drawn with Pillow.

Regions are cells of a grid in region-number order (the numbers of the turn page's map), not the map's
geography: each cell shows the region's terrain as a band, its number, the tokens on it and whose they are,
coloured by owner. It is deterministic (the same board gives the same PNG bytes), needs no font files beyond
Pillow's own, and stays small (about 15-35 KB).

The input is plain data written into the mail's context by the service (``board`` below), so this module
knows nothing of the rules engine::

    {"players": [{"name": "Ann", "active": "Orcs", "declined": ["Ratmen"]}, ...],
     "regions": [{"terrain": "forest", "owner": 0, "race": "Orcs", "tokens": 3, "declined": false,
                  "marks": ["fortress"]}, {"terrain": "sea"}, ...],
     "you": 0, "turn": 3, "turns": 10}
"""

from __future__ import annotations

import functools
import io
from collections.abc import Mapping
from typing import Any

from PIL import Image, ImageDraw, ImageFont

COLUMNS = 8
CELL_W, CELL_H = 78, 62
GAP = 6
MARGIN = 12
TITLE_H = 26
LEGEND_ROW_H = 20
BAND_H = 13

BACKGROUND = (250, 247, 240)
INK = (43, 38, 31)
GREY_INK = (110, 104, 94)
WHITE = (255, 255, 255)
#: A region's outline, but for the reader's own (``INK``, thicker).
OUTLINE = (200, 190, 172)

#: Seat colours (Okabe–Ito palette: told apart with the common colour-vision deficiencies).
SEAT_COLOURS = [(230, 159, 0), (86, 180, 233), (0, 158, 115), (213, 94, 0), (204, 121, 167)]
LOST_TRIBE = (158, 158, 158)
#: How pale In Decline regions are: their seat colour mixed this much with white.
DECLINED_TINT = 0.55
TERRAIN_COLOURS = {
    "farmland": (233, 216, 166),
    "forest": (86, 130, 66),
    "hill": (181, 201, 154),
    "mountain": (128, 128, 128),
    "swamp": (120, 134, 98),
    "sea": (120, 170, 214),
    "lake": (150, 196, 232),
}
UNKNOWN_TERRAIN = (200, 200, 200)
WATER = {"sea", "lake"}
WATER_FILL = (214, 233, 248)
EMPTY_FILL = WHITE

#: Short letters for the markers a region may hold, explained in the legend.
MARK_LETTERS = {
    "lair": "L",
    "fortress": "F",
    "encampments": "E",
    "hole": "H",
    "hero": "He",
    "dragon": "D",
}


@functools.cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    # Pillow's bundled font: the same glyphs on every machine, so the same PNG bytes.
    return ImageFont.load_default(size=size)


@functools.lru_cache(maxsize=4096)
def _text_mask(text: str, size: int, anchor: str) -> tuple[Image.Image, int, int]:
    """The antialiased shape of ``text``, and where it sits from its anchor point. Cached: the same few
    hundred labels (numbers, terrains, races) come back in every picture a worker draws."""
    font = _font(size)
    left, top, right, bottom = font.getbbox(text, anchor=anchor)
    mask = Image.new("L", (max(1, int(right - left)), max(1, int(bottom - top))), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, font=font, fill=255, anchor=anchor)
    return mask, int(left), int(top)


def _text(
    image: Image.Image, at: tuple[int, int], text: str, size: int, fill: tuple[int, int, int], anchor: str = "la"
) -> None:
    mask, left, top = _text_mask(text, size, anchor)
    image.paste(fill, (at[0] + left, at[1] + top), mask)


def _mix(colour: tuple[int, int, int], other: tuple[int, int, int], amount: float) -> tuple[int, int, int]:
    """``colour`` mixed with ``other`` (``amount`` 0: unchanged, 1: ``other``)."""
    return tuple(round(c + (o - c) * amount) for c, o in zip(colour, other, strict=True))  # type: ignore[return-value]


def _tint(colour: tuple[int, int, int], amount: float) -> tuple[int, int, int]:
    """``colour`` mixed with white (``amount`` 0: unchanged, 1: white)."""
    return _mix(colour, WHITE, amount)


def _text_colour(fill: tuple[int, int, int]) -> tuple[int, int, int]:
    luminance = 0.299 * fill[0] + 0.587 * fill[1] + 0.114 * fill[2]
    return INK if luminance > 140 else WHITE


def seat_colour(seat: int) -> tuple[int, int, int]:
    return SEAT_COLOURS[seat % len(SEAT_COLOURS)]


def size_of(board: Mapping[str, Any]) -> tuple[int, int]:
    """Width and height in pixels of the picture of ``board``."""
    rows = -(-len(board["regions"]) // COLUMNS)
    width = MARGIN * 2 + COLUMNS * CELL_W + (COLUMNS - 1) * GAP
    legend_rows = len(board["players"]) + 1
    height = MARGIN * 2 + TITLE_H + rows * CELL_H + (rows - 1) * GAP + 10 + legend_rows * LEGEND_ROW_H
    return width, height


def draw(board: Mapping[str, Any]) -> bytes:
    """The PNG picture of ``board``."""
    width, height = size_of(board)
    image = Image.new("RGB", (width, height), BACKGROUND)
    you = board.get("you")
    title = "The board"
    if board.get("turn") and board.get("turns"):
        title += f" at game turn {board['turn']} of {board['turns']}"
    _text(image, (MARGIN, MARGIN), title, 16, INK)

    top = MARGIN + TITLE_H
    for number, region in enumerate(board["regions"]):
        row, column = divmod(number, COLUMNS)
        x = MARGIN + column * (CELL_W + GAP)
        y = top + row * (CELL_H + GAP)
        _draw_region(image, (x, y), number, region, you)

    rows = -(-len(board["regions"]) // COLUMNS)
    y = top + rows * CELL_H + (rows - 1) * GAP + 10
    _draw_legend(image, ImageDraw.Draw(image), (MARGIN, y), board)

    out = io.BytesIO()
    # A palette image (a third of the bytes of RGB), mapped to the fixed palette: a tenth of the time of
    # finding a palette for each picture. Compression level 3: as quick as level 1 and nearly as small as 6.
    image.quantize(palette=_palette(), dither=Image.Dither.NONE).save(out, format="PNG", compress_level=3)
    return out.getvalue()


def _draw_region(
    image: Image.Image, at: tuple[int, int], number: int, region: Mapping[str, Any], you: int | None
) -> None:
    x, y = at
    terrain = region.get("terrain", "")
    owner = region.get("owner")
    race = region.get("race")
    if owner is not None:
        fill = seat_colour(owner)
        if region.get("declined"):
            fill = _tint(fill, DECLINED_TINT)
    elif race:  # a Lost Tribe
        fill = LOST_TRIBE
    elif terrain in WATER:
        fill = WATER_FILL
    else:
        fill = EMPTY_FILL
    band = TERRAIN_COLOURS.get(terrain, UNKNOWN_TERRAIN)
    image.paste(_cell(fill, band, owner is not None and owner == you), at)
    _text(image, (x + 6, y + 2), f"{number} {terrain}", 11, _text_colour(band))

    ink = _text_colour(fill)
    tokens = region.get("tokens", 0)
    if tokens:
        _text(image, (x + CELL_W // 2, y + 33), str(tokens), 18, ink, anchor="mm")
    if race:
        name = race if len(race) <= 11 else race[:10] + "."
        _text(image, (x + CELL_W // 2, y + CELL_H - 10), name, 11, ink, anchor="mm")
    marks = [MARK_LETTERS[m] for m in region.get("marks", []) if m in MARK_LETTERS]
    if region.get("encampments", 0) > 1:
        marks = [f"E{region['encampments']}" if m == "E" else m for m in marks]
    if marks:
        _text(image, (x + CELL_W - 6, y + 24), " ".join(marks), 11, ink, anchor="ra")


@functools.lru_cache(maxsize=256)
def _cell(fill: tuple[int, int, int], band: tuple[int, int, int], yours: bool) -> Image.Image:
    """A region's cell without its texts: the owner's fill, the terrain's band, a thick outline on the
    reader's own regions. Cached: a few dozen of these make every board. Only ever pasted from, never
    drawn on, so no picture changes another."""
    tile = Image.new("RGB", (CELL_W, CELL_H), BACKGROUND)
    pen = ImageDraw.Draw(tile)
    outline, width = (INK, 3) if yours else (OUTLINE, 1)
    pen.rounded_rectangle((0, 0, CELL_W - 1, CELL_H - 1), radius=6, fill=fill, outline=outline, width=width)
    pen.rounded_rectangle((3, 3, CELL_W - 4, 3 + BAND_H), radius=3, fill=band)
    return tile


#: Blends kept in the palette between a text's colour and the colour under it, for the letters'
#: antialiased edges.
EDGE_STEPS = 7


@functools.cache
def _palette() -> Image.Image:
    """The one palette of every picture: each colour drawn, and the edge blends of each text colour on
    each colour a text is written on. Fills come out exact, and the letters as smooth as with a palette
    found per picture (closer to the drawing, measured)."""
    fills = [*SEAT_COLOURS, *(_tint(c, DECLINED_TINT) for c in SEAT_COLOURS), LOST_TRIBE, WATER_FILL, EMPTY_FILL]
    bands = [*TERRAIN_COLOURS.values(), UNKNOWN_TERRAIN]
    colours = [BACKGROUND, INK, GREY_INK, OUTLINE, *fills, *bands]
    for under in [BACKGROUND, *fills, *bands]:
        for ink in (INK, GREY_INK) if under == BACKGROUND else (_text_colour(under),):
            colours += [_mix(under, ink, step / (EDGE_STEPS + 1)) for step in range(1, EDGE_STEPS + 1)]
    colours = list(dict.fromkeys(colours))
    palette = Image.new("P", (1, 1))
    palette.putpalette([channel for colour in colours for channel in colour])
    return palette


def _draw_legend(image: Image.Image, pen: ImageDraw.ImageDraw, at: tuple[int, int], board: Mapping[str, Any]) -> None:
    x, y = at
    for seat, player in enumerate(board["players"]):
        colour = seat_colour(seat)
        pen.rectangle((x, y + 3, x + 12, y + 15), fill=colour)
        pen.rectangle((x + 16, y + 3, x + 28, y + 15), fill=_tint(colour, DECLINED_TINT))
        troops = []
        if player.get("active"):
            troops.append(player["active"])
        troops += [f"{race} (In Decline)" for race in player.get("declined", [])]
        label = player["name"] + (" (you)" if seat == board.get("you") else "")
        if troops:
            label += ": " + ", ".join(troops)
        _text(image, (x + 34, y + 3), label, 13, INK)
        y += LEGEND_ROW_H
    key = "Grey: Lost Tribe. Pale: In Decline. L Lair, F Fortress, E Encampment, H Hole, He Hero, D Dragon"
    _text(image, (x, y + 3), key, 12, GREY_INK)
