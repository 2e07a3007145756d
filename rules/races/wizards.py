"""Wizards: +1 coin per Magic Source region (rulebook, "Wizards")."""

from __future__ import annotations

from ..abilities import Race, register
from ..state import GameState, Troop


class Wizards(Race):
    name = "Wizards"
    summary = "+1 coin per Magic Source region."
    description = "Each Magic Region your Wizards occupy is worth 1 bonus Victory coin, at the end of your turn."

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return state.board.count(regions, lambda region: region.magic)


register(Wizards)
