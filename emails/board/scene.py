"""What to draw for a board: one description, computed once, that the page's SVG and the mail's picture draw.

:func:`board_scene` turns a :class:`~emails.board.public.PublicBoard` into a :class:`Scene`: the regions'
outlines filled with their terrain, the frame, the adjacencies drawn as lines, and per region a stack of
labels (number and printed symbols, the tokens' chip, the markers, the conquest cost on the turn page),
plus, for the mail, a key under the map (the seats and what the pictures mean). The back-ends only
translate shapes: ``service.web.maps`` writes SVG, :mod:`emails.board.png` paints a PNG.

Colour is never the only cue (colour-blind players): each terrain has a texture, each seat a shape with its
number, In Decline tokens are striped with a dashed outline, and every marker has its own shape.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

import rules

from . import palette
from .geometry import geometry
from .public import LOST_TRIBE, PublicBoard, RegionView
from .shapes import Group, Polygon, Rect, Shape, Stroke, Symbol, Text, circle
from .symbols import PATTERNS

#: Around the frame, in user units.
FRAME_WIDTH = 10
MARGIN = FRAME_WIDTH

#: Regions with less room than this around their label point (times the style's label size) show tokens
#: without the race's name.
SMALL_REGION = 44
#: Width of a character of a race's name on a chip (14 units, bold), generously.
CHAR_WIDTH = 8.8


@dataclass(frozen=True)
class RegionMark:
    """What the turn page shows on a region: the tokens needed to conquer it (``die``: only with the die,
    as the final conquest)."""

    cost: int | None = None
    die: bool = False


@dataclass(frozen=True)
class Style:
    """How big the labels are drawn, for the size the picture is seen at."""

    #: Labels' size, relative to the page's.
    labels: float = 1.0
    #: Labels shrink in small regions (to stay inside them) down to this share of their size.
    smallest: float = 0.7
    #: Races' names on the token chips, where there is room (the badge says whose they are anyway).
    race_names: bool = True
    #: A key under the map: the seats and what the symbols mean (a picture seen apart from any page).
    key: bool = False
    #: Terrains filled with their patterns (``symbols.PATTERNS``), else with their patterns' background colour:
    #: flat fills weigh far less in a PNG.
    textures: bool = True


#: The pages: the map is about 1000 px wide, labels at their natural size.
PAGE = Style()
#: The mail: the picture is 480 px wide (``emails.board.png.WIDTH``; a mail's column on a phone is 320 to
#: 600 px), so labels are drawn larger (a region's number 9 to 11 px high), without races' names, terrains in
#: flat colours and no key under the map: the mail's text says who plays what (the seats' numbers and their
#: races), and every region in words. What made the picture 40 to 70 KB was its textures and its key; a mail
#: is at most 30 KB with it (ARCHITECTURE §6).
MAIL = Style(labels=2.125, smallest=0.8, race_names=False, key=False, textures=False)


@dataclass(frozen=True)
class Area:
    """A region's outline, filled with its terrain, and the region in words."""

    region: int
    outline: Polygon
    words: str


@dataclass(frozen=True)
class Link:
    """An adjacency that is not a shared edge, drawn as a dashed line between two label points."""

    regions: tuple[int, int]
    lines: tuple[Polygon, ...]

    @property
    def words(self) -> str:
        return f"Regions {self.regions[0]} and {self.regions[1]} are adjacent"


@dataclass(frozen=True)
class Scene:
    board: str
    #: The view box: x, y, width, height.
    box: tuple[float, float, float, float]
    areas: tuple[Area, ...]
    frame: Rect
    links: tuple[Link, ...]
    #: Over the regions: the turn page's conquest targets and selected region.
    highlights: tuple[Polygon, ...]
    #: One group of labels per region, centred on its label point.
    labels: tuple[Group, ...]
    #: Under the map (:attr:`Style.key`): the seats and the legend.
    key: tuple[Shape, ...] = field(default=())
    #: The picture in one sentence (an image's alternative text, a map's label).
    summary: str = ""


