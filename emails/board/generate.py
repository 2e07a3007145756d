"""Draw the region shapes of the four boards once, from their adjacency alone, and store them as data.

Run by hand when a board's topology changes (``python -m emails.board.generate``); the drawing only reads
the JSON files this writes beside it (``<board>.json``). There is no official geometry (the board files
say which regions border which, not where they lie), so the picture is built to make that topology
readable:

1. The border regions, in the order they follow each other around the edge of the board, are pinned to
   the frame of a rectangle; every other region is placed at the average of its neighbours (Tutte's
   barycentric embedding). For a planar adjacency graph whose outer cycle is a face, that gives a drawing
   where no two borders cross.
2. Each region's shape is built around its point from the drawing (the dual of the drawing): its
   boundary runs through the midpoint of the line to each neighbour and the centre of each face between
   two consecutive neighbours; border regions reach out to the frame. So two regions share an edge
   exactly when they are adjacent, and non-adjacent regions meet at most in a corner point.
3. A random local search moves the points (the frame points slide along the frame) to even out the
   areas and round the shapes, keeping only moves that leave every shape a simple polygon that tiles
   the frame.

An adjacency that cannot be a shared edge (a non-planar board) would be stored under ``links`` and drawn
as a visible line; none of the four boards needs one.
"""

from __future__ import annotations

import json
import math
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

import rules

HERE = Path(__file__).parent

#: The frame, in SVG user units (the printed boards are about 1.45 times as wide as they are high).
WIDTH = 1000.0
HEIGHT = 690.0
PERIMETER = 2 * (WIDTH + HEIGHT)

Point = tuple[float, float]


# -- the topology ----------------------------------------------------------------------------------------
@dataclass
class Topology:
    """A board's regions and adjacencies; ``links`` are adjacencies drawn as lines, not shared edges."""

    name: str
    terrain: list[str]
    border: list[bool]
    neighbours: list[set[int]]
    links: list[tuple[int, int]] = field(default_factory=list)

    @classmethod
    def of(cls, name: str) -> Topology:
        board = rules.load_board(name)
        return cls(
            name=name,
            terrain=[r.terrain for r in board.regions],
            border=[r.border for r in board.regions],
            neighbours=[set(n) for n in board.neighbours],
        )

    @property
    def edges(self) -> list[tuple[int, int]]:
        return [(a, b) for a in range(len(self.neighbours)) for b in sorted(self.neighbours[a]) if a < b]

    def linking(self, a: int, b: int) -> Topology:
        """The same board with the adjacency a–b drawn as a line."""
        neighbours = [set(n) for n in self.neighbours]
        neighbours[a].discard(b)
        neighbours[b].discard(a)
        return Topology(self.name, self.terrain, self.border, neighbours, [*self.links, (min(a, b), max(a, b))])


# -- the outer cycle --------------------------------------------------------------------------------------
def border_cycles(top: Topology, limit: int = 50) -> list[list[int]]:
    """Cycles through every border region, each adjacent to the next (at most ``limit`` of them).

    They start at the lowest numbered border region (regions are numbered left to right and top to
    bottom on the printed board, so it lies near the top left corner) and go on to the lower numbered
    of its two cycle neighbours first, which follows the top edge from left to right.
    """
    border = [v for v, b in enumerate(top.border) if b]
    inside = set(border)
    start = border[0]
    found: list[list[int]] = []

    def extend(path: list[int], seen: set[int]) -> None:
        if len(found) >= limit:
            return
        last = path[-1]
        if len(path) == len(border):
            if start in top.neighbours[last] and path[1] < path[-1]:
                found.append(list(path))
            return
        for nxt in sorted(top.neighbours[last] & inside - seen):
            seen.add(nxt)
            path.append(nxt)
            extend(path, seen)
            path.pop()
            seen.discard(nxt)

    extend([start], {start})
    return found


