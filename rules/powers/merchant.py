"""Merchant: +1 coin per region the Active race holds (rulebook, "Merchant"); nothing for In Decline
ones.
"""

from __future__ import annotations

from ..abilities import Power, register
from ..components import POWER_TOKENS
from ..state import GameState, Troop


@register
class Merchant(Power):
    name = "Merchant"
    tokens = POWER_TOKENS["Merchant"]

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return len(regions)
