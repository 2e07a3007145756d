"""Drawing a board and what lies on it as an inline SVG string.

Nothing here reads a request or the database: :func:`board_svg` takes the state's JSON (or a
``rules.player_view``, which holds the same regions and players) and returns markup, so the pages, the
replay and the mails draw the same picture.

Colour is never the only cue (colour-blind players): each terrain has a texture as well as a colour, each
seat a shape with its number as well as a colour, In Decline tokens are striped with a dashed outline, and
every symbol and marker has its own shape (the legend names them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

import rules
from service.web.maps.geometry import Geometry, RegionShape, geometry

#: Seat colours (Okabe and Ito's palette, told apart with every common colour-vision deficiency) and shapes.
SEAT_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00")
SEAT_SHAPES = ("circle", "square", "triangle", "diamond", "hexagon")
SEAT_TEXT = ("#ffffff", "#ffffff", "#ffffff", "#000000", "#000000")

#: Terrain: fill colour, texture colour and how it is named.
TERRAIN = {
    "farmland": ("#f3e6a4", "#c9b45a", "Farmland"),
    "forest": ("#8cc084", "#3f7f3a", "Forest"),
    "hill": ("#d2dd8f", "#8d9a3f", "Hill"),
    "mountain": ("#c4b5a5", "#7a6857", "Mountain"),
    "swamp": ("#9fc2b1", "#4f7c68", "Swamp"),
    "sea": ("#7fb2dc", "#3f7fb5", "Sea"),
    "lake": ("#a9d0ee", "#4f8fc4", "Lake"),
}

#: Fonts and strokes are presentation attributes, not a <style> block: the SVG then looks the same inline in
#: a page under a strict Content Security Policy, in a file or in a mail. Pages add focus and hover looks.
FONT = "system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"
TEXT = f'font-family="{FONT}"'
REGION_STROKE = 'stroke="#3b2f22" stroke-width="2" stroke-linejoin="round"'

#: Regions with less room than this around their label point show tokens without the race's name.
SMALL_REGION = 44
#: Width of a character of a race's name on a chip (14 px bold, italic when In Decline), generously.
CHAR_WIDTH = 8.8

#: How the frame is drawn: border regions are those that touch it.
FRAME_WIDTH = 10
MARGIN = FRAME_WIDTH


@dataclass(frozen=True)
class RegionMark:
    """What the turn page shows on a region: the tokens needed to conquer it (``die``: only with the die,
    as the final conquest)."""

    cost: int | None = None
    die: bool = False


@dataclass(frozen=True)
class MapOptions:
    #: Prefix of the ids inside the SVG (patterns, symbols), so two maps can share a page.
    id_prefix: str = "map"
    #: A link per region (None: not clickable), e.g. the turn page's region panel.
    href: Callable[[int], str | None] | None = None
    #: Extra attributes per region link, e.g. what a click does with JavaScript on.
    link_attributes: Callable[[int], Mapping[str, str]] | None = None
    marks: Mapping[int, RegionMark] = field(default_factory=dict)
    selected: int | None = None
    #: Player names by seat, for the regions' descriptions.
    seat_names: Sequence[str] = ()
    label: str = "Map of the board"


def board_svg(state: Mapping[str, Any], options: MapOptions | None = None) -> Markup:
    """The board of ``state`` (``GameState.to_json()`` or a player view) with its tokens and markers."""
    options = options or MapOptions()
    geo = geometry(state["board"])
    board = rules.load_board(state["board"])
    p = options.id_prefix
    parts: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="board-map" '
        f'viewBox="{-MARGIN} {-MARGIN} {geo.width + 2 * MARGIN:g} {geo.height + 2 * MARGIN:g}" '
        f'role="group" aria-label="{escape(options.label)}">',
        _defs(p),
    ]
    described = [describe_region(state, board, i, options.seat_names) for i in range(len(board))]
    # Regions: the clickable shapes.
    parts.append('<g class="regions">')
    for shape in geo.regions:
        land = board.regions[shape.id]
        classes = f"region terrain-{land.terrain}"
        if shape.id in options.marks:
            classes += " target"
        path = (
            f'<path class="{classes}" d="{_path(shape)}" fill="url(#{p}-{land.terrain})" {REGION_STROKE}>'
            f"<title>{escape(described[shape.id])}</title></path>"
        )
        href = options.href(shape.id) if options.href else None
        if href:
            extra = options.link_attributes(shape.id) if options.link_attributes else {}
            attributes = "".join(f' {k}="{escape(v)}"' for k, v in extra.items())
            parts.append(
                f'<a href="{escape(href)}" class="region-link" id="{p}-region-{shape.id}" '
                f'data-region="{shape.id}" aria-label="{escape(described[shape.id])}"{attributes}>{path}</a>'
            )
        else:
            parts.append(path)
    parts.append("</g>")
    parts.append(
        f'<rect class="frame" x="{-FRAME_WIDTH / 2}" y="{-FRAME_WIDTH / 2}" '
        f'width="{geo.width + FRAME_WIDTH:g}" height="{geo.height + FRAME_WIDTH:g}" '
        f'fill="none" stroke="#5b4630" stroke-width="{FRAME_WIDTH}" rx="4"/>'
    )
    # Highlights over the shapes: conquest targets, the selected region.
    parts.append('<g class="highlights" pointer-events="none">')
    for region in options.marks:
        parts.append(
            f'<path class="target-outline" d="{_path(geo.regions[region])}" fill="none" stroke="#922b21" '
            f'stroke-width="3.5" stroke-dasharray="10 5"/>'
        )
    if options.selected is not None and 0 <= options.selected < len(geo.regions):
        parts.append(
            f'<path class="selected-outline" d="{_path(geo.regions[options.selected])}" fill="none" '
            f'stroke="#111" stroke-width="6"/>'
        )
    parts.append("</g>")
    parts.append(_links(geo))
    parts.append('<g class="labels" pointer-events="none" aria-hidden="true">')
    for shape in geo.regions:
        parts.append(_labels(state, board, shape, options.marks.get(shape.id), p))
    parts.append("</g></svg>")
    return Markup("".join(parts))


def describe_region(state: Mapping[str, Any], board: rules.Board, region: int, seat_names: Sequence[str] = ()) -> str:
    """The region in words: number, terrain, symbols, who holds it and the markers on it."""
    land = board.regions[region]
    r = state["regions"][region]
    words = [f"Region {region}", TERRAIN[land.terrain][2]]
    if land.border:
        words.append("border")
    words += [
        name for flag, name in ((land.mine, "Mine"), (land.magic, "Magic Source"), (land.cavern, "Cavern")) if flag
    ]
    if r.get("tokens"):
        race = r.get("race") or "?"
        owner = r.get("owner")
        if owner is None:
            words.append(f"{r['tokens']} {race} token{'s' if r['tokens'] > 1 else ''}")
        else:
            who = seat_names[owner] if owner < len(seat_names) else f"Player {owner + 1}"
            decline = " In Decline" if in_decline(state, owner, race) else ""
            words.append(f"{who}'s {race}{decline}: {r['tokens']} token{'s' if r['tokens'] > 1 else ''}")
    else:
        words.append("empty")
    words += [label for key, label in MARKER_NAMES if r.get(key)]
    if r.get("encampments"):
        words.append(f"{r['encampments']} Encampment{'s' if r['encampments'] > 1 else ''}")
    return ", ".join(words)


MARKER_NAMES = (
    ("mountain", "Mountain"),
    ("lair", "Troll's Lair"),
    ("fortress", "Fortress"),
    ("hole", "Hole-in-the-Ground"),
    ("hero", "Heroes"),
    ("dragon", "Dragon"),
)


def in_decline(state: Mapping[str, Any], owner: int, race: str) -> bool:
    player = state["players"][owner]
    return any(t.get("race") == race for t in player.get("declined") or [])


# -- pieces -----------------------------------------------------------------------------------------------
def _path(shape: RegionShape) -> str:
    return "M" + "L".join(f"{x:g},{y:g}" for x, y in shape.polygon) + "Z"


def _links(geo: Geometry) -> str:
    """Adjacencies that are not a shared edge: a dashed bridge between the two regions' label points."""
    out = ['<g class="links" pointer-events="none">']
    for a, b in geo.links:
        (x1, y1), (x2, y2) = geo.regions[a].center, geo.regions[b].center
        out.append(
            f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" stroke="#fff" stroke-width="9" '
            f'stroke-linecap="round" opacity="0.85"/>'
            f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" stroke="#5b4630" stroke-width="4" '
            f'stroke-dasharray="10 7" stroke-linecap="round"><title>Regions {a} and {b} are adjacent</title></line>'
        )
    out.append("</g>")
    return "".join(out)


