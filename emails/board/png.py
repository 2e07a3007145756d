"""The mails' back-end of the board's drawing: a :class:`~emails.board.scene.Scene` painted as a PNG.

The picture is the pages' map (same shapes, colours, badges and markers: :mod:`emails.board.scene` decides
them), drawn for a mail (:data:`~emails.board.scene.MAIL`): labels larger for a phone, terrains in flat colours
and no key (the mail's words name the seats), :data:`WIDTH` pixels wide, in :data:`COLOURS` colours: a mail
weighs at most 30 KB with it (ARCHITECTURE §6). It holds only public things (a :class:`PublicBoard` has no
coins), so one picture serves every reader of a game state: :func:`drawn` is cached per state.

Pillow draws without antialiasing, so each label is drawn :data:`SUPERSAMPLE` times larger and reduced (the
ground's outlines are not: :data:`GROUND_SUPERSAMPLE`). What repeats is drawn once per process: the board's
ground (regions, outlines, frame, links), each label row (a number, a token chip, a row of markers: the same
chip serves every region) and each region's labels as a piece mapped onto the board's palette. A picture is a
copy of its ground with a few dozen pieces pasted on it, written as a PNG (:func:`_png`). One fixed palette per
board keeps fills exact and the bytes the same for the same state; text is Pillow's own bundled font, the same
on every machine.
"""

from __future__ import annotations

import functools
import math
import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from PIL import Image, ImageDraw, ImageFont

import rules

from . import palette
from .geometry import geometry
from .public import PublicBoard, RegionView, SeatView, Troops
from .scene import MAIL, Scene, board_scene
from .shapes import Ellipse, Group, Polygon, Rect, Shape, Symbol, Text, dashes, rounded_rect
from .symbols import PATTERNS, SYMBOLS

#: The picture's width in pixels (``scene.MAIL`` draws its labels for it).
WIDTH = 480
SUPERSAMPLE = 2
#: The ground (terrains, outlines, frame) is drawn without antialiasing: the outlines' soft edges were a third
#: of the picture's bytes, and a one-pixel line between two flat colours reads as well without them.
GROUND_SUPERSAMPLE = 1
#: The palette's colours: the drawing's exact colours, and enough more for the labels' antialiased edges. Fewer
#: colours compress better (the picture was 256: a quarter more bytes for edges nobody sees).
COLOURS = 32

Colour = tuple[int, int, int]


@dataclass(frozen=True)
class Picture:
    data: bytes
    width: int
    height: int


def picture(public: PublicBoard) -> bytes:
    """The PNG picture of ``public`` (drawn once per game state: every reader gets the same picture)."""
    return drawn(public).data


def size_of(public: PublicBoard) -> tuple[int, int]:
    """Width and height in pixels of the picture of ``public``."""
    found = drawn(public)
    return found.width, found.height


def draw(public: PublicBoard) -> Picture:
    """The picture of ``public``, drawn anew."""
    image = _paint(public)
    return Picture(_png(image), *image.size)


#: :func:`draw`, once per game state (the last few dozen).
drawn = functools.lru_cache(maxsize=64)(draw)


def _paint(public: PublicBoard) -> Image.Image:
    """The picture as a palette image: the board's ground, then each region's labels and each line of the
    key, pasted from pieces drawn and mapped onto the palette once."""
    scene = board_scene(public, style=MAIL)
    canvas = _blank(public.board, _size(scene)).copy()
    for piece, (x, y) in _pieces(scene):
        sprite, mask, x0, y0 = _piece(piece, public.board)
        canvas.paste(sprite, (x + x0, y + y0), mask)
    return canvas


#: A piece of a picture: a region's labels or a line of the key (placed at the origin), pixels per unit, and
#: the colour it lies on (its region's terrain, or the paper), which its antialiased edges fade into.
Piece = tuple[Group, float, str]


def _pieces(scene: Scene) -> Iterator[tuple[Piece, tuple[int, int]]]:
    """Each piece of ``scene``, and where its origin lies in the picture."""
    k = _scale(scene)
    dx, dy = -scene.box[0] * k, -scene.box[1] * k
    placed: list[tuple[Group, str]] = []
    for area, labels in zip(scene.areas, scene.labels, strict=True):
        fill = area.outline.fill or ""
        placed.append((labels, PATTERNS[fill[8:]].background if fill.startswith("pattern:") else fill or palette.PAPER))
    placed += [(line, palette.PAPER) for line in scene.key if isinstance(line, Group)]
    for group, under in placed:
        yield (_at_origin(group), round(k, 4), under), (round(dx + group.x * k), round(dy + group.y * k))