def frame_point(s: float) -> Point:
    """The point at arc length ``s`` along the frame, clockwise on the screen from the top left corner."""
    s %= PERIMETER
    if s <= WIDTH:
        return (s, 0.0)
    s -= WIDTH
    if s <= HEIGHT:
        return (WIDTH, s)
    s -= HEIGHT
    if s <= WIDTH:
        return (WIDTH - s, HEIGHT)
    s -= WIDTH
    return (0.0, HEIGHT - s)


CORNERS = (0.0, WIDTH, WIDTH + HEIGHT, 2 * WIDTH + HEIGHT)


def frame_side(s: float) -> int:
    """0 top, 1 right, 2 bottom, 3 left (corners excluded: -1)."""
    s %= PERIMETER
    if s in CORNERS:
        return -1
    return sum(1 for c in CORNERS[1:] if s > c)


def frame_corners(s0: float, s1: float) -> list[Point]:
    """The frame's corners strictly between arc lengths ``s0`` and ``s1`` (clockwise), in order."""
    if s1 < s0:
        s1 += PERIMETER
    return [frame_point(c + turn) for turn in (0.0, PERIMETER) for c in CORNERS if s0 < c + turn < s1]


def tutte(neighbours: list[set[int]], fixed: dict[int, Point]) -> list[Point]:
    """The ``fixed`` points pinned, every other region at the average of its neighbours."""
    pos: list[Point] = [fixed.get(v, (WIDTH / 2, HEIGHT / 2)) for v in range(len(neighbours))]
    free = [v for v in range(len(neighbours)) if v not in fixed]
    for _ in range(5000):
        delta = 0.0
        for v in free:
            xs = [pos[u][0] for u in neighbours[v]]
            ys = [pos[u][1] for u in neighbours[v]]
            new = (sum(xs) / len(xs), sum(ys) / len(ys))
            delta = max(delta, abs(new[0] - pos[v][0]) + abs(new[1] - pos[v][1]))
            pos[v] = new
        if delta < 1e-7:
            break
    return pos


def on_oval(t: float, inset: float = 0.12) -> Point:
    """A point of a strictly convex, nearly rectangular curve inside the frame (a superellipse);
    ``t`` in [0, 1) goes clockwise on the screen from the top left."""
    angle = math.pi * 5 / 4 + 2 * math.pi * t  # top left first
    c, s = math.cos(angle), math.sin(angle)
    x = math.copysign(abs(c) ** 0.5, c)
    y = math.copysign(abs(s) ** 0.5, s)
    return (WIDTH / 2 + x * WIDTH * (0.5 - inset / 2), HEIGHT / 2 + y * HEIGHT * (0.5 - inset / 2))


def frame_arc_towards(p: Point) -> float:
    """Arc length of the frame point seen from the centre of the frame in the direction of ``p``."""
    dx, dy = p[0] - WIDTH / 2, p[1] - HEIGHT / 2
    scale = min(
        (WIDTH / 2) / abs(dx) if dx else math.inf,
        (HEIGHT / 2) / abs(dy) if dy else math.inf,
    )
    x, y = WIDTH / 2 + dx * scale, HEIGHT / 2 + dy * scale
    if y <= 1e-9:
        return x
    if x >= WIDTH - 1e-9:
        return WIDTH + y
    if y >= HEIGHT - 1e-9:
        return WIDTH + HEIGHT + (WIDTH - x)
    return 2 * WIDTH + HEIGHT + (HEIGHT - y)


def _cross(o: Point, a: Point, b: Point) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def segments_cross(p1: Point, p2: Point, q1: Point, q2: Point) -> bool:
    """Whether two segments cross or overlap (touching at a shared end point does not count)."""
    d1, d2 = _cross(q1, q2, p1), _cross(q1, q2, p2)
    d3, d4 = _cross(p1, p2, q1), _cross(p1, p2, q2)
    return d1 * d2 < -1e-9 and d3 * d4 < -1e-9


