"""Diplomat: at the end of the turn, make peace with one opponent not attacked this turn (rulebook,
"Diplomat"). That opponent's Active race cannot attack yours until your next turn; In Decline tokens (Ghouls)
are not bound (rulings).

Decision: an opponent whose Active race the player attacked this turn with any of their races (an In Decline
race or a conversion included) cannot be chosen.
"""

from __future__ import annotations

from ..abilities import Power, register
from ..actions import Action, ActionKind, IllegalAction, offer
from ..components import POWER_TOKENS
from ..state import REDEPLOY, GameState, Troop
from ..telling import Step


@register
class Diplomat(Power):
    name = "Diplomat"
    tokens = POWER_TOKENS["Diplomat"]
    summary = "At the end of the turn, make peace with one player you did not attack."
    source = 'Rulebook, "Diplomat"'
    description = (
        "At the end of your turn, you may select one opponent whose Active race you did not attack this turn as "
        "your ally. You are now at peace with him and he cannot attack your active race until your next turn. "
        "You may change allies each turn, or stay at peace with the same opponent. Tokens In Decline are not "
        "impacted (so Ghouls In Decline are immune to this power and may still attack you)."
    )
    actions = (ActionKind("choose_ally", ("target",), "Make peace with"),)

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

    def tell(self, step: Step) -> str:
        target = step.action.target if step.action is not None else None
        return f"{step.who} made peace with {step.name(target)} until their next turn"