def _labels(state: Mapping[str, Any], board: rules.Board, shape: RegionShape, mark: RegionMark | None, p: str) -> str:
    """Number and symbols, the occupant, the markers and the conquest cost, stacked on the label point."""
    land = board.regions[shape.id]
    r = state["regions"][shape.id]
    scale = max(0.7, min(1.0, shape.room / 45))
    rows: list[tuple[float, float, Callable[[float, float], str]]] = []  # (width, height, draw at x, y)

    # Row 1: the number, then the printed symbols.
    symbols = [s for flag, s in ((land.mine, "mine"), (land.magic, "magic"), (land.cavern, "cavern")) if flag]
    number = str(shape.id)
    number_width = 9 * len(number)

    def header(x: float, y: float) -> str:
        text = (
            f'<text class="region-number" x="{x + number_width / 2:g}" y="{y + 12:g}" text-anchor="middle" '
            f'{TEXT} font-size="14" font-weight="600" fill="#3b2f22">{number}</text>'
        )
        icons = "".join(_use(p, s, x + number_width + 4 + 20 * i, y, 16) for i, s in enumerate(symbols))
        return text + icons

    rows.append((number_width + (4 + 20 * len(symbols) - 4 if symbols else 0), 16, header))

    # Row 2: the occupant.
    tokens = r.get("tokens", 0)
    if tokens:
        race = r.get("race") or ""
        owner = r.get("owner")
        declined = owner is not None and in_decline(state, owner, race)
        # The badge says whose tokens these are and the stripes whether they are In Decline, so the race's
        # name is left out where there is little room (and for the Lost Tribes, whose badge says it).
        name = "" if owner is None or shape.room < SMALL_REGION else race
        chip_width = 26 + 12 * len(str(tokens)) + (CHAR_WIDTH * len(name) + 10 if name else 6)

        def occupant(x: float, y: float) -> str:
            return _chip(p, x, y, chip_width, owner, tokens, name, declined)

        rows.append((chip_width, 26, occupant))

    # Row 3: the markers (the Mountain first: it is printed on the map).
    markers = [m for m in ("mountain", "lair", "fortress", "hole", "hero", "dragon") if r.get(m)]
    camps = r.get("encampments", 0)
    if markers or camps:
        width = 22 * len(markers) + (34 if camps else 0) - 4

        def marker_row(x: float, y: float) -> str:
            out = "".join(_use(p, m, x + 22 * i, y, 18) for i, m in enumerate(markers))
            if camps:
                cx = x + 22 * len(markers)
                out += _use(p, "camp", cx, y, 18)
                out += (
                    f'<text class="marker-count" x="{cx + 20:g}" y="{y + 14:g}" {TEXT} font-size="14" '
                    f'font-weight="700" fill="#111">{camps}</text>'
                )
            return out

        rows.append((width, 18, marker_row))

    # Row 4: what conquering it takes (turn page).
    if mark is not None and mark.cost is not None:
        label = f"{mark.cost}"
        width = 30 + 10 * len(label) + (18 if mark.die else 0)

        def cost_row(x: float, y: float) -> str:
            dashed = ' stroke-dasharray="5 3"' if mark.die else ""
            out = (
                f'<rect class="cost" x="{x:g}" y="{y:g}" width="{width:g}" height="22" rx="11" fill="#fff" '
                f'stroke="#922b21" stroke-width="2.5"{dashed}/>'
                + _use(p, "sword", x + 4, y + 3, 16)
                + f'<text class="cost-text" x="{x + 22:g}" y="{y + 16.5:g}" {TEXT} font-size="17" font-weight="800" '
                f'fill="#922b21">{label}</text>'
            )
            if mark.die:
                out += _use(p, "die", x + 24 + 10 * len(label), y + 4, 14)
            return out

        rows.append((width, 22, cost_row))

    if land.is_water and not tokens:
        water = TERRAIN[land.terrain][2]

        def water_row(x: float, y: float) -> str:
            return (
                f'<text class="water-name" x="{x + 22:g}" y="{y + 13:g}" text-anchor="middle" {TEXT} '
                f'font-size="14" font-style="italic" fill="#1b4f72">{water}</text>'
            )

        rows.insert(1, (44, 16, water_row))

    gap = 4.0
    total = sum(h for _, h, _ in rows) + gap * (len(rows) - 1)
    widest = max(w for w, _, _ in rows)
    # Keep the labels inside the frame, even where the label point is near it.
    geo = geometry(board.name)
    cx = min(max(shape.center[0], widest * scale / 2 + 4), geo.width - widest * scale / 2 - 4)
    cy = min(max(shape.center[1], total * scale / 2 + 4), geo.height - total * scale / 2 - 4)
    out = [f'<g class="region-labels" transform="translate({cx:g},{cy:g}) scale({scale:.2f})">']
    y: float = -total / 2
    for row_width, row_height, draw in rows:
        out.append(draw(-row_width / 2, y))
        y += row_height + gap
    out.append("</g>")
    return "".join(out)


