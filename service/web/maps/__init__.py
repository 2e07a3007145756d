"""The board pictures: region shapes stored as data beside this module, and the SVG drawn from a state.

``<board>.json`` (written once by ``python -m service.web.maps.generate``) gives each region of a board its
outline (a polygon in SVG user units), the point where its labels go and the room around that point, and
``links``: adjacencies drawn as a line because they are not a shared edge. :func:`board_svg` draws a state
(its JSON, or a ``rules.player_view`` of it) as an inline SVG string, for the pages and for mails::

    board_svg(rules.player_view(state, seat))            # what that seat may see
    board_svg(view, MapOptions(href=..., marks=...))     # clickable regions, conquest costs
"""

from __future__ import annotations

from service.web.maps.geometry import Geometry, RegionShape, geometry
from service.web.maps.svg import (
    SEAT_COLOURS,
    SEAT_SHAPES,
    MapOptions,
    RegionMark,
    board_svg,
    legend_svg,
    seat_badge_svg,
)

__all__ = [
    "SEAT_COLOURS",
    "SEAT_SHAPES",
    "Geometry",
    "MapOptions",
    "RegionMark",
    "RegionShape",
    "board_svg",
    "geometry",
    "legend_svg",
    "seat_badge_svg",
]
