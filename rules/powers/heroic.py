"""Heroic: at the end of the turn the 2 Heroes stand in 2 different regions, which are immune
(rulebook, "Heroic"). A player who does not place them keeps them where they stand; missing ones go
to the lowest-numbered regions (decision: the deterministic rule of DESIGN §4, also used when an
auto-passed turn ends or a region given up after placing them took a Hero away).
"""

from __future__ import annotations

from ..abilities import Power, register
from ..actions import Action, IllegalAction
from ..components import HEROES, POWER_TOKENS
from ..state import REDEPLOY, GameState, Troop


@register
class Heroic(Power):
    name = "Heroic"
    tokens = POWER_TOKENS["Heroic"]
    action_types = ("place_heroes",)

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
                raise IllegalAction(f"Region {region} is not held by your {troop.race}")
        self._place(state, held, wanted)
        state.edit_turn().heroes_placed = True

    @staticmethod
    def _place(state: GameState, held: list[int], wanted: tuple[int, ...] | list[int]) -> None:
        for i in held:
            want = i in wanted
            if state.regions[i].hero != want:
                state.edit_region(i).hero = want

    def on_end_turn(self, state: GameState, seat: int, troop: Troop) -> None:
        # Rulebook: "At the end of your turn, place each of your 2 Heroes in 2 different Regions":
        # also when a
        # region given up after ``place_heroes`` took a Hero with it.
        held = state.regions_of(seat, troop.race)
        if not held:
            return
        standing = [i for i in held if state.regions[i].hero]
        others = [i for i in held if i not in standing]
        self._place(state, held, (standing + others)[: min(HEROES, len(held))])

    def on_decline(self, state: GameState, seat: int, troop: Troop) -> None:
        for i in state.regions_of(seat, troop.race):
            if state.regions[i].hero:
                state.edit_region(i).hero = False
