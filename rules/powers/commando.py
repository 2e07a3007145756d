"""Commando: every conquest costs 1 token fewer, minimum 1 (rulebook, "Commando")."""

from __future__ import annotations

from ..abilities import Power, register
from ..state import GameState, Troop


class Commando(Power):
    name = "Commando"
    summary = "Every conquest costs 1 token fewer."
    description = (
        "You may conquer any Region with 1 less Race token than normal. A minimum of 1 token is still required."
    )

    def conquest_discount(self, state: GameState, seat: int, troop: Troop, region: int) -> int:
        return 1


register(Commando)
