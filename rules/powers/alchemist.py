"""Alchemist: +2 coins each turn while the race is Active (rulebook, "Alchemist")."""

from __future__ import annotations

from ..abilities import Power, register
from ..state import GameState, Troop


class Alchemist(Power):
    name = "Alchemist"
    summary = "+2 coins each turn while Active."
    description = "Collect 2 bonus Victory coins at the end of each turn your race hasn't yet gone into Decline."

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return 2


register(Alchemist)
