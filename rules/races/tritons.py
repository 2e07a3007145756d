"""Tritons: 1 token fewer on Coastal regions, those bordering a Sea or the Lake (rulebook,
"Tritons").
"""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS
from ..state import GameState, Troop


@register
class Tritons(Race):
    name = "Tritons"
    tokens = RACE_TOKENS["Tritons"][0]

    def conquest_discount(self, state: GameState, seat: int, troop: Troop, region: int) -> int:
        return 1 if region in state.board.coastal else 0
