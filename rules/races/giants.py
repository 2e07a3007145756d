"""Giants: 1 token fewer next to a Mountain region they hold (rulebook, "Giants"; rulings)."""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS
from ..state import GameState, Troop


@register
class Giants(Race):
    name = "Giants"
    tokens = RACE_TOKENS["Giants"][0]

    def conquest_discount(self, state: GameState, seat: int, troop: Troop, region: int) -> int:
        board = state.board
        for mountain in board.neighbours[region] & board.mountains:
            r = state.regions[mountain]
            if r.owner == seat and r.race == troop.race:
                return 1
        return 0
