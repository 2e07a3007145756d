"""Amazons: four tokens serve only for conquest (rulebook, "Amazons"; rulings)."""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS
from ..state import GameState, Troop

CONQUEST_ONLY = 4


@register
class Amazons(Race):
    name = "Amazons"
    tokens = RACE_TOKENS["Amazons"][0] + CONQUEST_ONLY

    def on_ready(self, state: GameState, seat: int, troop: Troop) -> None:
        # The 4 come back in hand only when troops are readied at the start of the next turn.
        troop.hand += troop.held
        troop.held = 0

    def kept_off_board(self, total: int) -> int:
        return min(CONQUEST_ONLY, total)

    def on_end_turn(self, state: GameState, seat: int, troop: Troop) -> None:
        """After redeployment remove 4 tokens, leaving one per region where possible (rulings)."""
        owed = min(CONQUEST_ONLY, troop.held + troop.hand + _on_board(state, seat, troop)) - troop.held
        take = min(owed, troop.hand)
        troop.hand -= take
        troop.held += take
        owed -= take
        held = state.regions_of(seat, troop.race)
        while owed > 0 and held:
            # From the biggest stack first (ties: highest region), emptying a region only if it must
            # be.
            region = max(held, key=lambda i: (state.regions[i].tokens, i))
            r = state.edit_region(region)
            r.tokens -= 1
            troop.held += 1
            owed -= 1
            if r.tokens == 0:
                troop.camps += r.encampments
                r.clear_occupant()
                held.remove(region)


def _on_board(state: GameState, seat: int, troop: Troop) -> int:
    return sum(state.regions[i].tokens for i in state.regions_of(seat, troop.race))