def crossings(top: Topology, pos: list[Point]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    edges = top.edges
    out = []
    for i, (a, b) in enumerate(edges):
        for c, d in edges[i + 1 :]:
            if len({a, b, c, d}) == 4 and segments_cross(pos[a], pos[b], pos[c], pos[d]):
                out.append(((a, b), (c, d)))
    return out


# -- faces and shapes -------------------------------------------------------------------------------------
def rotation(top: Topology, pos: list[Point]) -> list[list[int]]:
    """Each region's neighbours in clockwise order on the screen (y grows downwards)."""
    out = []
    for v, (x, y) in enumerate(pos):
        out.append(sorted(top.neighbours[v], key=lambda u: math.atan2(pos[u][1] - y, pos[u][0] - x)))
    return out


def faces(top: Topology, rot: list[list[int]]) -> dict[tuple[int, int], tuple[int, ...]]:
    """The face to the right of each directed edge (u, v), as its cycle of regions.

    The face right of u→v goes on with v→w, w being the neighbour of v just before u in v's clockwise
    order (the sharpest turn to the right).
    """
    by_edge: dict[tuple[int, int], tuple[int, ...]] = {}
    for a, b in top.edges:
        for u, v in ((a, b), (b, a)):
            if (u, v) in by_edge:
                continue
            cycle = [u]
            x, y = u, v
            while (x, y) != (u, v) or len(cycle) == 1:
                cycle.append(y)
                around = rot[y]
                x, y = y, around[(around.index(x) - 1) % len(around)]
            face = tuple(cycle[:-1])
            for i in range(len(face)):
                by_edge[(face[i], face[(i + 1) % len(face)])] = face
    return by_edge


def polygon_area(poly: list[Point]) -> float:
    """Signed area; positive for a clockwise polygon on the screen (y down)."""
    s = 0.0
    for i in range(len(poly)):
        x1, y1 = poly[i]
        x2, y2 = poly[(i + 1) % len(poly)]
        s += x1 * y2 - x2 * y1
    return s / 2


def is_simple(poly: list[Point]) -> bool:
    n = len(poly)
    for i in range(n):
        for j in range(i + 2, n):
            if (i, j) != (0, n - 1) and segments_cross(poly[i], poly[(i + 1) % n], poly[j], poly[(j + 1) % n]):
                return False
    return True


def _mid(a: Point, b: Point) -> Point:
    return ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)