@functools.lru_cache(maxsize=1024)
def _at_origin(group: Group) -> Group:
    """``group`` moved to the origin: one object for equal groups, so that looking a piece up is quick."""
    return replace(group, x=0, y=0)


@functools.lru_cache(maxsize=1024)
def _piece(piece: Piece, board: str) -> tuple[Image.Image, Image.Image, int, int]:
    """The piece on the board's palette, the mask of what it covers, and its corner from its origin. Kept:
    from one step to the next, most regions show the same."""
    flat, mask, x0, y0 = _flat(piece)
    return flat.quantize(palette=_palette(board), dither=Image.Dither.NONE), mask, x0, y0


def _flat(piece: Piece) -> tuple[Image.Image, Image.Image, int, int]:
    """The piece drawn opaque over its colour, the mask of what it covers, and its corner from its origin."""
    group, k, under = piece
    sprite, x0, y0 = _labels_sprite(group, k) if group.cls == "region-labels" else _sprite((group,), k)
    flat = Image.new("RGB", sprite.size, palette.rgb(under))
    flat.paste(sprite, (0, 0), sprite)
    return flat, sprite.getchannel("A").point(lambda alpha: 255 if alpha else 0, "1"), x0, y0


@functools.lru_cache(maxsize=16)
def _blank(board: str, size: tuple[int, int]) -> Image.Image:
    """The picture before its pieces: paper, and the board's ground at the top."""
    image = Image.new("P", size, _exact_colours().index(palette.rgb(palette.PAPER)))
    image.putpalette(_palette(board).getpalette() or [])
    image.paste(_ground(board).quantize(palette=_palette(board), dither=Image.Dither.NONE))
    return image


def _scale(scene: Scene) -> float:
    return WIDTH / scene.box[2]


def _size(scene: Scene) -> tuple[int, int]:
    return WIDTH, math.ceil(scene.box[3] * _scale(scene))


# -- the PNG file -------------------------------------------------------------------------------------------
#: zlib's level: 7 to 9 save 1 to 4 % more at 1.5 to 10 times the time (145 ms for a five-player board at 9).
LEVEL = 6


def _png(image: Image.Image) -> bytes:
    """``image`` (a palette image) as a PNG file: each row after its filter type (0, none: the best for a
    palette image), compressed in one stream. It was compressed band by band, each band kept to be reused by
    the next picture; the bands' joins cost a sixth of the file, and the picture is drawn once per game state.
    The bytes depend on the picture only."""
    width, height = image.size
    raw = image.tobytes()
    data = b"".join(b"\0" + raw[i : i + width] for i in range(0, len(raw), width))
    colours = bytes((image.getpalette() or [])[: 3 * COLOURS])
    header = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)  # 8 bits, palette colour, no interlace
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"PLTE", colours)
        + _chunk(b"IDAT", zlib.compress(data, LEVEL))
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


# -- the parts drawn once ---------------------------------------------------------------------------------
@functools.cache
def _ground(board: str) -> Image.Image:
    """The board without what lies on it: regions filled with their terrain, outlines, frame, links."""
    scene = board_scene(PublicBoard(board, tuple(RegionView() for _ in geometry(board).regions), ()), style=MAIL)
    x, y, width, height = scene.box
    s = WIDTH / width * GROUND_SUPERSAMPLE
    image = Image.new("RGBA", (WIDTH * GROUND_SUPERSAMPLE, math.ceil(height * WIDTH / width) * GROUND_SUPERSAMPLE))
    image.paste(palette.rgb(palette.PAPER), (0, 0, *image.size))
    pen = _Pen(image)
    shapes: list[Shape] = [area.outline for area in scene.areas]
    shapes += [scene.frame, *(line for link in scene.links for line in link.lines)]
    for shape in shapes:
        pen.draw(shape, s, -x * s, -y * s)
    return image.reduce(GROUND_SUPERSAMPLE).convert("RGB")