def _chip(p: str, x: float, y: float, width: float, owner: int | None, tokens: int, name: str, declined: bool) -> str:
    """A token chip: the owner's badge (shape, colour, seat number), the count and the race."""
    if owner is None:  # Lost Tribe
        fill = "#6b5a48"
        badge = _shape("circle", x + 13, y + 13, 10.5, "#d9c9a8", "#3b2f22", "")
        badge += (
            f'<text x="{x + 13:g}" y="{y + 17:g}" text-anchor="middle" {TEXT} font-size="11" font-weight="800" '
            f'fill="#3b2f22">LT</text>'
        )
    else:
        fill = SEAT_COLOURS[owner % len(SEAT_COLOURS)]
        badge = seat_badge(owner, x + 13, y + 13, 10)
    classes = "chip declined" if declined else "chip"
    background = (
        f'<rect x="{x:g}" y="{y:g}" width="{width:g}" height="26" rx="6" fill="#fffdf7" '
        f'stroke="{fill}" stroke-width="2.5"/>'
    )
    if declined:
        background = (
            f'<rect x="{x:g}" y="{y:g}" width="{width:g}" height="26" rx="6" fill="url(#{p}-decline)" '
            f'stroke="#333" stroke-width="2" stroke-dasharray="5 3"/>'
        )
    count_x = x + 28
    italic = ' font-style="italic"' if declined else ""
    return (
        f'<g class="{classes}">{background}{badge}'
        f'<text class="count" x="{count_x:g}" y="{y + 19:g}" {TEXT} font-size="19" font-weight="800" '
        f'fill="#111">{tokens}</text>'
        f'<text class="race" x="{count_x + 12 * len(str(tokens)) + 4:g}" y="{y + 18:g}" {TEXT} font-size="14" '
        f'font-weight="600"{italic} fill="#111">{escape(name)}</text></g>'
    )