class PlanarMap:
    """The region outlines as shared corner points: moving one point moves every outline through it.

    Corner points are of four kinds: the centre of a face of the drawing (where three or more regions
    meet), a point on the border between two adjacent regions, a point where the border between two
    regions of the outer cycle meets the frame (it slides along the frame), and the frame's corners
    (fixed).
    """

    def __init__(self, top: Topology, cycle: list[int], pos: list[Point], gaps: dict[int, float]) -> None:
        self.top = top
        rot = rotation(top, pos)
        face_of = faces(top, rot)
        self.points: list[Point] = []
        #: Arc length along the frame of each sliding point; fixed corners are absent from both dicts.
        self.arc: dict[int, float] = {}
        self.fixed: set[int] = set()
        keys: dict[object, int] = {}

        def point(key: object, at: Point) -> int:
            if key not in keys:
                keys[key] = len(self.points)
                self.points.append(at)
            return keys[key]

        def face_point(face: tuple[int, ...]) -> int:
            key = ("face", min(face[i:] + face[:i] for i in range(len(face))))
            return point(key, (sum(pos[v][0] for v in face) / len(face), sum(pos[v][1] for v in face) / len(face)))

        def edge_point(a: int, b: int) -> int:
            return point(("edge", min(a, b), max(a, b)), _mid(pos[a], pos[b]))

        def gap_point(v: int) -> int:
            index = point(("gap", v), frame_point(gaps[v]))
            self.arc[index] = gaps[v]
            return index

        def corner_points(s0: float, s1: float) -> list[int]:
            out = []
            for p in frame_corners(s0, s1):
                out.append(point(("corner", p), p))
                self.fixed.add(out[-1])
            return out

        next_on_cycle = {cycle[i]: cycle[(i + 1) % len(cycle)] for i in range(len(cycle))}
        prev_on_cycle = {b: a for a, b in next_on_cycle.items()}
        self.outlines: list[list[int]] = []
        for v, around in enumerate(rot):
            outline: list[int] = []
            if v in next_on_cycle:
                prev, nxt = prev_on_cycle[v], next_on_cycle[v]
                # Along the frame from the gap before v to the gap after it, then back inside through
                # the neighbours from nxt round to prev (clockwise), the outer face lying between them.
                outline += [gap_point(prev), *corner_points(gaps[prev], gaps[v]), gap_point(v)]
                start = around.index(nxt)
                seq = [around[(start + k) % len(around)] for k in range(len(around))]
                seq = seq[: seq.index(prev) + 1]
            else:
                seq = around
            for i, u in enumerate(seq):
                outline.append(edge_point(v, u))
                if v not in next_on_cycle or i < len(seq) - 1:
                    outline.append(face_point(face_of[(v, u)]))
            self.outlines.append(outline)
        self.regions_at: list[list[int]] = [[] for _ in self.points]
        for v, outline in enumerate(self.outlines):
            for p in outline:
                self.regions_at[p].append(v)
        # Each segment of an outline once, as a pair of point indices.
        self.segments = sorted(
            {tuple(sorted((o[i], o[(i + 1) % len(o)]))) for o in self.outlines for i in range(len(o))}
        )
        self.segments_at: list[list[tuple[int, int]]] = [[] for _ in self.points]
        for a, b in self.segments:
            self.segments_at[a].append((a, b))
            self.segments_at[b].append((a, b))

    def polygon(self, v: int) -> list[Point]:
        return [self.points[p] for p in self.outlines[v]]

    def polygons(self) -> list[list[Point]]:
        return [self.polygon(v) for v in range(len(self.outlines))]

    def valid_around(self, p: int) -> bool:
        """After moving point ``p``: its outlines are simple and clockwise, its segments cross nothing."""
        for v in self.regions_at[p]:
            poly = self.polygon(v)
            if polygon_area(poly) <= 1.0 or not is_simple(poly):
                return False
        pts = self.points
        for a, b in self.segments_at[p]:
            pa, pb = pts[a], pts[b]
            x0, x1 = min(pa[0], pb[0]), max(pa[0], pb[0])
            y0, y1 = min(pa[1], pb[1]), max(pa[1], pb[1])
            for c, d in self.segments:
                if c in (a, b) or d in (a, b):
                    continue
                pc, pd = pts[c], pts[d]
                if max(pc[0], pd[0]) < x0 or min(pc[0], pd[0]) > x1 or max(pc[1], pd[1]) < y0 or min(pc[1], pd[1]) > y1:
                    continue
                if segments_cross(pa, pb, pc, pd):
                    return False
        return True

    def valid(self) -> bool:
        """Every outline simple and clockwise, and no two segments crossing: the outlines tile the frame."""
        return all(self.valid_around(p) for p in range(len(self.points)))


# -- making it pleasant -----------------------------------------------------------------------------------
def target_areas(top: Topology) -> list[float]:
    """Seas larger than land regions, the Lake about a land region."""
    weights = [2.0 if t == "sea" else 1.0 for t in top.terrain]
    unit = WIDTH * HEIGHT / sum(weights)
    return [w * unit for w in weights]


def region_cost(poly: list[Point], target: float) -> float:
    """Lower is better: the area near its target (above rather than below), a round shape, no very short side,
    no neck, no spike."""
    area = polygon_area(poly)
    sides = [math.dist(poly[i], poly[(i + 1) % len(poly)]) for i in range(len(poly))]
    perimeter = sum(sides)
    roundness = 4 * math.pi * area / (perimeter * perimeter)
    # A region too small to hold its labels is worse than one too large.
    ratio = math.log(area / target)
    value = ratio**2 * (3 if ratio < 0 else 1) + 1.5 * (1 - roundness) ** 2
    value += sum(0.01 * (14 - d) for d in sides if d < 14)
    # Necks and slivers: a corner close to a side of its own outline that does not end at it.
    n = len(poly)
    for i in range(n):
        for j in range(n):
            if j != i and (j + 1) % n != i:
                d = _segment_distance(poly[i], poly[j], poly[(j + 1) % n])
                if d < 25:
                    value += 0.02 * (25 - d)
    # Notches and spikes: turns sharper than 60 degrees either way.
    for i in range(n):
        a, b, c = poly[i - 1], poly[i], poly[(i + 1) % n]
        turn = math.atan2(_cross(a, b, c), (b[0] - a[0]) * (c[0] - b[0]) + (b[1] - a[1]) * (c[1] - b[1]))
        if abs(turn) > math.pi / 3 and (turn < 0 or abs(turn) > 2 * math.pi / 3):
            value += 0.05 * (abs(turn) - math.pi / 3)
    return value


def relax(shapes: PlanarMap, rnd: random.Random, steps: int) -> float:
    """Random local search over the movable points, keeping the moves that tile and cost less."""
    targets = target_areas(shapes.top)
    costs = [region_cost(shapes.polygon(v), targets[v]) for v in range(len(targets))]
    movable = [p for p in range(len(shapes.points)) if p not in shapes.fixed]
    for step in range(steps):
        scale = 25.0 * (1 - step / steps) + 1.5
        p = rnd.choice(movable)
        saved = shapes.points[p]
        if p in shapes.arc:
            saved_arc = shapes.arc[p]
            arc = saved_arc + rnd.gauss(0, scale)
            if frame_side(arc) != frame_side(saved_arc):
                continue  # the outlines list the corners they go round: a gap stays on its side
            shapes.arc[p] = arc % PERIMETER
            shapes.points[p] = frame_point(arc)
        else:
            shapes.points[p] = (saved[0] + rnd.gauss(0, scale), saved[1] + rnd.gauss(0, scale))
        touched = shapes.regions_at[p]
        if shapes.valid_around(p):
            new = {v: region_cost(shapes.polygon(v), targets[v]) for v in touched}
            if sum(new.values()) < sum(costs[v] for v in touched):
                for v, c in new.items():
                    costs[v] = c
                continue
        shapes.points[p] = saved
        if p in shapes.arc:
            shapes.arc[p] = saved_arc
    return sum(costs)


def start_drawing(top: Topology, cycle: list[int]) -> tuple[list[Point], dict[int, float]] | None:
    """Tutte's drawing with the cycle on a convex oval, and frame gaps facing each cycle edge; None if
    some borders cross (then this cycle is not a face of a planar drawing)."""
    fixed = {v: on_oval(i / len(cycle)) for i, v in enumerate(cycle)}
    pos = tutte(top.neighbours, fixed)
    # A region with two neighbours lies on the line between them: move it off, to whichever side
    # crosses nothing.
    for v in range(len(pos)):
        if v in fixed or len(top.neighbours[v]) != 2:
            continue
        a, b = sorted(top.neighbours[v])
        dx, dy = pos[b][0] - pos[a][0], pos[b][1] - pos[a][1]
        saved = pos[v]
        for shift in (0.3, -0.3, 0.1, -0.1, 0.03, -0.03):
            pos[v] = (saved[0] - shift * dy, saved[1] + shift * dx)
            if not crossings(top, pos):
                break
    if crossings(top, pos):
        return None
    gaps = {v: frame_arc_towards(_mid(pos[v], pos[cycle[(i + 1) % len(cycle)]])) for i, v in enumerate(cycle)}
    return pos, gaps


# -- label spots ------------------------------------------------------------------------------------------
def inside(poly: list[Point], p: Point) -> bool:
    x, y = p
    hit = False
    n = len(poly)
    for i in range(n):
        (x1, y1), (x2, y2) = poly[i], poly[(i + 1) % n]
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            hit = not hit
    return hit


