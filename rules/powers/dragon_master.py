"""Dragon Master: once per turn conquer with a single token; the Dragon makes the region immune (rulebook,
"Dragon Master"). The Dragon moves with each such conquest and leaves when the race declines.

Decision (the rulebook says "conquer a Region using a single Race token"): any region the race may conquer
qualifies, an empty one too (an empty Mountain for 1 token instead of 3).

Its state: ``"Dragon Master": {"dragon": 9}``, the Dragon's region; for the turn only
``{"used": true}`` once it attacked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..abilities import Marker, Power, Slot, register
from ..actions import ACTIVE, Action, ActionKind, IllegalAction, Verb, offer
from ..conquest import conquest_refusal, occupy, prepare
from ..cost import ConquestCheck
from ..schema import schema_1_markers, schema_1_turn_field
from ..state import CONQUER, START, GameState, Troop
from ..telling import Phrase, Step, Told, taken_from
from ..troops import hand_for_conquest

DRAGON = Marker("dragon", "Dragon", immune="the Dragon")


@dataclass(frozen=True, slots=True)
class Lair(Slot):
    #: The Dragon's region, or None while it is in the box.
    dragon: int | None = None


@dataclass(frozen=True, slots=True)
class Flight(Slot):
    #: The Dragon attacked this turn (once per turn).
    used: bool = False


class DragonMaster(Power):
    name = "Dragon Master"
    summary = "Once per turn, conquer with 1 token; the Dragon makes the region immune."
    description = (
        "Once per turn, you may conquer a Region using a single Race token, regardless of the number of enemy "
        "tokens defending it. Once conquered, place your Dragon there. The Region is now immune to enemy "
        "conquests as well as to their racial and special powers until your Dragon moves. During each new "
        "turn, you may move your Dragon to a different Region you wish to conquer. Your Dragon disappears when "
        "you go into Decline; remove it from the board and place it back in the storage tray at that time."
    )
    actions = (ActionKind("dragon", ("region",), "Send the Dragon to", conquers=True),)
    verbs = (Verb("dragon", "dragon", "region", "send the Dragon to conquer a region with 1 token"),)
    slot = Lair
    turn_slot = Flight
    markers = (DRAGON,)
    schema_1_fields = frozenset({"dragon", "dragon_used"})

    def refusal(self, state: GameState, seat: int, troop: Troop, region: int) -> str | None:
        if state.phase not in (START, CONQUER):
            return "The Dragon attacks during your conquests"
        if self.read_turn(state, Flight).used:
            return "The Dragon attacks once per turn"
        return conquest_refusal(state, seat, troop, region)

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        if state.phase not in (START, CONQUER) or self.read_turn(state, Flight).used:
            return []
        if hand_for_conquest(state, seat, troop) < 1:
            return []
        # refusal's checks, the first two made above, the conquest rules worked out once for every region.
        check = ConquestCheck(state, seat, troop)
        # An empty region too: 1 token whatever it costs (what listing the candidates left open is asked no
        # more, the whole check otherwise).
        return [offer("dragon", seat, i) for i in check.allowed(check.candidates())]

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> None:
        assert action.region is not None
        refusal = self.refusal(state, seat, troop, action.region)
        if refusal:
            raise IllegalAction(refusal)
        troop = prepare(state, seat, ACTIVE)
        if troop.hand < 1:
            raise IllegalAction("The Dragon needs one token in hand")
        self.write(state, Lair())  # the Dragon leaves its region
        occupy(state, seat, troop, action.region, 1, ACTIVE)
        self.write(state, Lair(action.region))
        self.write_turn(state, Flight(True))

    def on_decline(self, state: GameState, seat: int, troop: Troop) -> None:
        self.write(state, Lair())

    def placed(self, state: GameState) -> list[tuple[int, Marker, int]]:
        region = self.read(state, Lair).dragon
        return [] if region is None else [(region, DRAGON, 1)]

    def place(self, state: GameState, region: int, marker: Marker, count: int) -> None:
        self.write(state, Lair(region if count else None))

    def on_vacate(self, state: GameState, region: int, owner: int, race: str | None) -> None:
        if self.read(state, Lair).dragon == region:
            self.write(state, Lair())

    def tell(self, step: Step) -> Told:
        region = step.region
        assert region is not None
        return Phrase("sent the Dragon to", f"{step.where(region)} with one token{taken_from(step, region)}")

    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        dragons = sorted(schema_1_markers(old, "dragon"))
        if len(dragons) > 1:
            raise ValueError(f"regions[{dragons[1]}].dragon: there is one Dragon in the box")
        self.write(state, Lair(dragons[0] if dragons else None))
        if schema_1_turn_field(old, "dragon_used") is True:
            self.write_turn(state, Flight(True))


register(DragonMaster)