def board_scene(
    public: PublicBoard,
    marks: Mapping[int, RegionMark] | None = None,
    selected: int | None = None,
    style: Style = PAGE,
) -> Scene:
    """The description of ``public``'s board; ``marks`` and ``selected`` are the turn page's."""
    marks = marks or {}
    geo = geometry(public.board)
    layout = public.layout
    areas = []
    for shape in geo.regions:
        terrain = layout.regions[shape.id].terrain
        classes = f"region terrain-{terrain}" + (" target" if shape.id in marks else "")
        fill = f"pattern:{terrain}" if style.textures else PATTERNS[terrain].background
        outline = Polygon(shape.polygon, fill, Stroke(palette.INK, 2), cls=classes)
        areas.append(Area(shape.id, outline, describe_region(public, shape.id)))
    frame = Rect(
        -FRAME_WIDTH / 2,
        -FRAME_WIDTH / 2,
        geo.width + FRAME_WIDTH,
        geo.height + FRAME_WIDTH,
        4,
        stroke=Stroke(palette.FRAME, FRAME_WIDTH),
        cls="frame",
    )
    links = []
    for a, b in geo.links:
        ends = (geo.regions[a].center, geo.regions[b].center)
        links.append(
            Link(
                (a, b),
                (
                    Polygon(ends, stroke=Stroke(palette.WHITE, 9), closed=False),
                    Polygon(ends, stroke=Stroke(palette.FRAME, 4, (10, 7)), closed=False),
                ),
            )
        )
    highlights = [
        Polygon(geo.regions[r].polygon, stroke=Stroke(palette.TARGET, 3.5, (10, 5)), cls="target-outline")
        for r in marks
        if 0 <= r < len(geo.regions)
    ]
    if selected is not None and 0 <= selected < len(geo.regions):
        highlights.append(
            Polygon(geo.regions[selected].polygon, stroke=Stroke(palette.SELECTED, 6), cls="selected-outline")
        )
    labels = tuple(
        _labels(public.board, region, view, marks.get(region), style) for region, view in enumerate(public.regions)
    )
    box = (-MARGIN, -MARGIN, geo.width + 2 * MARGIN, geo.height + 2 * MARGIN)
    key: tuple[Shape, ...] = ()
    if style.key:
        key, height = _key(public, top=geo.height + MARGIN + 16, width=geo.width)
        box = (box[0], box[1], box[2], box[3] + height + 16)
    return Scene(
        board=public.board,
        box=box,
        areas=tuple(areas),
        frame=frame,
        links=tuple(links),
        highlights=tuple(highlights),
        labels=labels,
        key=key,
        summary=summary(public),
    )


# -- words --------------------------------------------------------------------------------------------------
MARKER_NAMES = {
    "mountain": "Mountain",
    "lair": "Troll's Lair",
    "fortress": "Fortress",
    "camp": "Encampment",
    "hole": "Hole-in-the-Ground",
    "hero": "Heroes",
    "dragon": "Dragon",
}


def board_title(board: str) -> str:
    """``"3-players"`` → ``"the 3-player board"``."""
    return f"the {board.split('-')[0]}-player board"


def summary(public: PublicBoard) -> str:
    """The board in one short sentence: who holds how many regions.

    A map's label: its regions are described one by one, this only says what the picture is.
    """
    held = [0] * len(public.seats)
    lost = 0
    for region in public.regions:
        if region.troops and region.troops.owner is not None and region.troops.owner < len(held):
            held[region.troops.owner] += 1
        elif region.troops:
            lost += 1
    holders = [f"{seat.name} {count}" for seat, count in zip(public.seats, held, strict=True)]
    holders.append(f"Lost Tribes {lost}")
    return f"Map of {board_title(public.board)}, {len(public.regions)} regions; regions held: {', '.join(holders)}."


def describe_region(public: PublicBoard, region: int) -> str:
    """The region in words: number, terrain, symbols, who holds it and the markers on it."""
    troops = public.regions[region].troops
    owner = troops.owner if troops else None
    who = None
    if owner is not None:
        who = public.seats[owner].name if owner < len(public.seats) else f"Player {owner + 1}"
    return _words(public.board, region, public.regions[region], who)


@functools.lru_cache(maxsize=2048)
def _words(board: str, region: int, r: RegionView, who: str | None) -> str:
    land = rules.load_board(board).regions[region]
    words = [f"Region {region}", palette.TERRAIN[land.terrain][2]]
    if land.border:
        words.append("border")
    words += [
        name for flag, name in ((land.mine, "Mine"), (land.magic, "Magic Source"), (land.cavern, "Cavern")) if flag
    ]
    troops = r.troops
    if troops:
        plural = "s" if troops.tokens > 1 else ""
        if who is None:
            words.append(f"{troops.tokens} {troops.race} token{plural}")
        else:
            decline = " In Decline" if troops.declined else ""
            words.append(f"{who}'s {troops.race}{decline}: {troops.tokens} token{plural}")
    else:
        words.append("empty")
    words += [MARKER_NAMES[m] for m in r.markers]
    if r.encampments:
        words.append(f"{r.encampments} Encampment{'s' if r.encampments > 1 else ''}")
    return ", ".join(words)


