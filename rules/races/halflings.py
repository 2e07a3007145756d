"""Halflings: enter anywhere; Holes-in-the-Ground in their first two conquests (rulebook, "Halflings").

Their state: ``"Halflings": {"holes": [4, 9], "dug": 2}``, the regions with a Hole and how many Holes they
placed so far (two at most, ever). The Holes make a region immune (rulings) and leave with the region or
when the Halflings go In Decline.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..abilities import Marker, Race, Slot, register
from ..components import HOLES
from ..schema import schema_1_markers, schema_1_troop_field
from ..state import GameState, Troop
from ..telling import Step

HOLE = Marker("hole", "Hole-in-the-Ground", immune="a Hole-in-the-Ground")


@dataclass(frozen=True, slots=True)
class Holes(Slot):
    holes: frozenset[int] = frozenset()
    #: Holes placed so far: the first 2 conquests get one, whatever became of them since.
    dug: int = 0


class Halflings(Race):
    name = "Halflings"
    summary = "First conquest anywhere; Holes-in-the-Ground protect their first two regions."
    description = (
        "Your Halfling tokens may enter the map through any Region of the map, not just border ones. Place a "
        "Hole-in-the-Ground in each of the first 2 Regions you conquer, to make them immune to enemy conquests "
        "as well as racial and special powers. You remove your Holes-in-the-Ground (and lose the protection "
        "they confer in these Regions) when your Halflings go into Decline, or if you choose to abandon a "
        "Region containing a Hole-in-the-Ground."
    )
    enters_anywhere = True
    slot = Holes
    markers = (HOLE,)
    marker_regions = "holes"
    schema_1_fields = frozenset({"hole", "holes"})

    def on_conquer(self, state: GameState, seat: int, troop: Troop, region: int, nonempty: bool) -> None:
        holes = self.read(state, Holes)
        if holes.dug < HOLES:
            self.write(state, Holes(holes.holes | {region}, holes.dug + 1))

    def on_decline(self, state: GameState, seat: int, troop: Troop) -> None:
        self.write(state, Holes())

    def on_vacate(self, state: GameState, region: int, owner: int, race: str | None) -> None:
        holes = self.read(state, Holes)
        if region in holes.holes:
            self.write(state, replace(holes, holes=holes.holes - {region}))

    def note(self, step: Step) -> str | None:
        dug = step.conquered_into(lambda state: self.read(state, Holes).holes)
        return "a Hole-in-the-Ground dug there" if dug else None

    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        dug = [
            n
            for _, troop, n in schema_1_troop_field(old, "holes")
            if troop["race"] == self.name and not troop.get("declined")  # In Decline: no Hole left, none to dig
        ]
        holes = frozenset(schema_1_markers(old, "hole"))
        self.write(state, Holes(holes, dug[0] if dug else len(holes)))


register(Halflings)