def seat_badge(seat: int, cx: float, cy: float, r: float) -> str:
    """A seat's badge: its shape in its colour with its number (1-based) inside."""
    return _shape(
        SEAT_SHAPES[seat % len(SEAT_SHAPES)],
        cx,
        cy,
        r,
        SEAT_COLOURS[seat % len(SEAT_COLOURS)],
        SEAT_TEXT[seat % len(SEAT_TEXT)],
        str(seat + 1),
    )


def seat_badge_svg(seat: int, size: int = 20) -> Markup:
    """A seat's badge alone, for the player lists beside the map."""
    return Markup(
        f'<svg class="seat-badge" width="{size}" height="{size}" viewBox="0 0 24 24" aria-hidden="true">'
        f"{seat_badge(seat, 12, 12, 11)}</svg>"
    )


def _shape(kind: str, cx: float, cy: float, r: float, fill: str, text_fill: str, text: str) -> str:
    stroke = 'stroke="#1b1b1b" stroke-width="1.5"'
    if kind == "circle":
        body = f'<circle cx="{cx:g}" cy="{cy:g}" r="{r:g}" fill="{fill}" {stroke}/>'
    elif kind == "square":
        s = r * 0.9
        body = f'<rect x="{cx - s:g}" y="{cy - s:g}" width="{2 * s:g}" height="{2 * s:g}" fill="{fill}" {stroke}/>'
    else:
        points = {
            "triangle": [(0, -1.15), (1.05, 0.75), (-1.05, 0.75)],
            "diamond": [(0, -1.15), (1.15, 0), (0, 1.15), (-1.15, 0)],
            "hexagon": [(0.5, -0.95), (1.05, 0), (0.5, 0.95), (-0.5, 0.95), (-1.05, 0), (-0.5, -0.95)],
        }[kind]
        coords = " ".join(f"{cx + px * r:.1f},{cy + py * r:.1f}" for px, py in points)
        body = f'<polygon points="{coords}" fill="{fill}" {stroke}/>'
    dy = 0.42 * r if kind != "triangle" else 0.55 * r
    label = (
        f'<text x="{cx:g}" y="{cy + dy:.1f}" text-anchor="middle" {TEXT} font-size="{r * 1.15:.1f}" '
        f'font-weight="700" fill="{text_fill}">{text}</text>'
        if text
        else ""
    )
    return body + label


