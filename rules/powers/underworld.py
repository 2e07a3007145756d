"""Underworld: Caverns cost 1 token fewer and are adjacent to each other (rulebook, "Underworld";
rulings).

Cavern adjacency counts once the race holds a Cavern; it does not make a Cavern a border region.
"""

from __future__ import annotations

from ..abilities import Power, register
from ..state import GameState, Troop


class Underworld(Power):
    name = "Underworld"
    summary = "Caverns cost 1 token fewer and are adjacent to each other."
    description = (
        "You may conquer any Region with a Cavern with 1 less Race token than normal. A minimum of 1 token is "
        "still required. All Regions with a Cavern are also considered adjacent to each other for your conquest "
        "purposes."
    )

    def conquest_discount(self, state: GameState, seat: int, troop: Troop, region: int) -> int:
        return 1 if region in state.board.caverns else 0

    def reaches(self, state: GameState, seat: int, troop: Troop, region: int, held: list[int]) -> bool:
        caverns = state.board.caverns
        return region in caverns and not caverns.isdisjoint(held)

    def reachable(self, state: GameState, seat: int, troop: Troop, held: list[int]) -> frozenset[int]:
        caverns = state.board.caverns
        return frozenset() if caverns.isdisjoint(held) else caverns


register(Underworld)
