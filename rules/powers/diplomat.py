"""Diplomat: at the end of the turn, make peace with one opponent not attacked this turn (rulebook,
"Diplomat"). That opponent's Active race cannot attack yours until your next turn; In Decline tokens (Ghouls)
are not bound (rulings).

Decision: an opponent whose Active race the player attacked this turn with any of their races (an In Decline
race or a conversion included) cannot be chosen.

Its state: ``"Diplomat": {"diplomat": 0, "ally": 2}``, the Diplomat's seat and the seat at peace with its
Active race, until the Diplomat's next turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..abilities import Power, Slot, register, shown
from ..actions import Action, ActionKind, IllegalAction, Verb, offer
from ..schema import schema_1_player_field
from ..state import REDEPLOY, GameState, Troop
from ..telling import Step, Told


@dataclass(frozen=True, slots=True)
class Peace(Slot):
    diplomat: int | None = None
    ally: int | None = None


class Diplomat(Power):
    name = "Diplomat"
    summary = "At the end of the turn, make peace with one player you did not attack."
    description = (
        "At the end of your turn, you may select one opponent whose Active race you did not attack this turn as "
        "your ally. You are now at peace with him and he cannot attack your active race until your next turn. "
        "You may change allies each turn, or stay at peace with the same opponent. Tokens In Decline are not "
        "impacted (so Ghouls In Decline are immune to this power and may still attack you)."
    )
    actions = (ActionKind("choose_ally", ("target",), "Make peace with"),)
    verbs = (Verb("ally", "choose_ally", "seat", "make peace with a player (their number or name)"),)
    slot = Peace
    schema_1_fields = frozenset({"ally"})

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
        self.write(state, Peace(seat, target))

    def shield(self, state: GameState, seat: int, troop: Troop, region: int) -> str | None:
        # "He cannot attack your active race until your next turn"; "Tokens In Decline are not impacted".
        peace = self.read(state, Peace)
        r = state.regions[region]
        if peace.ally != seat or troop.declined or r.owner != peace.diplomat or peace.diplomat is None:
            return None
        diplomat = state.players[peace.diplomat].active
        if diplomat is None or diplomat.race != r.race:
            return None
        return f"You are at peace with player {r.owner}'s {shown(r.race)} (Diplomat) until their next turn"

    def on_turn_start(self, state: GameState) -> None:
        if self.read(state, Peace).diplomat == state.current:
            self.write(state, Peace())  # the peace holds "until your next turn"

    def on_decline(self, state: GameState, seat: int, troop: Troop) -> None:
        self.write(state, Peace())

    def check(self, state: GameState) -> None:
        peace = self.read(state, Peace)
        seats = range(len(state.players))
        if peace.diplomat not in seats or peace.ally not in seats or peace.ally == peace.diplomat:
            raise ValueError(f"abilities.Diplomat: {peace.diplomat} and {peace.ally} are not two seats of this game")

    def tell(self, step: Step) -> Told:
        target = step.action.target if step.action is not None else None
        return f"made peace with {step.name(target)} (Diplomat) until {step.who}'s next turn"

    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        for seat, ally in schema_1_player_field(old, "ally"):
            if ally is not None:
                self.write(state, Peace.from_json({"diplomat": seat, "ally": ally}, f"players[{seat}].ally"))


register(Diplomat)
