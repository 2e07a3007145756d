"""The turn page's map ring around the focused region (pages.js, issue 35): two strokes, black outside and
white inside, so that one of them stands at 3:1 or more (WCAG 2.2, "Focus Appearance" and "Non-text
Contrast") against every colour the ring is drawn over: each terrain's fill and texture, the regions'
outlines, the frame, the conquest targets' dashed outline, the seats' colours and the In Decline stripes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from emails.board import palette

PAGES_JS = Path(__file__).resolve().parents[3] / "service" / "web" / "static" / "pages.js"


def ring_colours() -> tuple[str, str]:
    script = PAGES_JS.read_text(encoding="utf-8")
    outer = re.search(r'const FOCUS_RING_OUTER = "(#[0-9A-Fa-f]{6})"', script)
    inner = re.search(r'const FOCUS_RING_INNER = "(#[0-9A-Fa-f]{6})"', script)
    assert outer and inner, "pages.js names the ring's two colours"
    return outer.group(1), inner.group(1)


UNDER_THE_RING = {
    **{f"{name} fill": fill for name, (fill, _, _) in palette.TERRAIN.items()},
    **{f"{name} texture": ink for name, (_, ink, _) in palette.TERRAIN.items()},
    "region outline": palette.INK,
    "frame": palette.FRAME,
    "target outline": palette.TARGET,
    "In Decline light": palette.DECLINE_LIGHT,
    "In Decline dark": palette.DECLINE_DARK,
    **{f"seat {n + 1}": colour for n, colour in enumerate(palette.SEATS)},
}


@pytest.mark.parametrize("name", sorted(UNDER_THE_RING))
def test_the_focus_ring_stands_out_at_3_to_1_on_every_colour_of_the_map(name: str) -> None:
    outer, inner = ring_colours()
    colour = UNDER_THE_RING[name]
    best = max(palette.contrast(outer, colour), palette.contrast(inner, colour))
    assert best >= 3, f"{name} ({colour}): {best:.2f}:1"


def test_the_ring_s_two_strokes_stand_apart() -> None:
    outer, inner = ring_colours()
    assert palette.contrast(outer, inner) >= 3
