"""Mounted: Hill and Farmland regions cost 1 token fewer, minimum 1 (rulebook, "Mounted")."""

from __future__ import annotations

from ..abilities import Power, register
from ..state import GameState, Troop


class Mounted(Power):
    name = "Mounted"
    summary = "Hills and Farmlands cost 1 token fewer."
    description = (
        "You may conquer any Hill or Farmland Region with 1 less Race token than normal. A minimum of 1 token is "
        "still required."
    )

    def conquest_discount(self, state: GameState, seat: int, troop: Troop, region: int) -> int:
        return 1 if state.board.regions[region].terrain in ("hill", "farmland") else 0


register(Mounted)
