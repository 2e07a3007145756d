"""The board's drawing, one for the pages and the mails.

- :mod:`~emails.board.geometry`: the regions' outlines and label points (``<board>.json``, written by
  :mod:`~emails.board.generate`);
- :mod:`~emails.board.public`: what anyone may see on a board (:class:`PublicBoard`), from a state or a
  player view, or from a mail's context;
- :mod:`~emails.board.palette`, :mod:`~emails.board.symbols`: colours, terrain textures, symbols, markers;
- :mod:`~emails.board.scene`: what to draw (:func:`board_scene`), as :mod:`~emails.board.shapes`;
- :mod:`~emails.board.png`: the mails' back-end (a PNG); the pages' (SVG) is ``service.web.maps``.
"""

from __future__ import annotations

from .public import PublicBoard
from .scene import MAIL, PAGE, RegionMark, Scene, Style, board_scene, describe_region, legend

__all__ = [
    "MAIL",
    "PAGE",
    "PublicBoard",
    "RegionMark",
    "Scene",
    "Style",
    "board_scene",
    "describe_region",
    "legend",
]
