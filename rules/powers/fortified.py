"""Fortified: once per turn while Active place a Fortress (max 1 per region, 6 on the map); +1
defence even In Decline, +1 coin while Active (rulebook, "Fortified").

Decision: the Fortress is placed during the turn's conquests or its redeployment
(``place_fortress``), never on a turn spent going In Decline; it is optional, so an auto-passed turn
places none.
"""

from __future__ import annotations

from ..abilities import Power, register
from ..actions import Action, IllegalAction, offer
from ..components import FORTRESSES, POWER_TOKENS
from ..state import CONQUER, REDEPLOY, GameState, Troop


@register
class Fortified(Power):
    name = "Fortified"
    tokens = POWER_TOKENS["Fortified"]
    action_types = ("place_fortress",)

    def refusal(self, state: GameState, seat: int, troop: Troop, region: int) -> str | None:
        if state.phase not in (CONQUER, REDEPLOY):
            return "Place the Fortress during your turn's conquests or redeployment"
        if state.t.fortress_placed:
            return "One Fortress per turn"
        if not 0 <= region < len(state.regions):
            return f"There is no region {region}"
        r = state.regions[region]
        if r.owner != seat or r.race != troop.race:
            return f"Region {region} is not held by your {troop.race}"
        if r.fortress:
            return f"Region {region} already has a Fortress (one per region)"
        if sum(x.fortress for x in state.regions) >= FORTRESSES:
            return f"All {FORTRESSES} Fortresses are on the map"
        return None

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        if state.phase not in (CONQUER, REDEPLOY) or state.t.fortress_placed:
            return []
        return [
            offer("place_fortress", seat, i)
            for i in state.regions_of(seat, troop.race)
            if self.refusal(state, seat, troop, i) is None
        ]

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> None:
        assert action.region is not None
        refusal = self.refusal(state, seat, troop, action.region)
        if refusal:
            raise IllegalAction(refusal)
        state.edit_region(action.region).fortress = True
        state.edit_turn().fortress_placed = True

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        return sum(1 for i in regions if state.regions[i].fortress)