@functools.lru_cache(maxsize=512)
def _sprite(items: tuple[Shape, ...], scale: float) -> tuple[Image.Image, int, int]:
    """``items`` drawn at ``scale`` pixels per unit on a transparent sprite, and where the sprite's corner
    lies from the items' origin. Cached: the same chips and markers come back in every picture."""
    left, top, right, bottom = _bounds(items)
    s = scale * SUPERSAMPLE
    x0, y0 = math.floor(left * scale) - 1, math.floor(top * scale) - 1
    width, height = math.ceil(right * scale) - x0 + 2, math.ceil(bottom * scale) - y0 + 2
    image = Image.new("RGBA", (width * SUPERSAMPLE, height * SUPERSAMPLE), (0, 0, 0, 0))
    pen = _Pen(image)
    for item in items:
        pen.draw(item, s, -x0 * SUPERSAMPLE, -y0 * SUPERSAMPLE)
    # Reduced with premultiplied alpha, so that edges fade out instead of darkening.
    return image.convert("RGBa").reduce(SUPERSAMPLE).convert("RGBA"), x0, y0


def _labels_sprite(labels: Group, k: float) -> tuple[Image.Image, int, int]:
    """A region's labels as one sprite, put together from its rows' sprites (a number, a token chip, a row
    of markers), each drawn once for every region that shows it."""
    scale = k * labels.scale
    placed = []
    for row in labels.items:
        assert isinstance(row, Group)
        sprite, x0, y0 = _sprite((replace(row, x=0, y=0),), round(scale, 4))
        placed.append((sprite, round(row.x * scale) + x0, round(row.y * scale) + y0))
    left, top = min(x for _, x, _ in placed), min(y for _, _, y in placed)
    right, bottom = max(x + s.width for s, x, _ in placed), max(y + s.height for s, _, y in placed)
    out = Image.new("RGBA", (right - left, bottom - top))
    for sprite, x, y in placed:
        out.alpha_composite(sprite, (x - left, y - top))
    return out, left, top


def prepare(boards: Iterable[str] = rules.BOARD_NAMES) -> None:
    """Draw now what the pictures of ``boards`` are made from: each board's ground and palette, the picture
    before its pieces, and the label pieces of a specimen that shows every kind of label. A mail worker does
    this as it starts (``worker/tasks/mail.py``); otherwise the first picture of each board that a process
    draws pays for it (about a tenth of a second a board), in the middle of a drain."""
    for board in boards:
        draw(_specimen(board))


def _specimen(board: str) -> PublicBoard:
    """A board with every kind of label on it: every seat's chips, Active and In Decline, the Lost Tribe's,
    every marker and every digit."""
    regions = geometry(board).regions
    players = rules.load_board(board).players
    views = []
    for n, _region in enumerate(regions):
        owner = n % (players + 1)
        troops = Troops("Elves", n % 10 + 1, owner if owner < players else None, declined=n % 3 == 0)
        markers = (("mountain", "lair", "fortress", "hole", "hero", "dragon")[n % 6],)
        views.append(RegionView(troops, markers, n % 3))
    seats = tuple(SeatView(f"Player {n + 1}", "Flying Elves", ("Ratmen",)) for n in range(players))
    return PublicBoard(board, tuple(views), seats)


