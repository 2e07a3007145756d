"""The stored board shapes (emails/board/<board>.json) draw each board's topology faithfully.

Neighbours share an edge (or, where a board cannot be drawn so, are joined by a visible link), regions that
are not neighbours never share one, the shapes tile the frame, and exactly the border regions touch it.
"""

from __future__ import annotations

import itertools

import pytest

import rules
from emails.board.generate import polygon_area, segments_cross
from emails.board.geometry import geometry


def segments(polygon: tuple[tuple[float, float], ...]) -> set[frozenset[tuple[float, float]]]:
    return {frozenset((polygon[i], polygon[(i + 1) % len(polygon)])) for i in range(len(polygon))}


@pytest.fixture(params=rules.BOARD_NAMES)
def board_and_shapes(request: pytest.FixtureRequest) -> tuple[rules.Board, object]:
    return rules.load_board(request.param), geometry(request.param)


def test_every_region_has_a_shape(board_and_shapes) -> None:
    board, geo = board_and_shapes
    assert [r.id for r in geo.regions] == list(range(len(board)))
    for shape in geo.regions:
        assert len(shape.polygon) >= 3
        assert polygon_area(list(shape.polygon)) > 1000, f"region {shape.id} is too small to click"


def test_neighbours_share_an_edge_and_only_neighbours_do(board_and_shapes) -> None:
    board, geo = board_and_shapes
    edges = [segments(shape.polygon) for shape in geo.regions]
    links = {frozenset(pair) for pair in geo.links}
    for a, b in itertools.combinations(range(len(board)), 2):
        shared = edges[a] & edges[b]
        adjacent = b in board.neighbours[a]
        if adjacent and frozenset((a, b)) not in links:
            assert shared, f"regions {a} and {b} are adjacent but share no edge"
        if not adjacent:
            assert not shared, f"regions {a} and {b} share an edge but are not adjacent"
    for a, b in geo.links:
        assert b in board.neighbours[a], f"link {a}–{b} joins regions that are not adjacent"
        assert not edges[a] & edges[b]


def test_shapes_tile_the_frame(board_and_shapes) -> None:
    _board, geo = board_and_shapes
    total = sum(polygon_area(list(shape.polygon)) for shape in geo.regions)
    assert total == pytest.approx(geo.width * geo.height, rel=1e-4)
    # No two outlines cross (then, with the areas adding up, nothing overlaps).
    all_segments = sorted({tuple(sorted(s)) for shape in geo.regions for s in segments(shape.polygon)})
    for (p1, p2), (q1, q2) in itertools.combinations(all_segments, 2):
        if {p1, p2} & {q1, q2}:
            continue
        assert not segments_cross(p1, p2, q1, q2), f"{p1}–{p2} crosses {q1}–{q2}"


def test_exactly_the_border_regions_touch_the_frame(board_and_shapes) -> None:
    board, geo = board_and_shapes

    def on_frame(x: float, y: float) -> bool:
        return x in (0, geo.width) or y in (0, geo.height)

    for shape in geo.regions:
        touching = sum(
            1
            for i in range(len(shape.polygon))
            if on_frame(*shape.polygon[i]) and on_frame(*shape.polygon[(i + 1) % len(shape.polygon)])
        )
        assert bool(touching) == board.regions[shape.id].border, f"region {shape.id}"


def test_label_point_lies_inside_its_region(board_and_shapes) -> None:
    from emails.board.generate import inside

    _board, geo = board_and_shapes
    for shape in geo.regions:
        assert inside(list(shape.polygon), shape.center), f"region {shape.id}"
        assert shape.room >= 20
