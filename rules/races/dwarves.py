"""Dwarves: +1 coin per Mine region, kept In Decline (rulebook, "Dwarves")."""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS
from ..state import GameState, Troop


@register
class Dwarves(Race):
    name = "Dwarves"
    tokens = RACE_TOKENS["Dwarves"][0]
    scores_in_decline = True

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        board = state.board
        return sum(1 for i in regions if board.regions[i].mine)
