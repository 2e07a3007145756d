"""Pillaging: +1 coin per non-empty region conquered this turn (rulebook, "Pillaging")."""

from __future__ import annotations

from ..abilities import Power, register
from ..state import GameState, Troop


class Pillaging(Power):
    name = "Pillaging"
    summary = "+1 coin per non-empty region conquered this turn."
    description = "Each non-empty Region you conquer this turn is worth 1 bonus Victory coin at turn's end."

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return state.t.nonempty_conquered


register(Pillaging)
