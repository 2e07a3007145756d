"""Orcs: +1 coin per non-empty region conquered this turn (rulebook, "Orcs")."""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS
from ..state import GameState, Troop


@register
class Orcs(Race):
    name = "Orcs"
    tokens = RACE_TOKENS["Orcs"][0]

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return state.t.nonempty_conquered
