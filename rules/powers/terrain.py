"""Forest, Hill and Swamp: +1 coin per region of that terrain held (rulebook, "Forest", "Hill",
"Swamp").
"""

from __future__ import annotations

from typing import ClassVar

from ..abilities import Power, register
from ..state import GameState, Troop


class TerrainBonus(Power):
    terrain: ClassVar[str] = ""

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return state.board.count(regions, lambda region: region.terrain == self.terrain)


class Forest(TerrainBonus):
    name = "Forest"
    summary = "+1 coin per Forest region."
    description = "Collect 1 bonus Victory coin for each Forest Region you occupy at turn's end."
    terrain = "forest"


register(Forest)


class Hill(TerrainBonus):
    name = "Hill"
    summary = "+1 coin per Hill region."
    description = "Collect 1 bonus Victory coin for each Hill Region you occupy at turn's end."
    terrain = "hill"


register(Hill)


class Swamp(TerrainBonus):
    name = "Swamp"
    summary = "+1 coin per Swamp region."
    description = "Collect 1 bonus Victory coin for each Swamp Region you occupy at turn's end."
    terrain = "swamp"


register(Swamp)
