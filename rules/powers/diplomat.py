"""Diplomat: at the end of the turn, make peace with one opponent not attacked this turn (rulebook,
"Diplomat"). That opponent's Active race cannot attack yours until your next turn; In Decline tokens
(Ghouls) are not bound (rulings).

Decision: an opponent whose Active race the player attacked this turn with any of their races (In
Decline Ghouls or a Sorcerer conversion included) cannot be chosen.
"""

from __future__ import annotations

from ..abilities import Power, register
from ..actions import Action, IllegalAction, offer
from ..components import POWER_TOKENS
from ..state import REDEPLOY, GameState, Troop


@register
class Diplomat(Power):
    name = "Diplomat"
    tokens = POWER_TOKENS["Diplomat"]
    action_types = ("choose_ally",)

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        if state.phase != REDEPLOY:
            return []
        return [
            offer("choose_ally", seat, target=other)
            for other in range(len(state.players))
            if other != seat and other not in state.t.attacked
        ]

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> None:
        if state.phase != REDEPLOY:
            raise IllegalAction("The Diplomat chooses an ally at the end of the turn, after the conquests")
        target = action.target
        if target is None or not 0 <= target < len(state.players) or target == seat:
            raise IllegalAction("Choose another player of this game as your ally")
        if target in state.t.attacked:
            raise IllegalAction(f"You attacked player {target}'s Active race this turn; choose someone else")
        state.edit_player(seat).ally = target