def _use(p: str, symbol: str, x: float, y: float, size: float) -> str:
    return f'<use href="#{p}-symbol-{symbol}" x="{x:g}" y="{y:g}" width="{size:g}" height="{size:g}"/>'


# -- definitions: terrain textures and the symbols --------------------------------------------------------
def _defs(p: str) -> str:
    textures = {
        # Furrows.
        "farmland": '<path d="M0,6 H24 M0,18 H24" stroke-width="1.6"/>',
        # Little trees.
        "forest": '<path d="M6,3 L10,11 H2 Z M18,14 L22,22 H14 Z" stroke-width="1.3" fill-opacity="0.5"/>',
        # Rounded humps.
        "hill": '<path d="M1,11 Q6,3 11,11 M13,22 Q18,14 23,22" stroke-width="1.5" fill="none"/>',
        # Peaks.
        "mountain": '<path d="M1,11 L6,3 L11,11 M13,23 L18,15 L23,23" stroke-width="1.6" fill="none"/>',
        # Reed tufts.
        "swamp": '<path d="M3,10 V5 M6,10 V3 M9,10 V5 M15,22 V17 M18,22 V15 M21,22 V17" stroke-width="1.3"/>',
        # Waves.
        "sea": '<path d="M0,8 Q3,4 6,8 T12,8 T18,8 T24,8 M0,20 Q3,16 6,20 T12,20 T18,20 T24,20" '
        'stroke-width="1.6" fill="none"/>',
        "lake": '<path d="M0,8 Q3,5 6,8 T12,8 T18,8 T24,8 M0,20 Q3,17 6,20 T12,20 T18,20 T24,20" '
        'stroke-width="1.2" fill="none"/>',
    }
    out = ["<defs>"]
    for terrain, (fill, ink, _name) in TERRAIN.items():
        out.append(
            f'<pattern id="{p}-{terrain}" width="24" height="24" patternUnits="userSpaceOnUse">'
            f'<rect width="24" height="24" fill="{fill}"/>'
            f'<g stroke="{ink}" fill="{ink}">{textures[terrain]}</g></pattern>'
        )
    out.append(
        f'<pattern id="{p}-decline" width="8" height="8" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><rect width="8" height="8" fill="#e4e4e4"/>'
        f'<rect width="3.5" height="8" fill="#b4b4b4"/></pattern>'
    )
    for name, body in SYMBOLS.items():
        out.append(f'<symbol id="{p}-symbol-{name}" viewBox="0 0 20 20">{body}</symbol>')
    out.append("</defs>")
    return "".join(out)


