"""The mails' back-end of the board's drawing: a :class:`~emails.board.scene.Scene` painted as a PNG.

The picture is the pages' map (same shapes, colours, textures, badges and markers: :mod:`emails.board.scene`
decides them), with labels drawn larger for a phone (:data:`~emails.board.scene.MAIL`) and a key under the
map naming the seats, :data:`WIDTH` pixels wide. It holds only public things (a :class:`PublicBoard` has no
coins), so one picture serves every reader of a game state: :func:`picture` is cached per state.

Pillow draws without antialiasing, so each piece is drawn :data:`SUPERSAMPLE` times larger and reduced. The
pieces that repeat are drawn once per process and pasted: the board's regions, frame and links (per board)
and each label row (a number, a token chip, a row of markers) as a small transparent sprite. A picture is
then a copy of its board, a few dozen pastes, and a mapping onto one fixed palette per board (the same state
gives the same bytes, and a palette image is a third of the size of a true-colour one). Text is Pillow's own
bundled font, so the glyphs are the same on every machine.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Iterable
from dataclasses import replace

from PIL import Image, ImageDraw, ImageFont

import rules

from . import palette
from .geometry import geometry
from .public import PublicBoard, RegionView, SeatView, Troops
from .scene import MAIL, Scene, board_scene
from .shapes import Ellipse, Group, Polygon, Rect, Shape, Symbol, Text, dashes, rounded_rect
from .symbols import PATTERNS, SYMBOLS

#: The picture's width in pixels: a mail's column on a phone is 320 to 600 px wide.
WIDTH = 600
SUPERSAMPLE = 3

Colour = tuple[int, int, int]


@functools.lru_cache(maxsize=64)
def picture(public: PublicBoard) -> bytes:
    """The PNG picture of ``public`` (cached: every reader of a game state gets the same picture)."""
    out = io.BytesIO()
    # Compression level 5: a tenth smaller than level 3 for a millisecond more (measured).
    image = _paint(public).quantize(palette=_palette(public.board), dither=Image.Dither.NONE)
    image.save(out, format="PNG", compress_level=5)
    return out.getvalue()


def _paint(public: PublicBoard) -> Image.Image:
    scene = board_scene(public, style=MAIL)
    canvas = Image.new("RGB", _size(scene), palette.rgb(palette.PAPER))
    canvas.paste(_ground(public.board))
    k = _scale(scene)
    for group in (*scene.labels, *scene.key):
        assert isinstance(group, Group)
        _paste(canvas, group, k, -scene.box[0] * k, -scene.box[1] * k)
    return canvas


def size_of(public: PublicBoard) -> tuple[int, int]:
    """Width and height in pixels of the picture of ``public``."""
    return _size(board_scene(public, style=MAIL))


def _scale(scene: Scene) -> float:
    return WIDTH / scene.box[2]


def _size(scene: Scene) -> tuple[int, int]:
    return WIDTH, math.ceil(scene.box[3] * _scale(scene))


# -- the parts drawn once ---------------------------------------------------------------------------------
@functools.cache
def _ground(board: str) -> Image.Image:
    """The board without what lies on it: regions filled with their terrain, outlines, frame, links."""
    scene = board_scene(PublicBoard(board, tuple(RegionView() for _ in geometry(board).regions), ()))
    x, y, width, height = scene.box
    s = WIDTH / width * SUPERSAMPLE
    image = Image.new("RGBA", (WIDTH * SUPERSAMPLE, math.ceil(height * WIDTH / width) * SUPERSAMPLE))
    image.paste(palette.rgb(palette.PAPER), (0, 0, *image.size))
    pen = _Pen(image)
    shapes: list[Shape] = [area.outline for area in scene.areas]
    shapes += [scene.frame, *(line for link in scene.links for line in link.lines)]
    for shape in shapes:
        pen.draw(shape, s, -x * s, -y * s)
    return image.reduce(SUPERSAMPLE).convert("RGB")


@functools.lru_cache(maxsize=4096)
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


def _paste(canvas: Image.Image, group: Group, scale: float, dx: float, dy: float) -> None:
    """Paste ``group`` (a region's labels, a line of the key) as one sprite."""
    sprite, x0, y0 = _sprite((replace(group, x=0, y=0),), round(scale, 4))
    canvas.paste(sprite, (round(dx + group.x * scale) + x0, round(dy + group.y * scale) + y0), sprite)


@functools.cache
def _palette(board: str) -> Image.Image:
    """The one palette of every picture of ``board``: the exact colours of the drawing (a fill comes out as it
    is), then the colours of a specimen picture (the board and every kind of label on it), for the edges."""
    regions = geometry(board).regions
    players = rules.load_board(board).players
    # Every seat's chips, Active and In Decline, the Lost Tribe's, every marker and every digit.
    views = []
    for n, _region in enumerate(regions):
        owner = n % (players + 1)
        troops = Troops("Elves", n % 10 + 1, owner if owner < players else None, declined=n % 3 == 0)
        markers = (("mountain", "lair", "fortress", "hole", "hero", "dragon")[n % 6],)
        views.append(RegionView(troops, markers, n % 3))
    seats = tuple(SeatView(f"Player {n + 1}", "Elves (Flying)", ("Ratmen",)) for n in range(players))
    specimen = _paint(PublicBoard(board, tuple(views), seats))
    exact = _exact_colours()
    found = specimen.quantize(colors=256 - len(exact), method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    found_palette = found.getpalette() or []
    colours = [c for colour in exact for c in colour] + found_palette[: 3 * (256 - len(exact))]
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
