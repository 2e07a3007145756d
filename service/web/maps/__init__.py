"""The board on the pages: the drawing of :mod:`emails.board` (shared with the mails' picture) as inline SVG.

:func:`board_svg` draws a state (its JSON, or a ``rules.player_view`` of it) as an inline SVG string::

    board_svg(rules.player_view(state, seat))            # what that seat may see
    board_svg(view, MapOptions(href=..., marks=...))     # clickable regions, conquest costs
"""

from __future__ import annotations

from emails.board.geometry import Geometry, RegionShape, geometry
from emails.board.palette import SEAT_SHAPES
from emails.board.palette import SEATS as SEAT_COLOURS
from emails.board.public import PublicBoard
from emails.board.scene import Style, board_title, describe_region
from service.web.maps.svg import MapOptions, RegionMark, board_svg, legend_svg, seat_badge_svg

__all__ = [
    "SEAT_COLOURS",
    "SEAT_SHAPES",
    "Geometry",
    "MapOptions",
    "PublicBoard",
    "RegionMark",
    "RegionShape",
    "Style",
    "board_svg",
    "board_title",
    "describe_region",
    "geometry",
    "legend_svg",
    "seat_badge_svg",
]
