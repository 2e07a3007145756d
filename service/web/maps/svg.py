"""The pages' back-end of the board's drawing: a :class:`emails.board.Scene` written as inline SVG.

What to draw is decided in :mod:`emails.board.scene`, for the mails' picture as well; this module only
translates its shapes to SVG elements and adds what a page needs: a link per region (the turn page's
region panel), each region's description as its title and label, ids that two maps on one page keep apart.

Fonts and strokes are presentation attributes, not a <style> block: the SVG then looks the same inline in a
page under a strict Content Security Policy or in a file. Pages add focus and hover looks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

from emails.board.public import PublicBoard
from emails.board.scene import PAGE, RegionMark, Scene, Style, board_scene, legend, seat_badge
from emails.board.shapes import Ellipse, Group, Polygon, Rect, Shape, Stroke, Symbol, Text
from emails.board.symbols import PATTERNS, SYMBOLS

FONT = "system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"


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
    #: The map's accessible name; by default a sentence saying which board and who holds how much.
    label: str | None = None
    #: Each region link's accessible name from its description, e.g. with what a tap on it does (the turn
    #: page: "Forest 7, empty, costs 3: conquer"); by default the description alone.
    region_name: Callable[[int, str], str] | None = None
    #: How large the labels are drawn (the turn page keeps them from shrinking in small regions).
    style: Style = PAGE


def board_svg(state: Mapping[str, Any], options: MapOptions | None = None) -> Markup:
    """The board of ``state`` (``GameState.to_json()`` or a player view) with its tokens and markers."""
    options = options or MapOptions()
    public = PublicBoard.from_state(state, options.seat_names)
    return scene_svg(board_scene(public, options.marks, options.selected, options.style), options)


def scene_svg(scene: Scene, options: MapOptions | None = None) -> Markup:
    """``scene`` as an ``<svg>`` element."""
    options = options or MapOptions()
    p = options.id_prefix
    x, y, width, height = scene.box
    label = options.label or scene.summary
    parts: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="board-map" viewBox="{x:g} {y:g} {width:g} {height:g}" '
        f'role="group" aria-label="{escape(label)}">',
        defs(p),
        '<g class="regions">',
    ]
    for area in scene.areas:
        path = _shape(area.outline, p, title=area.words)
        href = options.href(area.region) if options.href else None
        if href:
            extra = options.link_attributes(area.region) if options.link_attributes else {}
            attributes = "".join(f' {k}="{escape(v)}"' for k, v in extra.items())
            name = options.region_name(area.region, area.words) if options.region_name else area.words
            parts.append(
                f'<a href="{escape(href)}" class="region-link" id="{p}-region-{area.region}" '
                f'data-region="{area.region}" aria-label="{escape(name)}"{attributes}>{path}</a>'
            )
        else:
            parts.append(path)
    parts.append("</g>")
    parts.append(_shape(scene.frame, p))
    parts.append('<g class="highlights" pointer-events="none">')
    parts += [_shape(shape, p) for shape in scene.highlights]
    parts.append('</g><g class="links" pointer-events="none">')
    for link in scene.links:
        *under, top = link.lines
        parts += [_shape(line, p) for line in under]
        parts.append(_shape(top, p, title=link.words))
    parts.append('</g><g class="labels" pointer-events="none" aria-hidden="true">')
    # Each region's labels by its number, so a page can show a change before it is saved (the redeploy).
    parts += [f'<g data-labels="{region}">{_shape(group, p)}</g>' for region, group in enumerate(scene.labels)]
    parts.append("</g>")
    if scene.key:
        parts.append('<g class="key">' + "".join(_shape(shape, p) for shape in scene.key) + "</g>")
    parts.append("</svg>")
    return Markup("".join(parts))


def seat_badge_svg(seat: int, size: int = 20) -> Markup:
    """A seat's badge alone, for the player lists beside the map."""
    return Markup(
        f'<svg class="seat-badge" width="{size}" height="{size}" viewBox="0 0 24 24" aria-hidden="true">'
        f"{_shape(seat_badge(seat, 12, 12, 11), '')}</svg>"
    )


@functools.lru_cache(maxsize=16)
def legend_svg(p: str = "legend") -> Markup:
    """Small pictures of the terrains, symbols, markers and tokens with their names, as an HTML list."""
    items = [
        f'<li><svg width="{entry.width:g}" height="{entry.height:g}" viewBox="0 0 {entry.width:g} {entry.height:g}" '
        f'aria-hidden="true">{"".join(_shape(s, p) for s in entry.picture)}</svg>{escape(entry.name)}</li>'
        for entry in legend()
    ]
    definitions = f'<svg class="legend-defs" width="0" height="0" aria-hidden="true">{defs(p)}</svg>'
    return Markup(f'{definitions}<ul class="legend">{"".join(items)}</ul>')


