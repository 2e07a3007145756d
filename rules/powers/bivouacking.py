"""Bivouacking: 5 Encampments, +1 defence each, moved freely at redeployment (rulebook,
"Bivouacking").

Decisions (DESIGN §4, the ``auto`` rule): Encampments a player leaves aside at redeployment, or that
come off the board when a region is abandoned or emptied (Amazons), land one at a time on the
weakest region (tokens + Encampments, ties to the lowest number) at the end of the turn; those of a
conquered region land the same way at the end of the attacker's turn, before any defender is asked
(``ask`` mode). An auto-passed turn leaves those on the board where they are.
"""

from __future__ import annotations

from ..abilities import Power, register
from ..actions import Action, IllegalAction
from ..components import ENCAMPMENTS, POWER_TOKENS
from ..redeploy import place_camps
from ..state import REDEPLOY, GameState, Troop


@register
class Bivouacking(Power):
    name = "Bivouacking"
    tokens = POWER_TOKENS["Bivouacking"]
    action_types = ("place_encampments",)

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        held = state.regions_of(seat, troop.race)
        if state.phase != REDEPLOY or not held:
            return []
        return [
            Action(
                "place_encampments",
                seat,
                regions=tuple(held),
                count=self.available(state, seat, troop),
            )
        ]

    @staticmethod
    def available(state: GameState, seat: int, troop: Troop) -> int:
        on_board = sum(state.regions[i].encampments for i in state.regions_of(seat, troop.race))
        return on_board + troop.camps

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> None:
        if state.phase != REDEPLOY:
            raise IllegalAction("Encampments are placed during your Troop Redeployment")
        held = set(state.regions_of(seat, troop.race))
        total = self.available(state, seat, troop)
        wanted = dict(action.tokens)
        foreign = sorted(set(wanted) - held)
        if foreign:
            raise IllegalAction(f"Encampments go only in your own regions; {foreign[0]} is not yours")
        if sum(wanted.values()) > total:
            placed = sum(wanted.values())
            raise IllegalAction(f"You have {total} Encampments (of {ENCAMPMENTS}); this places {placed}")
        for i in held:
            count = wanted.get(i, 0)
            if state.regions[i].encampments != count:
                state.edit_region(i).encampments = count
        troop.camps = total - sum(wanted.values())

    def on_decline(self, state: GameState, seat: int, troop: Troop) -> None:
        # "When the Race they were associated with goes into Decline, they disappear."
        for i in state.regions_of(seat, troop.race):
            if state.regions[i].encampments:
                state.edit_region(i).encampments = 0
        troop.camps = 0

    def on_pick(self, state: GameState, seat: int, troop: Troop) -> None:
        troop.camps = ENCAMPMENTS

    def on_end_turn(self, state: GameState, seat: int, troop: Troop) -> None:
        # "Deploy the 5 Encampment tokens": those the player left aside go by the auto rule.
        place_camps(state, seat, troop)
