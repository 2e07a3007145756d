"""The board's colours, one set for the pages and the mails.

Seats take the Okabe–Ito palette (Okabe and Ito, "Color Universal Design", 2008), whose colours stay apart
with every common colour-vision deficiency; colour is still never the only cue: each seat also has a shape
and its number on its badge, each terrain a texture, In Decline tokens stripes. Every text is written on a
colour that gives it a contrast of at least 4.5:1 (WCAG 2, "Contrast (Minimum)"); :data:`TEXT_ON` lists
those pairs and the tests check them.
"""

from __future__ import annotations

#: Seat colours, in seat order: blue, vermillion, yellow, reddish purple, black. Of the palette's eight, the
#: five whose closest pair stays furthest apart (CIELAB) with normal vision, protanopia, deuteranopia and
#: tritanopia (tests/emails/board/test_palette.py).
SEATS = ("#0072B2", "#D55E00", "#F0E442", "#CC79A7", "#000000")
#: The number on a seat's badge: white on the blue and the black, black on the others (each above 4.5:1).
SEAT_TEXT = ("#FFFFFF", "#000000", "#000000", "#000000", "#FFFFFF")
SEAT_SHAPES = ("circle", "square", "triangle", "diamond", "hexagon")

#: The Lost Tribe's badge ("LT") and the outline of its token chips.
LOST_TRIBE = "#D9C9A8"
LOST_TRIBE_EDGE = "#6B5A48"

#: Terrain: fill, texture ink and name.
TERRAIN = {
    "farmland": ("#F3E6A4", "#C9B45A", "Farmland"),
    "forest": ("#8CC084", "#3F7F3A", "Forest"),
    "hill": ("#D2DD8F", "#8D9A3F", "Hill"),
    "mountain": ("#C4B5A5", "#7A6857", "Mountain"),
    "swamp": ("#9FC2B1", "#4F7C68", "Swamp"),
    "sea": ("#7FB2DC", "#3F7FB5", "Sea"),
    "lake": ("#A9D0EE", "#4F8FC4", "Lake"),
}

#: Region outlines and numbers, the frame, labels' paper, dark text.
INK = "#3B2F22"
FRAME = "#5B4630"
PAPER = "#FFFDF7"
DARK = "#111111"
WHITE = "#FFFFFF"
#: The names of Seas and the Lake.
WATER_INK = "#1B4F72"
#: In Decline: light and dark stripes, dashed outline.
DECLINE_LIGHT = "#E4E4E4"
DECLINE_DARK = "#B4B4B4"
DECLINE_EDGE = "#333333"
#: What conquering a region costs (turn page), and the selected region's outline.
TARGET = "#922B21"
SELECTED = "#111111"

#: Every (text, background) pair the drawing writes: each at least 4.5:1.
TEXT_ON = (
    *zip(SEAT_TEXT, SEATS, strict=True),
    (INK, LOST_TRIBE),
    (INK, PAPER),
    (DARK, PAPER),
    (DARK, DECLINE_LIGHT),
    (DARK, DECLINE_DARK),
    (WATER_INK, PAPER),
    (TARGET, WHITE),
)


def rgb(colour: str) -> tuple[int, int, int]:
    """``"#0072B2"`` → ``(0, 114, 178)``."""
    value = colour.lstrip("#")
    if len(value) == 3:
        value = "".join(c * 2 for c in value)
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def luminance(colour: str) -> float:
    """Relative luminance (WCAG 2)."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(text: str, background: str) -> float:
    """Contrast ratio of two colours (WCAG 2), from 1 to 21.

    >>> round(contrast("#000000", "#FFFFFF"), 1), round(contrast("#0072B2", "#FFFFFF"), 2)
    (21.0, 5.19)
    """
    a, b = sorted((luminance(text), luminance(background)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def seat_colour(seat: int) -> str:
    return SEATS[seat % len(SEATS)]
