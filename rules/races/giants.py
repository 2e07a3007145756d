"""Giants: 1 token fewer next to a Mountain region they hold (rulebook, "Giants"; rulings)."""

from __future__ import annotations

from ..abilities import Race, register
from ..state import GameState, Troop


class Giants(Race):
    name = "Giants"
    summary = "1 token fewer to conquer a region next to a Mountain they hold."
    description = (
        "Your Giants may conquer any Region adjacent to a Mountain Region they occupy at a cost of 1 less Giant "
        "token than normal. A minimum of 1 Giant token is still required."
    )

    def conquest_discount(self, state: GameState, seat: int, troop: Troop, region: int) -> int:
        regions = state.regions
        for mountain in state.board.mountains_near[region]:
            r = regions[mountain]
            if r.owner == seat and r.race == troop.race:
                return 1
        return 0


register(Giants)
