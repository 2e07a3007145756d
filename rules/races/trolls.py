"""Trolls: a Troll's Lair in each region they conquer, +1 defence, kept In Decline (rulebook, "Trolls").

Their state: ``"Trolls": {"lairs": [3, 5]}``, the regions with a Lair (10 Lairs in the box). A Lair leaves
with its region (conquered, abandoned, or the In Decline Trolls removed: rulings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..abilities import Marker, Race, Slot, register
from ..components import TROLL_LAIRS
from ..schema import schema_1_markers
from ..state import GameState, Troop
from ..telling import Step

LAIR = Marker("lair", "Troll's Lair", defence=1)


@dataclass(frozen=True, slots=True)
class Lairs(Slot):
    lairs: frozenset[int] = frozenset()


class Trolls(Race):
    name = "Trolls"
    summary = "A Troll's Lair (+1 defence) in each region, kept In Decline."
    description = (
        "Place a Troll's Lair in each Region your Trolls occupy. The Troll's Lair augments your region's defense "
        "by 1 (just as if you had an additional Troll token stationed there), and stays in the Region even "
        "after your Trolls go into Decline. Remove the Troll's Lair if you abandon the Region or when an enemy "
        "conquers it."
    )
    slot = Lairs
    markers = (LAIR,)
    marker_regions = "lairs"
    schema_1_fields = frozenset({"lair"})

    def on_conquer(self, state: GameState, seat: int, troop: Troop, region: int, nonempty: bool) -> None:
        lairs = self.read(state, Lairs).lairs
        if len(lairs) < TROLL_LAIRS:  # components.md: 10 Troll Lairs
            self.write(state, Lairs(lairs | {region}))

    def note(self, step: Step) -> str | None:
        built = step.conquered_into(lambda state: self.read(state, Lairs).lairs)
        return "a Troll's Lair built there" if built else None

    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        self.write(state, Lairs(frozenset(schema_1_markers(old, "lair"))))


register(Trolls)