# -- shapes -------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=16)
def defs(p: str) -> str:
    """The patterns and symbols the shapes refer to, with ids prefixed by ``p`` (the same for every map with
    that prefix: written once)."""
    out = ["<defs>"]
    for name, pattern in PATTERNS.items():
        size = f"{pattern.size:g}"
        out.append(
            f'<pattern id="{p}-{name}" width="{size}" height="{size}" patternUnits="userSpaceOnUse">'
            f'<rect width="{size}" height="{size}" fill="{pattern.background}"/>'
            + "".join(_shape(s, p) for s in pattern.items)
            + "</pattern>"
        )
    for name, shapes in SYMBOLS.items():
        out.append(
            f'<symbol id="{p}-symbol-{name}" viewBox="0 0 20 20">{"".join(_shape(s, p) for s in shapes)}</symbol>'
        )
    out.append("</defs>")
    return "".join(out)


def _paint(fill: str | None, stroke: Stroke | None, p: str, line: bool = False) -> str:
    if fill is None:
        out = 'fill="none"'
    elif fill.startswith("pattern:"):
        out = f'fill="url(#{p}-{fill[8:]})"'
    else:
        out = f'fill="{fill}"'
    if stroke:
        out += f' stroke="{stroke.colour}" stroke-width="{stroke.width:g}" stroke-linejoin="round"'
        if stroke.dash:
            out += f' stroke-dasharray="{" ".join(f"{d:g}" for d in stroke.dash)}"'
        if line:
            out += ' stroke-linecap="round"'
    return out


def _class(cls: str) -> str:
    return f'class="{cls}" ' if cls else ""


@functools.lru_cache(maxsize=4096)
def _shape(shape: Shape, p: str, title: str | None = None) -> str:
    """``shape`` as SVG. Shapes are values (``emails.board.shapes``): an equal shape is written the same, so
    what every map of a board repeats (the regions' outlines, the frame, the symbols) is written once."""
    return _write(shape, p, title)


def _write(shape: Shape, p: str, title: str | None) -> str:
    inner = f"<title>{escape(title)}</title>" if title else ""
    if isinstance(shape, Polygon):
        d = "M" + "L".join(f"{x:g},{y:g}" for x, y in shape.points) + ("Z" if shape.closed else "")
        opening = f'<path {_class(shape.cls)}d="{d}" {_paint(shape.fill, shape.stroke, p, line=not shape.closed)}'
        return f"{opening}>{inner}</path>" if inner else f"{opening}/>"
    if isinstance(shape, Ellipse):
        paint = _paint(shape.fill, shape.stroke, p)
        if shape.rx == shape.ry:
            return f'<circle cx="{shape.cx:g}" cy="{shape.cy:g}" r="{shape.rx:g}" {paint}/>'
        return f'<ellipse cx="{shape.cx:g}" cy="{shape.cy:g}" rx="{shape.rx:g}" ry="{shape.ry:g}" {paint}/>'
    if isinstance(shape, Rect):
        radius = f' rx="{shape.radius:g}"' if shape.radius else ""
        return (
            f'<rect {_class(shape.cls)}x="{shape.x:g}" y="{shape.y:g}" width="{shape.width:g}" '
            f'height="{shape.height:g}"{radius} {_paint(shape.fill, shape.stroke, p)}/>'
        )
    if isinstance(shape, Text):
        anchor = f' text-anchor="{shape.anchor}"' if shape.anchor != "start" else ""
        weight = f' font-weight="{shape.weight}"' if shape.weight != 400 else ""
        italic = ' font-style="italic"' if shape.italic else ""
        return (
            f'<text {_class(shape.cls)}x="{shape.x:g}" y="{shape.y:g}"{anchor} font-family="{FONT}" '
            f'font-size="{shape.size:g}"{weight}{italic} fill="{shape.fill}">{escape(shape.text)}</text>'
        )
    if isinstance(shape, Symbol):
        return (
            f'<use href="#{p}-symbol-{shape.name}" x="{shape.x:g}" y="{shape.y:g}" width="{shape.size:g}" '
            f'height="{shape.size:g}"/>'
        )
    assert isinstance(shape, Group)
    attributes = [f'class="{shape.cls}"'] if shape.cls else []
    transform = [f"translate({shape.x:g},{shape.y:g})"] if shape.x or shape.y else []
    transform += [f"scale({shape.scale:g})"] if shape.scale != 1 else []
    if transform:
        attributes.append(f'transform="{" ".join(transform)}"')
    opening = "<g " + " ".join(attributes) + ">" if attributes else "<g>"
    return opening + "".join(_shape(s, p) for s in shape.items) + "</g>"
