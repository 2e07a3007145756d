"""Alchemist: +2 coins each turn while the race is Active (rulebook, "Alchemist")."""

from __future__ import annotations

from ..abilities import Power, register
from ..components import POWER_TOKENS
from ..state import GameState, Troop


class Alchemist(Power):
    name = "Alchemist"
    tokens = POWER_TOKENS["Alchemist"]
    summary = "+2 coins each turn while Active."
    source = 'Rulebook, "Alchemist"'
    description = "Collect 2 bonus Victory coins at the end of each turn your race hasn't yet gone into Decline."

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return 2


register(Alchemist)