@functools.cache
def _palette(board: str) -> Image.Image:
    """The one palette of every picture of ``board``: the exact colours of the drawing (a fill comes out as it
    is), then the colours of a specimen picture (the board and every kind of label on it), for the edges."""
    scene = board_scene(_specimen(board), style=MAIL)
    specimen = Image.new("RGB", _size(scene), palette.rgb(palette.PAPER))
    specimen.paste(_ground(board))
    for piece, (x, y) in _pieces(scene):
        rgb, mask, x0, y0 = _flat(piece)
        specimen.paste(rgb, (x + x0, y + y0), mask)
    exact = _exact_colours()
    found = specimen.quantize(colors=COLOURS - len(exact), method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    found_palette = found.getpalette() or []
    colours = [c for colour in exact for c in colour] + found_palette[: 3 * (COLOURS - len(exact))]
    image = Image.new("P", (1, 1))
    image.putpalette(colours)
    return image


def _exact_colours() -> list[Colour]:
    named = [
        *palette.SEATS,
        *palette.SEAT_TEXT,
        palette.LOST_TRIBE,
        palette.LOST_TRIBE_EDGE,
        palette.INK,
        palette.FRAME,
        palette.PAPER,
        palette.DARK,
        palette.WATER_INK,
        palette.DECLINE_LIGHT,
        palette.DECLINE_DARK,
        palette.DECLINE_EDGE,
        *(fill for fill, _ink, _name in palette.TERRAIN.values()),
        *(ink for _fill, ink, _name in palette.TERRAIN.values()),
    ]
    return list(dict.fromkeys(palette.rgb(c) for c in named))


# -- drawing shapes with Pillow ---------------------------------------------------------------------------
class _Pen:
    """Draws shapes on an image at a scale (pixels per unit) and an offset (pixels)."""

    def __init__(self, image: Image.Image) -> None:
        self.image = image
        self.draw_on = ImageDraw.Draw(image)

    def draw(self, shape: Shape, s: float, dx: float, dy: float) -> None:
        if isinstance(shape, Group):
            for item in shape.items:
                self.draw(item, s * shape.scale, dx + shape.x * s, dy + shape.y * s)
        elif isinstance(shape, Symbol):
            size = shape.size / 20
            for item in SYMBOLS[shape.name]:
                self.draw(item, s * size, dx + shape.x * s, dy + shape.y * s)
        elif isinstance(shape, Polygon):
            points = [(dx + x * s, dy + y * s) for x, y in shape.points]
            if shape.fill:
                self._fill(shape.fill, points, s)
            if shape.stroke:
                self._lines(points, shape.stroke.colour, shape.stroke.width * s, shape.stroke.dash, s, shape.closed)
        elif isinstance(shape, Ellipse):
            self._ellipse(shape, s, dx, dy)
        elif isinstance(shape, Rect):
            self._rect(shape, s, dx, dy)
        else:
            self._text(shape, s, dx, dy)

    def _fill(self, fill: str, points: list[tuple[float, float]], s: float) -> None:
        if not fill.startswith("pattern:"):
            self.draw_on.polygon(points, fill=palette.rgb(fill))
            return
        left, top = (math.floor(min(c)) for c in zip(*points, strict=True))
        right, bottom = (math.ceil(max(c)) + 1 for c in zip(*points, strict=True))
        mask = Image.new("L", (right - left, bottom - top), 0)
        ImageDraw.Draw(mask).polygon([(x - left, y - top) for x, y in points], fill=255)
        self.image.paste(_tiled(fill[8:], round(s / SUPERSAMPLE, 4), mask.size, left, top), (left, top), mask)

    def _lines(
        self,
        points: list[tuple[float, float]],
        colour: str,
        width: float,
        dash: tuple[float, ...],
        s: float,
        closed: bool,
    ) -> None:
        pieces: Iterable[tuple[tuple[float, float], ...]]
        if dash:
            pieces = dashes(tuple(points), tuple(d * s for d in dash), closed)
        else:
            pieces = [tuple(points) + ((points[0], points[1]) if closed and len(points) > 2 else ())]
        pixels = max(1, round(width))
        for piece in pieces:
            self.draw_on.line(piece, fill=palette.rgb(colour), width=pixels, joint="curve")
            # Round caps, as the SVG's.
            if not closed or dash:
                for x, y in (piece[0], piece[-1]):
                    r = pixels / 2
                    self.draw_on.ellipse((x - r, y - r, x + r, y + r), fill=palette.rgb(colour))

    def _ellipse(self, shape: Ellipse, s: float, dx: float, dy: float) -> None:
        cx, cy, rx, ry = dx + shape.cx * s, dy + shape.cy * s, shape.rx * s, shape.ry * s
        half = shape.stroke.width * s / 2 if shape.stroke else 0
        if shape.stroke:
            colour = palette.rgb(shape.stroke.colour)
            box = (cx - rx - half, cy - ry - half, cx + rx + half, cy + ry + half)
            if shape.fill:
                self.draw_on.ellipse(box, fill=colour)
            else:
                self.draw_on.ellipse(box, outline=colour, width=max(1, round(2 * half)))
        if shape.fill:
            self.draw_on.ellipse(
                (cx - rx + half, cy - ry + half, cx + rx - half, cy + ry - half), fill=palette.rgb(shape.fill)
            )

    def _rect(self, shape: Rect, s: float, dx: float, dy: float) -> None:
        x, y, w, h, r = dx + shape.x * s, dy + shape.y * s, shape.width * s, shape.height * s, shape.radius * s
        stroke = shape.stroke
        half = stroke.width * s / 2 if stroke else 0
        if stroke and not stroke.dash:
            box = (x - half, y - half, x + w + half, y + h + half)
            colour = palette.rgb(stroke.colour)
            if shape.fill:
                self.draw_on.rounded_rectangle(box, radius=r + half, fill=colour)
            else:
                self.draw_on.rounded_rectangle(box, radius=r + half, outline=colour, width=max(1, round(2 * half)))
            inner = half
        else:
            inner = 0
        if shape.fill:
            box = (x + inner, y + inner, x + w - inner, y + h - inner)
            radius = max(0.0, r - inner)
            if shape.fill.startswith("pattern:"):
                outline = rounded_rect(box[0], box[1], box[2] - box[0], box[3] - box[1], radius)
                self._fill(shape.fill, list(outline), s)
            else:
                self.draw_on.rounded_rectangle(box, radius=radius, fill=palette.rgb(shape.fill))
        if stroke and stroke.dash:
            outline = rounded_rect(x, y, w, h, r)
            self._lines(list(outline), stroke.colour, stroke.width * s, stroke.dash, s, closed=True)

    def _text(self, shape: Text, s: float, dx: float, dy: float) -> None:
        size = max(1, round(shape.size * s))
        anchor = {"start": "ls", "middle": "ms", "end": "rs"}[shape.anchor]
        # The bundled font has one weight: bold is drawn with a thin outline of the same colour.
        bold = round(size * (0.06 if shape.weight >= 700 else 0.035 if shape.weight >= 600 else 0))
        colour = palette.rgb(shape.fill)
        self.draw_on.text(
            (dx + shape.x * s, dy + shape.y * s),
            shape.text,
            fill=colour,
            font=_font(size),
            anchor=anchor,
            stroke_width=bold,
            stroke_fill=colour,
        )


@functools.cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


@functools.lru_cache(maxsize=64)
def _tile(name: str, scale: float) -> Image.Image:
    """One tile of a pattern, drawn at the picture's own scale (``scale`` pixels per unit) and enlarged for
    the supersampled drawing: its lines stay crisp, a few flat colours, which the PNG compresses well."""
    pattern = PATTERNS[name]
    size = max(1, round(pattern.size * scale))
    tile = Image.new("RGBA", (size, size), (*palette.rgb(pattern.background), 255))
    pen = _Pen(tile)
    for item in pattern.items:
        pen.draw(item, size / pattern.size, 0, 0)
    return tile.resize((size * SUPERSAMPLE, size * SUPERSAMPLE), Image.Resampling.NEAREST)


def _tiled(name: str, scale: float, size: tuple[int, int], left: int, top: int) -> Image.Image:
    """The pattern over a box whose corner is at (``left``, ``top``) of the image, aligned on the image."""
    tile = _tile(name, scale)
    t = tile.width
    x0, y0 = left - left % t, top - top % t
    out = Image.new("RGBA", (size[0] + t, size[1] + t))
    for x in range(0, out.width, t):
        for y in range(0, out.height, t):
            out.paste(tile, (x, y))
    return out.crop((left - x0, top - y0, left - x0 + size[0], top - y0 + size[1]))


def _bounds(items: Iterable[Shape], s: float = 1, dx: float = 0, dy: float = 0) -> tuple[float, float, float, float]:
    """A box around ``items`` (generous for texts, whose exact size only the font knows)."""
    boxes = []
    for shape in items:
        if isinstance(shape, Group):
            boxes.append(_bounds(shape.items, s * shape.scale, dx + shape.x * s, dy + shape.y * s))
            continue
        if isinstance(shape, Symbol):
            x, y, w, h, pad = shape.x, shape.y, shape.size, shape.size, 1.0
        elif isinstance(shape, Polygon):
            xs, ys = [p[0] for p in shape.points], [p[1] for p in shape.points]
            x, y, w, h = min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)
            pad = shape.stroke.width if shape.stroke else 0
        elif isinstance(shape, Ellipse):
            x, y, w, h = shape.cx - shape.rx, shape.cy - shape.ry, 2 * shape.rx, 2 * shape.ry
            pad = shape.stroke.width if shape.stroke else 0
        elif isinstance(shape, Rect):
            x, y, w, h = shape.x, shape.y, shape.width, shape.height
            pad = shape.stroke.width if shape.stroke else 0
        else:
            w = 0.62 * shape.size * len(shape.text) + shape.size * 0.3
            x = shape.x - {"start": 0, "middle": w / 2, "end": w}[shape.anchor]
            y, h, pad = shape.y - shape.size, shape.size * 1.3, shape.size * 0.2
        boxes.append((dx + (x - pad) * s, dy + (y - pad) * s, dx + (x + w + pad) * s, dy + (y + h + pad) * s))
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )
