"""The four official boards (``boards/*.json``, transcribed from the published topology).

A :class:`Board` is immutable and shared by every state of a game; states refer to it by name.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources

WATER = frozenset({"sea", "lake"})
BOARD_NAMES = ("2-players", "3-players", "4-players", "5-players")


@dataclass(frozen=True, slots=True)
class Region:
    id: int
    terrain: str
    border: bool
    mine: bool
    magic: bool
    cavern: bool
    lost_tribe: bool

    @property
    def is_water(self) -> bool:
        return self.terrain in WATER


@dataclass(frozen=True, slots=True)
class Board:
    name: str
    players: int
    turns: int
    regions: tuple[Region, ...]
    neighbours: tuple[frozenset[int], ...]
    #: Regions that may take a race's first conquest: the edge of the board, or the shore of a Sea that is
    #: itself on the edge (rulebook, "First Conquest"; maps/README).
    entry: frozenset[int]
    #: Regions bordering a Sea or the Lake (Tritons).
    coastal: frozenset[int]
    caverns: frozenset[int]
    mountains: frozenset[int]
    edges: tuple[tuple[int, int], ...]
    #: Regions that are not Seas or the Lake (those a race that flies may reach).
    land: frozenset[int]
    #: :attr:`entry` in ascending order, and its land regions alone.
    entry_order: tuple[int, ...]
    land_entry_order: tuple[int, ...]
    #: :attr:`land_entry_order` as a set, and every region's number (what a conquest check may leave open).
    land_entry: frozenset[int]
    everywhere: frozenset[int]
    #: Whether each region is a Sea or the Lake (``Region.is_water``, asked region after region).
    water: tuple[bool, ...]
    #: The Mountain regions next to each region, ascending (Giants, asked region after region).
    mountains_near: tuple[tuple[int, ...], ...]

    def __len__(self) -> int:
        return len(self.regions)

    def count(self, regions: Iterable[int], has: Callable[[Region], bool]) -> int:
        """How many of ``regions`` have a feature (``has``): the coin a region of some kind is worth to a race
        or power that scores it (Humans' Farmlands, Wizards' Magic Sources, Dwarves' Mines, Forest…)."""
        return sum(1 for i in regions if has(self.regions[i]))


def _build(data: dict) -> Board:
    regions = tuple(
        Region(
            id=r["id"],
            terrain=r["terrain"],
            border=r["border"],
            mine=r["mine"],
            magic=r["magic"],
            cavern=r["cavern"],
            lost_tribe=r["lost_tribe"],
        )
        for r in data["regions"]
    )
    neighbours: list[set[int]] = [set() for _ in regions]
    for a, b in data["adjacent"]:
        neighbours[a].add(b)
        neighbours[b].add(a)
    border_seas = {r.id for r in regions if r.terrain == "sea" and r.border}
    entry = {r.id for r in regions if r.border}
    entry |= {r.id for r in regions if neighbours[r.id] & border_seas}
    coastal = {r.id for r in regions if not r.is_water and any(regions[n].is_water for n in neighbours[r.id])}
    return Board(
        name=data["name"],
        players=data["players"],
        turns=data["turns"],
        regions=regions,
        neighbours=tuple(frozenset(n) for n in neighbours),
        entry=frozenset(entry),
        coastal=frozenset(coastal),
        caverns=frozenset(r.id for r in regions if r.cavern),
        mountains=frozenset(r.id for r in regions if r.terrain == "mountain"),
        edges=tuple((a, b) for a, b in data["adjacent"]),
        land=frozenset(r.id for r in regions if not r.is_water),
        entry_order=tuple(sorted(entry)),
        land_entry_order=tuple(sorted(i for i in entry if not regions[i].is_water)),
        land_entry=frozenset(i for i in entry if not regions[i].is_water),
        everywhere=frozenset(range(len(regions))),
        water=tuple(r.is_water for r in regions),
        mountains_near=tuple(tuple(sorted(i for i in n if regions[i].terrain == "mountain")) for n in neighbours),
    )


@cache
def load_board(name: str) -> Board:
    """Load one of :data:`BOARD_NAMES`."""
    if name not in BOARD_NAMES:
        raise ValueError(f"Unknown board {name!r}; expected one of {', '.join(BOARD_NAMES)}")
    text = resources.files(__package__).joinpath("boards", f"{name}.json").read_text()
    return _build(json.loads(text))


def board_for_players(players: int) -> Board:
    """The board printed for this player count (rulebook, "Setting up the game")."""
    if players not in (2, 3, 4, 5):
        raise ValueError(f"Small World is played by 2 to 5 players, not {players}")
    return load_board(f"{players}-players")
