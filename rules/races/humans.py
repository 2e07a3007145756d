"""Humans: +1 coin per Farmland region (rulebook, "Humans")."""

from __future__ import annotations

from ..abilities import Race, register
from ..state import GameState, Troop


class Humans(Race):
    name = "Humans"
    summary = "+1 coin per Farmland region."
    description = "Each Farmland Region your Humans occupy is worth 1 bonus Victory coin, at the end of your turn."

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return state.board.count(regions, lambda region: region.terrain == "farmland")


register(Humans)