# -- badges -------------------------------------------------------------------------------------------------
_SHAPE_POINTS = {
    "triangle": ((0, -1.15), (1.05, 0.75), (-1.05, 0.75)),
    "diamond": ((0, -1.15), (1.15, 0), (0, 1.15), (-1.15, 0)),
    "hexagon": ((0.5, -0.95), (1.05, 0), (0.5, 0.95), (-0.5, 0.95), (-1.05, 0), (-0.5, -0.95)),
}


def _badge(kind: str, cx: float, cy: float, r: float, fill: str, text_fill: str, text: str, size: float) -> Group:
    edge = Stroke("#1B1B1B", 1.5)
    body: Shape
    if kind == "circle":
        body = circle(cx, cy, r, fill, edge)
    elif kind == "square":
        s = r * 0.9
        body = Rect(cx - s, cy - s, 2 * s, 2 * s, fill=fill, stroke=edge)
    else:
        body = Polygon(tuple((round(cx + x * r, 1), round(cy + y * r, 1)) for x, y in _SHAPE_POINTS[kind]), fill, edge)
    dy = 0.55 * r if kind == "triangle" else 0.42 * r
    label = Text(cx, round(cy + dy, 1), text, round(size, 1), text_fill, weight=700, anchor="middle")
    return Group((body, label), cls="badge")


def seat_badge(seat: int, cx: float, cy: float, r: float) -> Group:
    """A seat's badge: its shape in its colour with its number (1-based) inside."""
    n = len(palette.SEATS)
    return _badge(
        palette.SEAT_SHAPES[seat % n],
        cx,
        cy,
        r,
        palette.SEATS[seat % n],
        palette.SEAT_TEXT[seat % n],
        str(seat + 1),
        r * 1.15,
    )


def lost_tribe_badge(cx: float, cy: float, r: float) -> Group:
    return _badge("circle", cx, cy, r + 0.5, palette.LOST_TRIBE, palette.INK, "LT", r * 1.05)


# -- a region's labels --------------------------------------------------------------------------------------
#: A row of labels: its width and height, and what it holds (drawn from its top left corner).
_Row = tuple[float, float, tuple[Shape, ...], str]


