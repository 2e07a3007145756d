"""Fortified: once per turn while Active place a Fortress (max 1 per region, 6 on the map); +1 defence even
In Decline, +1 coin while Active (rulebook, "Fortified").

Decision: the Fortress is placed during the turn's conquests or its redeployment (``place_fortress``), never
on a turn spent going In Decline; it is optional, so an auto-passed turn places none.

Its state: ``"Fortified": {"fortresses": [3, 9]}``; for the turn only ``{"placed": true}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..abilities import Marker, Power, Slot, register, shown
from ..actions import Action, ActionKind, IllegalAction, Verb, offer
from ..components import FORTRESSES
from ..schema import schema_1_markers, schema_1_turn_field
from ..state import CONQUER, REDEPLOY, GameState, Troop
from ..telling import Phrase, Step, Told

FORTRESS = Marker("fortress", "Fortress", defence=1)


@dataclass(frozen=True, slots=True)
class Forts(Slot):
    fortresses: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class Built(Slot):
    #: A Fortress was placed this turn (one per turn).
    placed: bool = False


class Fortified(Power):
    name = "Fortified"
    summary = "One Fortress per turn (+1 defence, +1 coin while Active)."
    description = (
        "Once per turn, as long as your Fortified Race is active, you may place 1 Fortress in a Region you "
        "occupy. The Fortress is worth 1 bonus Victory coin at turn's end, unless you are In Decline. The "
        "Fortress also augments your Region's defense by 1 (just as if you had an additional Race token "
        "stationed there), even if you are In Decline. Remove the Fortress if you abandon the Region or when an "
        "enemy conquers it. There can only ever be a maximum of 1 Fortress per Region, and a maximum of 6 "
        "Fortresses on the map."
    )
    actions = (ActionKind("place_fortress", ("region",), "Build a Fortress on"),)
    verbs = (Verb("fortress", "place_fortress", "region", "build a Fortress on a region"),)
    slot = Forts
    turn_slot = Built
    markers = (FORTRESS,)
    marker_regions = "fortresses"
    schema_1_fields = frozenset({"fortress", "fortress_placed"})

    def refusal(self, state: GameState, seat: int, troop: Troop, region: int) -> str | None:
        if state.phase not in (CONQUER, REDEPLOY):
            return "Place the Fortress during your turn's conquests or redeployment"
        if self.read_turn(state, Built).placed:
            return "One Fortress per turn"
        if not 0 <= region < len(state.regions):
            return f"There is no region {region}"
        r = state.regions[region]
        if r.owner != seat or r.race != troop.race:
            return f"Region {region} is not held by your {shown(troop.race)}"
        fortresses = self.read(state, Forts).fortresses
        if region in fortresses:
            return f"Region {region} already has a Fortress (one per region)"
        if len(fortresses) >= FORTRESSES:
            return f"All {FORTRESSES} Fortresses are on the map"
        return None

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        if state.phase not in (CONQUER, REDEPLOY) or self.read_turn(state, Built).placed:
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
        self.write(state, Forts(self.read(state, Forts).fortresses | {action.region}))
        self.write_turn(state, Built(True))

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        fortresses = self.read(state, Forts).fortresses
        return sum(1 for i in regions if i in fortresses)

    def tell(self, step: Step) -> Told:
        return Phrase("built a Fortress on", step.where(step.region))

    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        self.write(state, Forts(frozenset(schema_1_markers(old, "fortress"))))
        if schema_1_turn_field(old, "fortress_placed") is True:
            self.write_turn(state, Built(True))


register(Fortified)
