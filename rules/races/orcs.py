"""Orcs: +1 coin per non-empty region conquered this turn (rulebook, "Orcs")."""

from __future__ import annotations

from ..abilities import Race, register
from ..state import GameState, Troop


class Orcs(Race):
    name = "Orcs"
    summary = "+1 coin per non-empty region conquered this turn."
    description = (
        "Each not empty Region your Orcs conquered this turn is worth 1 bonus Victory coin, at the end of your turn."
    )

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return state.t.nonempty_conquered


register(Orcs)
