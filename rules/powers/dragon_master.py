"""Dragon Master: once per turn conquer with a single token; the Dragon makes the region immune
(rulebook, "Dragon Master"). The Dragon moves with each such conquest and leaves when the race
declines.

Decision (the rulebook says "conquer a Region using a single Race token"): any region the race may
conquer qualifies, an empty one too (an empty Mountain for 1 token instead of 3); ``legal_actions``
offers them all, as ``apply`` always accepted them.
"""

from __future__ import annotations

from ..abilities import Power, register
from ..actions import Action, IllegalAction, offer
from ..components import POWER_TOKENS
from ..conquest import conquest_candidates, conquest_refusal, occupy, prepare
from ..state import CONQUER, START, GameState, Troop
from ..troops import hand_for_conquest


@register
class DragonMaster(Power):
    name = "Dragon Master"
    tokens = POWER_TOKENS["Dragon Master"]
    action_types = ("dragon",)

    def refusal(self, state: GameState, seat: int, troop: Troop, region: int) -> str | None:
        if state.phase not in (START, CONQUER):
            return "The Dragon attacks during your conquests"
        if state.t.dragon_used:
            return "The Dragon attacks once per turn"
        if state.t.berserk_die is not None:
            return "You rolled the die for Berserk: conquer with that roll first"
        return conquest_refusal(state, seat, troop, region)

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        if state.phase not in (START, CONQUER) or state.t.dragon_used:
            return []
        if hand_for_conquest(state, seat, troop) < 1:
            return []
        held = state.regions_of(seat, troop.race)
        return [
            offer("dragon", seat, i)
            for i in conquest_candidates(state, seat, troop, held)
            if self.refusal(state, seat, troop, i) is None  # an empty region too: 1 token whatever it costs
        ]

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> None:
        assert action.region is not None
        refusal = self.refusal(state, seat, troop, action.region)
        if refusal:
            raise IllegalAction(refusal)
        troop = prepare(state, seat, "active")
        if troop.hand < 1:
            raise IllegalAction("The Dragon needs one token in hand")
        for i in state.regions_of(seat, troop.race):
            if state.regions[i].dragon:
                state.edit_region(i).dragon = False
        occupy(state, seat, troop, action.region, 1, "active")
        state.edit_region(action.region).dragon = True
        state.edit_turn().dragon_used = True

    def on_decline(self, state: GameState, seat: int, troop: Troop) -> None:
        for i in state.regions_of(seat, troop.race):
            if state.regions[i].dragon:
                state.edit_region(i).dragon = False
