"""Trolls: a Troll's Lair in each region they conquer, +1 defence, kept In Decline (rulebook,
"Trolls").
"""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS, TROLL_LAIRS
from ..state import GameState, Troop


@register
class Trolls(Race):
    name = "Trolls"
    tokens = RACE_TOKENS["Trolls"][0]

    def on_conquer(self, state: GameState, seat: int, troop: Troop, region: int, nonempty: bool) -> None:
        # Lairs leave with the region (conquered or abandoned: RegionState.clear_occupant).
        if sum(r.lair for r in state.regions) < TROLL_LAIRS:
            state.edit_region(region).lair = True