@functools.lru_cache(maxsize=2048)
def _labels(board: str, region: int, r: RegionView, mark: RegionMark | None, style: Style) -> Group:
    """Number and symbols, the occupant, the markers and the conquest cost, stacked on the label point.
    Cached: from one step to the next, most regions show the same."""
    geo = geometry(board)
    shape = geo.regions[region]
    land = rules.load_board(board).regions[region]
    rows: list[_Row] = []

    # Row 1: the number, then the printed symbols, on a paper label (legible over any texture).
    symbols = [s for flag, s in ((land.mine, "mine"), (land.magic, "magic"), (land.cavern, "cavern")) if flag]
    number = str(region)
    number_width = 9 * len(number)
    width = number_width + 8 + 20 * len(symbols)
    rows.append(
        (
            width,
            18,
            (
                Rect(0, 0, width, 18, 6, fill=palette.PAPER),
                Text(
                    4 + number_width / 2, 14, number, 14, palette.INK, weight=600, anchor="middle", cls="region-number"
                ),
                *(Symbol(s, number_width + 6 + 20 * i, 1, 16) for i, s in enumerate(symbols)),
            ),
            "region-name",
        )
    )

    # Row 2: the occupant.
    troops = r.troops
    if troops:
        owner = troops.owner
        # The badge says whose tokens these are and the stripes whether they are In Decline, so the race's
        # name is left out where there is little room (and for the Lost Tribes, whose badge says it).
        # Labels drawn larger need more room for the name (the turn page's: SMALL_REGION × style.labels).
        small = shape.room < SMALL_REGION * style.labels
        name = "" if owner is None or small or not style.race_names else troops.race
        chip_width = 26 + 12 * len(str(troops.tokens)) + (CHAR_WIDTH * len(name) + 10 if name else 6)
        rows.append((chip_width, 26, _chip(chip_width, owner, troops.tokens, name, troops.declined), ""))

    # Row 3: the markers.
    markers = list(r.markers)
    camps = r.encampments
    if markers or camps:
        width = 22 * len(markers) + (34 if camps else 0) + 4
        items: list[Shape] = [Rect(0, 0, width, 22, 6, fill=palette.PAPER)]
        items += [Symbol(m, 4 + 22 * i, 2, 18) for i, m in enumerate(markers)]
        if camps:
            x = 4 + 22 * len(markers)
            items.append(Symbol("camp", x, 2, 18))
            items.append(Text(x + 20, 17, str(camps), 14, palette.DARK, weight=700, cls="marker-count"))
        rows.append((width, 22, tuple(items), "markers"))

    # Row 4: what conquering it takes (turn page).
    if mark is not None and mark.cost is not None:
        label = str(mark.cost)
        width = 30 + 10 * len(label) + (18 if mark.die else 0)
        dash = (5.0, 3.0) if mark.die else ()
        cost: list[Shape] = [
            Rect(0, 0, width, 22, 11, fill=palette.WHITE, stroke=Stroke(palette.TARGET, 2.5, dash), cls="cost"),
            Symbol("sword", 4, 3, 16),
            Text(22, 16.5, label, 17, palette.TARGET, weight=800, cls="cost-text"),
        ]
        if mark.die:
            cost.append(Symbol("die", 24 + 10 * len(label), 4, 14))
        rows.append((width, 22, tuple(cost), ""))

    if land.is_water and not troops:
        water = palette.TERRAIN[land.terrain][2]
        text = Text(25, 14, water, 14, palette.WATER_INK, italic=True, anchor="middle", cls="water-name")
        rows.insert(1, (50, 18, (Rect(0, 0, 50, 18, 6, fill=palette.PAPER), text), ""))

    gap = 4.0
    total = sum(h for _, h, _, _ in rows) + gap * (len(rows) - 1)
    widest = max(w for w, _, _, _ in rows)
    # Smaller where the region is small or the stack is tall, but never below the style's smallest.
    fits = min(shape.room / 45, 2.2 * shape.room / (total * style.labels))
    # In steps of 0.05: the same piece comes back at the same size (the mail draws each size once).
    scale = round(style.labels * max(style.smallest, min(1.0, fits)) * 20) / 20
    # Keep the labels inside the frame, even where the label point is near it.
    cx = min(max(shape.center[0], widest * scale / 2 + 4), geo.width - widest * scale / 2 - 4)
    cy = min(max(shape.center[1], total * scale / 2 + 4), geo.height - total * scale / 2 - 4)
    placed: list[Shape] = []
    y = -total / 2
    for row_width, row_height, row_items, cls in rows:
        placed.append(Group(row_items, x=-row_width / 2, y=y, cls=cls))
        y += row_height + gap
    return Group(tuple(placed), x=round(cx, 1), y=round(cy, 1), scale=scale, cls="region-labels")


def _chip(width: float, owner: int | None, tokens: int, name: str, declined: bool) -> tuple[Shape, ...]:
    """A token chip: the owner's badge (shape, colour, seat number), the count and the race."""
    if owner is None:
        edge = Stroke(palette.LOST_TRIBE_EDGE, 2.5)
        badge = lost_tribe_badge(13, 13, 10)
    else:
        edge = Stroke(palette.seat_colour(owner), 2.5)
        badge = seat_badge(owner, 13, 13, 10)
    background = Rect(0, 0, width, 26, 6, fill=palette.PAPER, stroke=edge)
    if declined:
        background = Rect(0, 0, width, 26, 6, fill="pattern:decline", stroke=Stroke(palette.DECLINE_EDGE, 2, (5, 3)))
    count = Text(28, 19, str(tokens), 19, palette.DARK, weight=800, cls="count")
    items: tuple[Shape, ...] = (background, badge, count)
    if name:
        x = 28 + 12 * len(str(tokens)) + 4
        items += (Text(x, 18, name, 14, palette.DARK, weight=600, italic=declined, cls="race"),)
    return (Group(items, cls="chip declined" if declined else "chip"),)


# -- the legend ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LegendEntry:
    """A small picture (in a ``width`` × ``height`` box) and its name."""

    name: str
    width: float
    height: float
    picture: tuple[Shape, ...]


