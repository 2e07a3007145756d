"""Dwarves: +1 coin per Mine region, kept In Decline (rulebook, "Dwarves")."""

from __future__ import annotations

from ..abilities import Race, register
from ..state import GameState, Troop


class Dwarves(Race):
    name = "Dwarves"
    summary = "+1 coin per Mine region, even In Decline."
    description = (
        "Each Mine Region your Dwarves occupy is worth 1 bonus Victory coin, at the end of your turn. This "
        "power is kept even when the Dwarves are In Decline."
    )
    scores_in_decline = True

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return state.board.count(regions, lambda region: region.mine)


register(Dwarves)
