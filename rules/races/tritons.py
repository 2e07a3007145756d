"""Tritons: 1 token fewer on Coastal regions, those bordering a Sea or the Lake (rulebook, "Tritons")."""

from __future__ import annotations

from ..abilities import Race, register
from ..state import GameState, Troop


class Tritons(Race):
    name = "Tritons"
    summary = "1 token fewer to conquer a region bordering a Sea or the Lake."
    description = (
        "Your Tritons may conquer all Coastal Regions (those bordering a Sea or Lake) at a cost of 1 less "
        "Triton token than normal. A minimum of 1 Triton token is still required."
    )

    def conquest_discount(self, state: GameState, seat: int, troop: Troop, region: int) -> int:
        return 1 if region in state.board.coastal else 0


register(Tritons)
