"""emails.board.palette: seats told apart with colour-vision deficiencies, texts legible on their colours."""

from __future__ import annotations

import doctest
import itertools
import math

import pytest

from emails.board import palette

# Viénot, Brettel and Mollon (1999): protanopia, deuteranopia and tritanopia, on linear RGB.
DEFICIENCIES = {
    "protanopia": ((0.11238, 0.88762, 0.0), (0.11238, 0.88762, 0.0), (0.00401, -0.00401, 1.0)),
    "deuteranopia": ((0.29275, 0.70725, 0.0), (0.29275, 0.70725, 0.0), (-0.02234, 0.02234, 1.0)),
    "tritanopia": ((1.0, 0.14461, -0.14461), (0.0, 0.85924, 0.14076), (0.0, 0.85924, 0.14076)),
}


def linear(colour: str) -> tuple[float, ...]:
    return tuple(
        (c / 255) / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in palette.rgb(colour)
    )


def seen_with(deficiency: str | None, colour: str) -> tuple[float, ...]:
    rgb = linear(colour)
    if deficiency is None:
        return rgb
    return tuple(sum(m * c for m, c in zip(row, rgb, strict=True)) for row in DEFICIENCIES[deficiency])


def lab(rgb: tuple[float, ...]) -> tuple[float, float, float]:
    """CIELAB (D65) of a linear RGB colour."""
    r, g, b = (min(1.0, max(0.0, c)) for c in rgb)
    x, y, z = (
        (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
        0.2126 * r + 0.7152 * g + 0.0722 * b,
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
    )

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_the_doctests() -> None:
    assert doctest.testmod(palette).failed == 0


@pytest.mark.parametrize("text, background", palette.TEXT_ON)
def test_every_text_has_a_contrast_of_at_least_4_5(text: str, background: str) -> None:
    assert palette.contrast(text, background) >= 4.5


def test_a_seats_number_is_legible_on_its_badge() -> None:
    for text, colour in zip(palette.SEAT_TEXT, palette.SEATS, strict=True):
        assert (text, colour) in palette.TEXT_ON
        assert palette.contrast(text, colour) >= 4.5


@pytest.mark.parametrize("deficiency", [None, *sorted(DEFICIENCIES)])
def test_seat_colours_stay_apart_with_colour_vision_deficiencies(deficiency: str | None) -> None:
    """Each pair of seat colours, as seen with the deficiency, is at least 20 apart in CIELAB (ΔE*76; about
    10 is told apart at a glance): the colour of one seat never passes for another's."""
    for a, b in itertools.combinations(palette.SEATS, 2):
        assert math.dist(lab(seen_with(deficiency, a)), lab(seen_with(deficiency, b))) >= 20, (a, b)


def test_each_seat_has_its_own_shape() -> None:
    assert len(set(palette.SEAT_SHAPES)) == len(palette.SEAT_SHAPES) == len(palette.SEATS)
