"""The terrains' textures, the printed symbols and the markers, each drawn once as shapes.

Symbols are on a 20 × 20 grid, each with its own outline so that it is told by its shape, not its colour
alone. Textures are square tiles repeated over a region.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import palette
from .shapes import Ellipse, Polygon, Rect, Shape, Stroke, arc, circle, quadratic


@dataclass(frozen=True, slots=True)
class Pattern:
    """A square tile of ``size`` units: a background colour and shapes over it."""

    size: float
    background: str
    items: tuple[Shape, ...]


def _mix(a: str, b: str, amount: float) -> str:
    ra, rb = palette.rgb(a), palette.rgb(b)
    return "#" + "".join(f"{round(x + (y - x) * amount):02X}" for x, y in zip(ra, rb, strict=True))


def _line(*points: tuple[float, float], colour: str, width: float) -> Polygon:
    return Polygon(points, stroke=Stroke(colour, width), closed=False)


def _waves(y: float, depth: float, ink: str, width: float) -> Polygon:
    points: tuple[tuple[float, float], ...] = ((0, y),)
    for x in range(0, 24, 6):
        control = (x + 3, y - depth if (x // 6) % 2 == 0 else y + depth)
        points += quadratic(points[-1], control, (x + 6, y), 4)
    return _line(*points, colour=ink, width=width)


def _textures() -> dict[str, tuple[Shape, ...]]:
    ink = {terrain: colours[1] for terrain, colours in palette.TERRAIN.items()}
    fill = {terrain: colours[0] for terrain, colours in palette.TERRAIN.items()}
    tree = _mix(fill["forest"], ink["forest"], 0.5)
    return {
        # Furrows.
        "farmland": (
            _line((0, 6), (24, 6), colour=ink["farmland"], width=1.6),
            _line((0, 18), (24, 18), colour=ink["farmland"], width=1.6),
        ),
        # Little trees.
        "forest": (
            Polygon(((6, 3), (10, 11), (2, 11)), fill=tree, stroke=Stroke(ink["forest"], 1.3)),
            Polygon(((18, 14), (22, 22), (14, 22)), fill=tree, stroke=Stroke(ink["forest"], 1.3)),
        ),
        # Rounded humps.
        "hill": (
            _line((1, 11), *quadratic((1, 11), (6, 3), (11, 11)), colour=ink["hill"], width=1.5),
            _line((13, 22), *quadratic((13, 22), (18, 14), (23, 22)), colour=ink["hill"], width=1.5),
        ),
        # Peaks.
        "mountain": (
            _line((1, 11), (6, 3), (11, 11), colour=ink["mountain"], width=1.6),
            _line((13, 23), (18, 15), (23, 23), colour=ink["mountain"], width=1.6),
        ),
        # Reed tufts.
        "swamp": tuple(
            _line((x, bottom), (x, top), colour=ink["swamp"], width=1.3)
            for x, bottom, top in ((3, 10, 5), (6, 10, 3), (9, 10, 5), (15, 22, 17), (18, 22, 15), (21, 22, 17))
        ),
        # Waves.
        "sea": (_waves(8, 4, ink["sea"], 1.6), _waves(20, 4, ink["sea"], 1.6)),
        "lake": (_waves(8, 3, ink["lake"], 1.2), _waves(20, 3, ink["lake"], 1.2)),
    }


#: Fill patterns: one per terrain, and the stripes of In Decline tokens.
PATTERNS: dict[str, Pattern] = {
    **{terrain: Pattern(24, palette.TERRAIN[terrain][0], items) for terrain, items in _textures().items()},
    # Diagonal stripes, 45°, seamless across tiles.
    "decline": Pattern(
        8,
        palette.DECLINE_LIGHT,
        (
            Polygon(((0, 0), (3.5, 0), (0, 3.5)), fill=palette.DECLINE_DARK),
            Polygon(((8, 0), (8, 3.5), (3.5, 8), (0, 8)), fill=palette.DECLINE_DARK),
        ),
    ),
}


def _shield() -> tuple[tuple[float, float], ...]:
    return (
        (10, 1),
        (18.5, 4),
        (18.5, 10),
        *quadratic((18.5, 10), (18.5, 16), (10, 19.5)),
        *quadratic((10, 19.5), (1.5, 16), (1.5, 10)),
        (1.5, 4),
    )


def _wing() -> tuple[tuple[float, float], ...]:
    points: tuple[tuple[float, float], ...] = ((1, 17),)
    for control, end in (((4, 6), (10, 2)), ((9, 8), (13, 9)), ((16, 4), (19, 4)), ((17, 10), (19, 16))):
        points += quadratic(points[-1], control, end, 6)
    return points + quadratic(points[-1], (12, 12), (9, 18), 6)


_BROWN, _DARK_BROWN = "#5B4630", "#3B2F22"

#: The printed symbols (Mine, Magic Source, Cavern), the markers, the conquest cost's sword and the die.
SYMBOLS: dict[str, tuple[Shape, ...]] = {
    # Mine: a pick on a gold disc.
    "mine": (
        circle(10, 10, 9.5, "#F2C94C", Stroke(_BROWN, 1)),
        _line((5, 15), (14, 6), colour=_DARK_BROWN, width=2.2),
        _line((9, 4), *quadratic((9, 4), (14, 3), (17, 8)), colour=_DARK_BROWN, width=2.2),
    ),
    # Magic Source: a star.
    "magic": (
        Polygon(
            ((10, 0.5), (12.6, 7), (19.5, 7.3), (14, 11.6), (16, 18.8), (10, 14.6), (4, 18.8), (6, 11.6), (0.5, 7.3))
            + ((7.4, 7),),
            fill="#8E44AD",
            stroke=Stroke("#FFFFFF", 1),
        ),
    ),
    # Cavern: a dark arch.
    "cavern": (
        Polygon(((1, 19), *arc(10, 11, 9, 9, 180, 360), (19, 19)), fill="#4A3B2F"),
        Polygon(((6, 19), *arc(10, 13, 4, 4, 180, 360), (14, 19)), fill="#111111"),
    ),
    # Mountain: a grey peak with snow.
    "mountain": (
        Polygon(((0.5, 19), (10, 1.5), (19.5, 19)), fill="#7D6E62", stroke=Stroke(_DARK_BROWN, 1)),
        Polygon(((10, 1.5), (13.3, 7.6), (10, 6.5), (6.7, 7.6)), fill="#FFFFFF"),
    ),
    # Troll's Lair: a hut.
    "lair": (
        Polygon(((1, 19), (1, 9), (10, 1.5), (19, 9), (19, 19)), fill="#6E8B3D", stroke=Stroke("#2E3B19", 1.2)),
        Rect(7, 12, 6, 7, fill="#2E3B19"),
    ),
    # Fortress: a crenellated tower.
    "fortress": (
        Polygon(
            ((2, 19), (2, 4), (5.5, 4), (5.5, 7), (8.2, 7), (8.2, 4), (11.8, 4), (11.8, 7), (14.5, 7), (14.5, 4))
            + ((18, 4), (18, 19)),
            fill="#5D6D7E",
            stroke=Stroke("#1C2833", 1.2),
        ),
        Rect(8, 12, 4, 7, fill="#1C2833"),
    ),
    # Encampment: a tent.
    "camp": (
        Polygon(((1, 18), (10, 2), (19, 18)), fill="#E67E22", stroke=Stroke("#6E3B0E", 1.2)),
        Polygon(((10, 8), (7, 18), (13, 18)), fill="#6E3B0E"),
    ),
    # Hole-in-the-Ground: a black pit.
    "hole": (Ellipse(10, 11, 9.5, 7, "#8A6D4B"), Ellipse(10, 11.5, 6.5, 4.5, "#111111")),
    # Heroes: a shield.
    "hero": (
        Polygon(_shield(), fill="#F1C40F", stroke=Stroke("#7D6608", 1.3)),
        _line((10, 4), (10, 16), colour="#7D6608", width=1.6),
        _line((5, 9), (15, 9), colour="#7D6608", width=1.6),
    ),
    # Dragon: a red wing.
    "dragon": (Polygon(_wing(), fill="#C0392B", stroke=Stroke("#641E16", 1.2)),),
    # Conquest cost: a sword.
    "sword": (
        Polygon(((3, 17), (15, 5), (17, 3), (16, 6), (4, 18)), fill=palette.TARGET),
        _line((4, 12), (8, 16), colour=palette.TARGET, width=2.2),
        _line((2.5, 17.5), (3.5, 16.5), colour=palette.TARGET, width=2.2),
    ),
    # The reinforcement die.
    "die": (
        Rect(1, 1, 18, 18, 4, fill="#FFFFFF", stroke=Stroke("#222222", 1.6)),
        circle(6, 6, 1.8, "#000000"),
        circle(10, 10, 1.8, "#000000"),
        circle(14, 14, 1.8, "#000000"),
    ),
}
