"""Berserk: roll the die before each conquest, then name the target (rulebook, "Berserk"; rulings).

Decisions where the rules are silent: once the die is rolled the conquest has begun, so no region
may be abandoned, and the Dragon and the Sorcerers wait until that roll is used; the player may
still end the conquests instead of naming a target (the roll is then lost). Berserk never uses
``final_conquest``: a named target that hand + roll cannot pay is the final attempt.
"""

from __future__ import annotations

from typing import Any

from ..abilities import Power, register
from ..actions import Action, IllegalAction, offer
from ..components import POWER_TOKENS
from ..conquest import prepare, roll_die
from ..state import CONQUER, START, GameState, Troop
from ..troops import hand_for_conquest


@register
class Berserk(Power):
    name = "Berserk"
    tokens = POWER_TOKENS["Berserk"]
    action_types = ("berserk_roll",)

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        if state.phase in (START, CONQUER) and state.t.berserk_die is None and hand_for_conquest(state, seat, troop):
            return [offer("berserk_roll", seat)]
        return []

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> dict[str, Any]:
        if state.phase not in (START, CONQUER):
            raise IllegalAction("Berserk rolls during your conquests")
        if state.t.berserk_die is not None:
            raise IllegalAction("You already rolled: conquer a region with that roll first")
        troop = prepare(state, seat, "active")
        if troop.hand < 1:
            raise IllegalAction("You need at least one token in hand to attempt a conquest")
        die = roll_die(state)
        state.edit_turn().berserk_die = die
        return {"undo_point": True, "die": die}
