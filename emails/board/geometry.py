"""Reading the stored region shapes of a board (``<board>.json`` beside this module, written by
``python -m emails.board.generate``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

import rules


@dataclass(frozen=True)
class RegionShape:
    id: int
    polygon: tuple[tuple[float, float], ...]
    #: Where the region's labels are centred, and how far that point is from the outline.
    center: tuple[float, float]
    room: float


@dataclass(frozen=True)
class Geometry:
    board: str
    width: float
    height: float
    regions: tuple[RegionShape, ...]
    #: Adjacencies that are not a shared edge, drawn as a line between the two regions' label points.
    links: tuple[tuple[int, int], ...]


@cache
def geometry(board: str) -> Geometry:
    """The stored shapes of ``board`` (``"2-players"`` … ``"5-players"``)."""
    text = resources.files(__package__).joinpath(f"{board}.json").read_text()
    data = json.loads(text)
    return Geometry(
        board=data["board"],
        width=data["width"],
        height=data["height"],
        regions=tuple(
            RegionShape(
                id=r["id"],
                polygon=tuple((x, y) for x, y in r["polygon"]),
                center=(r["center"][0], r["center"][1]),
                room=r["room"],
            )
            for r in data["regions"]
        ),
        links=tuple((a, b) for a, b in data["links"]),
    )


@cache
def board_with(regions: int) -> str | None:
    """The name of the board with that many regions (each board has its own count), or None.

    >>> board_with(23), board_with(48), board_with(7)
    ('2-players', '5-players', None)
    """
    return next((name for name in rules.BOARD_NAMES if len(rules.load_board(name)) == regions), None)
