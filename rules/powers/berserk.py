"""Berserk: roll the die before each conquest, then name the target (rulebook, "Berserk"; rulings).

Decisions where the rules are silent: once the die is rolled the conquest has begun, so no region may be
abandoned, and no other conquering step (the Dragon, a conversion) is taken until that roll is used; the
player may still end the conquests instead of naming a target (the roll is then lost). Berserk never uses
``final_conquest``: a named target that hand + roll cannot pay is the final attempt.

Its state, for the turn only: ``"Berserk": {"die": 2}``, a roll waiting for its conquest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..abilities import Power, Slot, register
from ..actions import ACTIVE, CONQUERING, Action, ActionKind, IllegalAction, Verb, offer
from ..conquest import prepare, roll_die
from ..schema import schema_1_turn_field
from ..state import CONQUER, START, GameState, Troop
from ..telling import Step, Told
from ..troops import hand_for_conquest


@dataclass(frozen=True, slots=True)
class Roll(Slot):
    #: The die rolled before naming the next conquest, not used yet.
    die: int | None = None


class Berserk(Power):
    name = "Berserk"
    summary = "Roll the die before each conquest, then name the target."
    description = (
        "You may use the Reinforcement die before each of your conquests, rather than just the last one of "
        "your turn. Roll the die first; select the Region you wish to conquer; then place the required number "
        "of Race tokens (minus the die results) there. If you do not have enough tokens left, this is your "
        "final conquest attempt for the turn. As usual, a minimum of 1 token is still required to attempt the "
        "conquest."
    )
    actions = (ActionKind("berserk_roll", (), "Roll the die first", rolls=True),)
    verbs = (Verb("berserk", "berserk_roll", "none", "roll the die before the next conquest"),)
    turn_slot = Roll
    schema_1_fields = frozenset({"berserk_die"})

    def pending_roll(self, state: GameState, seat: int, troop: Troop) -> int | None:
        return self.read_turn(state, Roll).die

    def refuse(self, state: GameState, seat: int, action: Action) -> str | None:
        if action.type == "conquer":
            return None  # the roll's own use, or a conquest before rolling
        troop = state.players[seat].active
        if (
            action.type == "final_conquest"
            and action.troop == ACTIVE
            and troop is not None
            and troop.power == self.name
            and state.phase in (START, CONQUER)
        ):
            return "Berserk rolls the die before naming the target: use berserk_roll, then conquer"
        if self.read_turn(state, Roll).die is None:
            return None
        if action.type == "abandon":
            # Rulings, "Berserk": the roll comes "before each conquest"; the conquest has begun.
            return "You rolled the die for Berserk: name the region to conquer with that roll"
        if action.type in CONQUERING and action.type not in ("conquer", "final_conquest"):
            return "You rolled the die for Berserk: conquer with that roll first"
        return None

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        if (
            state.phase in (START, CONQUER)
            and self.read_turn(state, Roll).die is None
            and hand_for_conquest(state, seat, troop)
        ):
            return [offer("berserk_roll", seat)]
        return []

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> dict[str, Any]:
        if state.phase not in (START, CONQUER):
            raise IllegalAction("Berserk rolls during your conquests")
        if self.read_turn(state, Roll).die is not None:
            raise IllegalAction("You already rolled: conquer a region with that roll first")
        troop = prepare(state, seat, ACTIVE)
        if troop.hand < 1:
            raise IllegalAction("You need at least one token in hand to attempt a conquest")
        die = roll_die(state)
        self.write_turn(state, Roll(die))
        return {"undo_point": True, "die": die}

    def on_conquer(self, state: GameState, seat: int, troop: Troop, region: int, nonempty: bool) -> None:
        if self.read_turn(state, Roll).die is not None:
            self.write_turn(state, Roll())  # used

    def on_conquests_end(self, state: GameState, seat: int, troop: Troop) -> None:
        if self.read_turn(state, Roll).die is not None:
            self.write_turn(state, Roll())  # lost

    def tell(self, step: Step) -> Told:
        if step.brief:
            return f"rolled a {step.die} (Berserk)"
        return f"rolled the die before naming the next conquest (Berserk): {step.die}"

    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        die = schema_1_turn_field(old, "berserk_die")
        if die is not None:
            self.write_turn(state, Roll.from_json({"die": die}, "turn_state.berserk_die"))


register(Berserk)