def _segment_distance(p: Point, a: Point, b: Point) -> float:
    dx, dy = b[0] - a[0], b[1] - a[1]
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2))
    return math.dist(p, (a[0] + t * dx, a[1] + t * dy))


def edge_distance(poly: list[Point], p: Point) -> float:
    return min(_segment_distance(p, poly[i], poly[(i + 1) % len(poly)]) for i in range(len(poly)))


def label_spot(poly: list[Point]) -> tuple[Point, float]:
    """The point inside farthest from the outline (a pole of inaccessibility), and that distance."""
    xs, ys = [p[0] for p in poly], [p[1] for p in poly]
    best: tuple[Point, float] = ((sum(xs) / len(xs), sum(ys) / len(ys)), 0.0)
    step = max(max(xs) - min(xs), max(ys) - min(ys)) / 24
    candidates = [
        (min(xs) + i * step, min(ys) + j * step)
        for i in range(int((max(xs) - min(xs)) / step) + 1)
        for j in range(int((max(ys) - min(ys)) / step) + 1)
    ]
    for _ in range(4):
        for c in candidates:
            if inside(poly, c):
                d = edge_distance(poly, c)
                if d > best[1]:
                    best = (c, d)
        step /= 3
        (cx, cy), _d = best
        candidates = [(cx + i * step, cy + j * step) for i in range(-3, 4) for j in range(-3, 4)]
    return best


# -- the whole board --------------------------------------------------------------------------------------
def draw(top: Topology, seed: int = 1, steps: int = 40000) -> tuple[float, dict] | None:
    """The best drawing over the board's border cycles, as ``(cost, data)``; None if none is planar."""
    best: tuple[float, dict] | None = None
    for cycle in border_cycles(top):
        start = start_drawing(top, cycle)
        if start is None:
            continue
        shapes = PlanarMap(top, cycle, *start)
        if not shapes.valid():
            continue
        value = relax(shapes, random.Random(seed), steps)
        assert shapes.valid()
        if best is None or value < best[0]:
            best = (value, _data(top, shapes.polygons()))
    return best


def _data(top: Topology, polys: list[list[Point]]) -> dict:
    regions = []
    for v, poly in enumerate(polys):
        spot, room = label_spot(poly)
        regions.append(
            {
                "id": v,
                "polygon": [[round(x, 1), round(y, 1)] for x, y in poly],
                "center": [round(spot[0], 1), round(spot[1], 1)],
                "room": round(room, 1),
            }
        )
    return {"board": top.name, "width": WIDTH, "height": HEIGHT, "regions": regions, "links": top.links}


#: Adjacencies to try first as links when a board cannot have all its borders as shared edges. The 5-player
#: board's 13–19 border appears in only one of the public encodings of the board (maps/README), and without it
#: the board is planar.
DOUBTFUL = {"5-players": [(13, 19)]}


def draw_board(name: str) -> dict:
    """The board's drawing; if no drawing is planar, adjacencies are tried one by one as links."""
    top = Topology.of(name)
    found = draw(top)
    if found is not None:
        return found[1]
    cycle = border_cycles(top)[0]
    fixed = {v: on_oval(i / len(cycle)) for i, v in enumerate(cycle)}
    crossing = [edge for pair in crossings(top, tutte(top.neighbours, fixed)) for edge in pair]
    for a, b in DOUBTFUL.get(name, []) + crossing:
        linked = draw(top.linking(a, b))
        if linked is not None:
            return linked[1]
    raise RuntimeError(f"{name}: no drawing found, even with one adjacency drawn as a link")


def main(argv: list[str]) -> None:
    for name in argv or rules.BOARD_NAMES:
        data = draw_board(name)
        path = HERE / f"{name}.json"
        path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
        print(f"{path}: {len(data['regions'])} regions, links {data['links']}")


if __name__ == "__main__":
    main(sys.argv[1:])
