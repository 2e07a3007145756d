"""Halflings: enter anywhere; Holes-in-the-Ground in their first two conquests (rulebook,
"Halflings").
"""

from __future__ import annotations

from ..abilities import Race, register
from ..components import HOLES, RACE_TOKENS
from ..state import GameState, Troop


@register
class Halflings(Race):
    name = "Halflings"
    tokens = RACE_TOKENS["Halflings"][0]
    enters_anywhere = True

    def on_conquer(self, state: GameState, seat: int, troop: Troop, region: int, nonempty: bool) -> None:
        if troop.holes < HOLES:
            state.edit_region(region).hole = True
            troop.holes += 1

    def on_decline(self, state: GameState, seat: int, troop: Troop) -> None:
        for i in state.regions_of(seat, troop.race):
            if state.regions[i].hole:
                state.edit_region(i).hole = False
