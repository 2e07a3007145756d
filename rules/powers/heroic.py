"""Heroic: at the end of the turn the 2 Heroes stand in 2 different regions, which are immune (rulebook,
"Heroic"). A player who does not place them keeps them where they stand; missing ones go to the
lowest-numbered regions (decision: the deterministic rule of ARCHITECTURE §4, also used when an auto-passed turn
ends or a region given up after placing them took a Hero away).

Its state: ``"Heroic": {"heroes": [4, 9]}``, the Heroes' regions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..abilities import Marker, Power, Slot, register, shown
from ..actions import Action, ActionKind, IllegalAction, Verb
from ..components import HEROES
from ..schema import schema_1_markers
from ..state import REDEPLOY, GameState, Troop
from ..telling import Step, Told

HERO = Marker("hero", "Hero", immune="Heroes")


@dataclass(frozen=True, slots=True)
class Heroes(Slot):
    heroes: frozenset[int] = frozenset()


class Heroic(Power):
    name = "Heroic"
    summary = "2 Heroes make 2 regions immune."
    description = (
        "At the end of your turn, place each of your 2 Heroes in 2 different Regions you occupy. These 2 "
        "Regions are immune to enemy conquests as well as to their racial and special powers until your Heroes "
        "move. Your Heroes disappear when you go into Decline."
    )
    actions = (ActionKind("place_heroes", ("regions",), "Place the Heroes", choice="choose", marker="hero"),)
    verbs = (Verb("heroes", "place_heroes", "regions", "place the Heroes on regions"),)
    slot = Heroes
    markers = (HERO,)
    marker_regions = "heroes"
    # Schema 1 also marked the turn a player placed them ("heroes_placed"), which nothing read.
    schema_1_fields = frozenset({"hero", "heroes_placed"})

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        held = state.regions_of(seat, troop.race)
        if state.phase != REDEPLOY or not held:
            return []
        return [Action("place_heroes", seat, regions=tuple(held), count=min(HEROES, len(held)))]

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> None:
        if state.phase != REDEPLOY:
            raise IllegalAction("Heroes are placed at the end of your turn, after the conquests")
        held = state.regions_of(seat, troop.race)
        wanted = action.regions
        if len(set(wanted)) != len(wanted):
            raise IllegalAction("The two Heroes go in two different regions")
        if len(wanted) != min(HEROES, len(held)):
            raise IllegalAction(f"Place {min(HEROES, len(held))} Heroes, each in a different region you hold")
        for region in wanted:
            if region not in held:
                raise IllegalAction(f"Region {region} is not held by your {shown(troop.race)}")
        self.write(state, Heroes(frozenset(wanted)))

    def on_end_turn(self, state: GameState, seat: int, troop: Troop) -> None:
        # Rulebook: "At the end of your turn, place each of your 2 Heroes in 2 different Regions": also when
        # a region given up after ``place_heroes`` took a Hero with it.
        held = state.regions_of(seat, troop.race)
        if not held:
            return
        standing = [i for i in held if i in self.read(state, Heroes).heroes]
        others = [i for i in held if i not in standing]
        self.write(state, Heroes(frozenset((standing + others)[: min(HEROES, len(held))])))

    def on_decline(self, state: GameState, seat: int, troop: Troop) -> None:
        self.write(state, Heroes())

    def tell(self, step: Step) -> Told:
        regions = step.action.regions if step.action is not None else ()
        return f"placed the Heroes on {' and '.join(step.where(r) for r in regions)}"

    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        self.write(state, Heroes(frozenset(schema_1_markers(old, "hero"))))


register(Heroic)
