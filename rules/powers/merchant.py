"""Merchant: +1 coin per region the Active race holds (rulebook, "Merchant"); nothing for In Decline
ones.
"""

from __future__ import annotations

from ..abilities import Power, register
from ..state import GameState, Troop


class Merchant(Power):
    name = "Merchant"
    summary = "+1 coin per region held."
    description = "Collect 1 bonus Victory coin for any Region you occupy at turn's end."

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return len(regions)


register(Merchant)