def _terrain_entry(terrain: str) -> LegendEntry:
    name = palette.TERRAIN[terrain][2]
    swatch: tuple[Shape, ...] = (Rect(0, 0, 28, 20, 3, fill=f"pattern:{terrain}", stroke=Stroke(palette.FRAME, 1)),)
    if terrain == "mountain":  # each Mountain region holds its Mountain marker: one entry says both
        return LegendEntry(name, 50, 20, (*swatch, Symbol("mountain", 30, 0, 20)))
    return LegendEntry(name, 28, 20, swatch)


def legend(public: PublicBoard | None = None) -> tuple[LegendEntry, ...]:
    """What the pictures mean: terrains, symbols, markers, Lost Tribe, In Decline, conquest cost.

    With ``public``, only what that board shows (a mail's key); without, everything (the pages' legend).
    """
    shown = _shown(public) if public else None
    entries = [_terrain_entry(terrain) for terrain in palette.TERRAIN]
    for symbol, name in (("mine", "Mine"), ("magic", "Magic Source"), ("cavern", "Cavern")):
        if shown is None or symbol in shown:
            entries.append(LegendEntry(name, 20, 20, (Symbol(symbol, 0, 0, 20),)))
    for marker in ("lair", "fortress", "camp", "hole", "hero", "dragon"):
        if shown is None or marker in shown:
            entries.append(LegendEntry(MARKER_NAMES[marker], 20, 20, (Symbol(marker, 0, 0, 20),)))
    if shown is None or LOST_TRIBE in shown:
        entries.append(LegendEntry(LOST_TRIBE, 22, 22, (lost_tribe_badge(11, 11, 10),)))
    if shown is None or "declined" in shown:
        stripes = Rect(1, 1, 38, 20, 5, fill="pattern:decline", stroke=Stroke(palette.DECLINE_EDGE, 1.5, (5, 3)))
        entries.append(LegendEntry("In Decline tokens", 40, 22, (stripes,)))
    if shown is None:
        cost = (
            Rect(1, 1, 38, 20, 10, fill=palette.WHITE, stroke=Stroke(palette.TARGET, 2)),
            Symbol("sword", 4, 3, 15),
            Text(24, 16, "3", 13, palette.TARGET, weight=700),
        )
        entries.append(LegendEntry("Tokens needed to conquer (dashed: only with the die)", 40, 22, cost))
    return tuple(entries)


def _shown(public: PublicBoard) -> set[str]:
    layout = public.layout
    shown: set[str] = set()
    for land, region in zip(layout.regions, public.regions, strict=True):
        shown |= {s for flag, s in ((land.mine, "mine"), (land.magic, "magic"), (land.cavern, "cavern")) if flag}
        shown |= set(region.markers)
        if region.encampments:
            shown.add("camp")
        if region.troops and region.troops.owner is None:
            shown.add(LOST_TRIBE)
        if region.troops and region.troops.declined:
            shown.add("declined")
    return shown


# -- the mail's key -----------------------------------------------------------------------------------------
#: The key's text size and line height, in user units (about 13 and 20 px in a 600 px picture).
KEY_TEXT = 22
KEY_LINE = 34


def text_width(text: str, size: float) -> float:
    """About how wide ``text`` is drawn at ``size`` (a little more than most fonts need)."""
    return 0.56 * size * len(text)


def _key(public: PublicBoard, top: float, width: float) -> tuple[tuple[Shape, ...], float]:
    """The seats (badge, name, races) one per line, then the legend's entries side by side."""
    items: list[Shape] = []
    y = top
    for number, seat in enumerate(public.seats):
        words = f"{seat.name}: {seat.troops}"
        limit = int((width - 40) / (0.56 * KEY_TEXT))
        if len(words) > limit:
            words = words[: limit - 1] + "…"
        items.append(
            Group(
                (seat_badge(number, 13, 15, 13), Text(36, 23, words, KEY_TEXT, palette.INK)),
                x=0,
                y=y,
                cls="key-seat",
            )
        )
        y += KEY_LINE
    y += 6
    x = 0.0
    scale = 1.4
    for entry in legend(public):
        entry_width = entry.width * scale + 8 + text_width(entry.name, KEY_TEXT)
        if x and x + entry_width > width:
            x, y = 0.0, y + KEY_LINE
        picture = Group(entry.picture, x=0, y=(KEY_LINE - 6 - entry.height * scale) / 2, scale=scale)
        label = Text(entry.width * scale + 8, 23, entry.name, KEY_TEXT, palette.INK)
        items.append(Group((picture, label), x=x, y=y, cls="key-entry"))
        x += entry_width + 24
    return tuple(items), y + KEY_LINE - top
