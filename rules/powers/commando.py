"""Commando: every conquest costs 1 token fewer, minimum 1 (rulebook, "Commando")."""

from __future__ import annotations

from ..abilities import Power, register
from ..components import POWER_TOKENS
from ..state import GameState, Troop


@register
class Commando(Power):
    name = "Commando"
    tokens = POWER_TOKENS["Commando"]

    def conquest_discount(self, state: GameState, seat: int, troop: Troop, region: int) -> int:
        return 1