#: The printed symbols and the markers, each a distinct shape on a 20×20 grid.
SYMBOLS = {
    # Mine: a pick on a gold disc.
    "mine": '<circle cx="10" cy="10" r="9.5" fill="#f2c94c" stroke="#5b4630" stroke-width="1"/>'
    '<path d="M5,15 L14,6" stroke="#3b2f22" stroke-width="2.2" stroke-linecap="round"/>'
    '<path d="M9,4 Q14,3 17,8" stroke="#3b2f22" stroke-width="2.2" fill="none" stroke-linecap="round"/>',
    # Magic Source: a star.
    "magic": '<polygon points="10,0.5 12.6,7 19.5,7.3 14,11.6 16,18.8 10,14.6 4,18.8 6,11.6 0.5,7.3 7.4,7" '
    'fill="#8e44ad" stroke="#fff" stroke-width="1"/>',
    # Cavern: a dark arch.
    "cavern": '<path d="M1,19 V11 A9,9 0 0 1 19,11 V19 Z" fill="#4a3b2f"/>'
    '<path d="M6,19 V13 A4,4 0 0 1 14,13 V19 Z" fill="#111"/>',
    # Mountain marker: a grey peak with snow.
    "mountain": '<path d="M0.5,19 L10,1.5 L19.5,19 Z" fill="#7d6e62" stroke="#3b2f22" stroke-width="1"/>'
    '<path d="M10,1.5 L13.3,7.6 L10,6.5 L6.7,7.6 Z" fill="#fff"/>',
    # Troll's Lair: a hut.
    "lair": '<path d="M1,19 V9 L10,1.5 L19,9 V19 Z" fill="#6e8b3d" stroke="#2e3b19" stroke-width="1.2"/>'
    '<path d="M7,19 V12 H13 V19 Z" fill="#2e3b19"/>',
    # Fortress: a crenellated tower.
    "fortress": '<path d="M2,19 V4 H5.5 V7 H8.2 V4 H11.8 V7 H14.5 V4 H18 V19 Z" fill="#5d6d7e" '
    'stroke="#1c2833" stroke-width="1.2"/><rect x="8" y="12" width="4" height="7" fill="#1c2833"/>',
    # Encampment: a tent.
    "camp": '<path d="M1,18 L10,2 L19,18 Z" fill="#e67e22" stroke="#6e3b0e" stroke-width="1.2"/>'
    '<path d="M10,8 L7,18 H13 Z" fill="#6e3b0e"/>',
    # Hole-in-the-Ground: a black pit.
    "hole": '<ellipse cx="10" cy="11" rx="9.5" ry="7" fill="#8a6d4b"/><ellipse cx="10" cy="11.5" rx="6.5" '
    'ry="4.5" fill="#111"/>',
    # Heroes: a shield.
    "hero": '<path d="M10,1 L18.5,4 V10 Q18.5,16 10,19.5 Q1.5,16 1.5,10 V4 Z" fill="#f1c40f" '
    'stroke="#7d6608" stroke-width="1.3"/><path d="M10,4 V16 M5,9 H15" stroke="#7d6608" stroke-width="1.6"/>',
    # Dragon: a red wing.
    "dragon": '<path d="M1,17 Q4,6 10,2 Q9,8 13,9 Q16,4 19,4 Q17,10 19,16 Q12,12 9,18 Z" fill="#c0392b" '
    'stroke="#641e16" stroke-width="1.2"/>',
    # Conquest cost: a sword.
    "sword": '<path d="M3,17 L15,5 L17,3 L16,6 L4,18 Z" fill="#922b21"/><path d="M4,12 L8,16 M2.5,17.5 L3.5,16.5" '
    'stroke="#922b21" stroke-width="2.2" stroke-linecap="round"/>',
    # The reinforcement die.
    "die": '<rect x="1" y="1" width="18" height="18" rx="4" fill="#fff" stroke="#222" stroke-width="1.6"/>'
    '<circle cx="6" cy="6" r="1.8"/><circle cx="10" cy="10" r="1.8"/><circle cx="14" cy="14" r="1.8"/>',
}

#: The legend's entries: symbol, words.
LEGEND = (
    ("mine", "Mine"),
    ("magic", "Magic Source"),
    ("cavern", "Cavern"),
    ("mountain", "Mountain"),
    ("lair", "Troll's Lair"),
    ("fortress", "Fortress"),
    ("camp", "Encampment"),
    ("hole", "Hole-in-the-Ground"),
    ("hero", "Heroes"),
    ("dragon", "Dragon"),
)


def legend_svg(p: str = "legend") -> Markup:
    """Small pictures of the terrains, symbols and markers with their names, as an HTML list."""
    items = []
    for terrain, (_fill, _ink, name) in TERRAIN.items():
        items.append(
            f'<li><svg width="28" height="20" viewBox="0 0 28 20" aria-hidden="true">'
            f'<rect width="28" height="20" rx="3" fill="url(#{p}-{terrain})" stroke="#5b4630"/></svg>{name}</li>'
        )
    for symbol, name in LEGEND:
        items.append(
            f'<li><svg width="20" height="20" viewBox="0 0 20 20" aria-hidden="true">'
            f'<use href="#{p}-symbol-{symbol}" width="20" height="20"/></svg>{name}</li>'
        )
    items.append(
        f'<li><svg width="40" height="22" viewBox="0 0 40 22" aria-hidden="true">'
        f'<rect x="1" y="1" width="38" height="20" rx="5" fill="url(#{p}-decline)" stroke="#333" '
        f'stroke-dasharray="5 3"/></svg>In Decline tokens</li>'
    )
    items.append(
        f'<li><svg width="40" height="22" viewBox="0 0 40 22" aria-hidden="true">'
        f'<rect x="1" y="1" width="38" height="20" rx="10" fill="#fff" stroke="#922b21" stroke-width="2"/>'
        f'<use href="#{p}-symbol-sword" x="4" y="3" width="15" height="15"/>'
        f'<text x="24" y="16" {TEXT} font-size="13" font-weight="700">3</text></svg>Tokens needed to conquer '
        f"(dashed: only with the die)</li>"
    )
    defs = f'<svg class="legend-defs" width="0" height="0" aria-hidden="true">{_defs(p)}</svg>'
    return Markup(f'{defs}<ul class="legend">{"".join(items)}</ul>')
