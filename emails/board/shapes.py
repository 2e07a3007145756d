"""The vocabulary of the drawing: a few immutable shapes that both back-ends know how to draw.

Coordinates are in the board's user units (the frame is 1000 × 690); a :class:`Group` moves and scales
what it holds. A fill is a colour (``"#RRGGBB"``) or a pattern of :data:`emails.board.symbols.PATTERNS`
(``"pattern:forest"``); curves are given as points (:func:`quadratic`, :func:`arc`), so a back-end only
has to draw polygons, ellipses, rounded rectangles and text. Shapes are values: equal shapes draw the same,
which lets the picture back-end draw a repeated piece (a token chip, a marker) once and reuse it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Stroke:
    colour: str
    width: float
    #: Dash and gap lengths; empty for a solid line.
    dash: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class Polygon:
    points: tuple[Point, ...]
    fill: str | None = None
    stroke: Stroke | None = None
    #: False for an open line through the points.
    closed: bool = True
    cls: str = ""


@dataclass(frozen=True, slots=True)
class Ellipse:
    cx: float
    cy: float
    rx: float
    ry: float
    fill: str | None = None
    stroke: Stroke | None = None


@dataclass(frozen=True, slots=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    radius: float = 0
    fill: str | None = None
    stroke: Stroke | None = None
    cls: str = ""


@dataclass(frozen=True, slots=True)
class Text:
    """A line of text; ``y`` is its baseline; ``anchor`` is ``start``, ``middle`` or ``end``."""

    x: float
    y: float
    text: str
    size: float
    fill: str
    weight: int = 400
    italic: bool = False
    anchor: str = "start"
    cls: str = ""


@dataclass(frozen=True, slots=True)
class Symbol:
    """One of :data:`emails.board.symbols.SYMBOLS` (drawn on a 20 × 20 grid) in a ``size`` square."""

    name: str
    x: float
    y: float
    size: float


@dataclass(frozen=True, slots=True, eq=True)
class Group:
    items: tuple[Shape, ...]
    x: float = 0
    y: float = 0
    scale: float = 1
    cls: str = ""
    #: The hash, computed once: groups are the keys of the drawings kept by the picture back-end.
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.items, self.x, self.y, self.scale, self.cls)))

    def __hash__(self) -> int:
        return self._hash


Shape = Polygon | Ellipse | Rect | Text | Symbol | Group


def circle(cx: float, cy: float, r: float, fill: str | None = None, stroke: Stroke | None = None) -> Ellipse:
    return Ellipse(cx, cy, r, r, fill, stroke)


def quadratic(start: Point, control: Point, end: Point, steps: int = 8) -> tuple[Point, ...]:
    """Points along a quadratic Bézier curve, without its start.

    >>> quadratic((0, 0), (1, 2), (2, 0), steps=2)
    ((1.0, 1.0), (2.0, 0.0))
    """
    out = []
    for i in range(1, steps + 1):
        t = i / steps
        a, b, c = (1 - t) ** 2, 2 * (1 - t) * t, t * t
        out.append(
            (
                round(a * start[0] + b * control[0] + c * end[0], 2),
                round(a * start[1] + b * control[1] + c * end[1], 2),
            )
        )
    return tuple(out)


def arc(cx: float, cy: float, rx: float, ry: float, start: float, end: float, steps: int = 12) -> tuple[Point, ...]:
    """Points along an elliptical arc from angle ``start`` to ``end`` (degrees, y downwards), both ends in."""
    out = []
    for i in range(steps + 1):
        angle = math.radians(start + (end - start) * i / steps)
        out.append((round(cx + rx * math.cos(angle), 2), round(cy + ry * math.sin(angle), 2)))
    return tuple(out)


def rounded_rect(x: float, y: float, width: float, height: float, radius: float) -> tuple[Point, ...]:
    """The outline of a rounded rectangle as points (for a dashed outline)."""
    r = min(radius, width / 2, height / 2)
    return (
        arc(x + width - r, y + r, r, r, -90, 0, 4)
        + arc(x + width - r, y + height - r, r, r, 0, 90, 4)
        + arc(x + r, y + height - r, r, r, 90, 180, 4)
        + arc(x + r, y + r, r, r, 180, 270, 4)
    )


def dashes(points: tuple[Point, ...], pattern: tuple[float, ...], closed: bool) -> list[tuple[Point, ...]]:
    """The visible pieces of a dashed line through ``points``.

    >>> dashes(((0, 0), (10, 0)), (4, 2), closed=False)
    [((0, 0), (4.0, 0.0)), ((6.0, 0.0), (10, 0))]
    """
    path = list(points) + ([points[0]] if closed else [])
    pieces: list[tuple[Point, ...]] = []
    index, left, on = 0, pattern[0], True
    current: list[Point] = [path[0]]
    for a, b in zip(path, path[1:], strict=False):
        length = math.dist(a, b)
        done = 0.0
        while length - done > left:
            done += left
            t = done / length
            point = (round(a[0] + (b[0] - a[0]) * t, 2), round(a[1] + (b[1] - a[1]) * t, 2))
            if on:
                pieces.append((*current, point))
            current = [point]
            on = not on
            index = (index + 1) % len(pattern)
            left = pattern[index]
        left -= length - done
        current.append(b)
    if on and len(current) > 1:
        pieces.append(tuple(current))
    return pieces
