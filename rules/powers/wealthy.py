"""Wealthy: +7 coins once, at the end of the turn the combo was picked (rulebook, "Wealthy")."""

from __future__ import annotations

from ..abilities import Power, register
from ..state import GameState, Troop

BONUS = 7


class Wealthy(Power):
    name = "Wealthy"
    summary = "+7 coins once, at the end of the first turn."
    description = "Collect 7 bonus Victory coins, once only, at the end of your first turn."

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return BONUS if troop.picked_turn == state.turn and state.current == seat else 0


register(Wealthy)
