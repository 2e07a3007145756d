"""Humans: +1 coin per Farmland region (rulebook, "Humans")."""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS
from ..state import GameState, Troop


@register
class Humans(Race):
    name = "Humans"
    tokens = RACE_TOKENS["Humans"][0]

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        board = state.board
        return sum(1 for i in regions if board.regions[i].terrain == "farmland")
