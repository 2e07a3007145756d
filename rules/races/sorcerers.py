"""Sorcerers: once per turn per opponent, replace a lone Active enemy token (rulebook, "Sorcerers";
rulings).

The token must be alone in its region (a Troll's Lair, a Fortress or a Mountain does not protect it;
an Encampment does), Active, in a region adjacent to a Sorcerer region and not immune. The new
Sorcerer comes from the box, so it works with an empty hand but not with an empty box; the replaced
token (an Elf too) is lost.

Decisions: "adjacent" means sharing a border on the board; Flying and Underworld stretch the race's
conquests, not this racial power. A conversion is a conquest of a non-empty region (Pillaging counts
it, the In Decline Ghouls' moment ends, the victim counts as attacked for the Diplomat); it needs no
Berserk roll and is refused while one waits.
"""

from __future__ import annotations

from typing import Any

from ..abilities import Race, register
from ..actions import Action, IllegalAction, offer
from ..components import RACE_TOKENS
from ..conquest import conquest_refusal, ready_troops
from ..state import CONQUER, START, GameState, Troop


@register
class Sorcerers(Race):
    name = "Sorcerers"
    tokens = RACE_TOKENS["Sorcerers"][0]
    action_types = ("convert",)

    def refusal(self, state: GameState, seat: int, troop: Troop, region: int) -> str | None:
        if state.phase not in (START, CONQUER) or state.t.berserk_die is not None:
            return "Sorcerers convert during your conquests"
        if not 0 <= region < len(state.regions):
            return f"There is no region {region}"
        r = state.regions[region]
        if r.owner < 0 or r.owner == seat:
            return f"Region {region} holds no opponent's token to convert"
        victim = state.players[r.owner].active
        if victim is None or victim.race != r.race:
            return f"Sorcerers convert only Active tokens; region {region} is In Decline"
        if r.tokens != 1:
            return f"Sorcerers convert a token alone in its region; region {region} holds {r.tokens}"
        if r.encampments:
            return f"An Encampment protects the token in region {region} from Sorcerers"
        if r.owner in state.t.converted:
            return f"Sorcerers convert once per turn per opponent; you already converted player {r.owner}"
        if not state.board.neighbours[region].intersection(state.regions_of(seat, troop.race)):
            return f"Region {region} is not adjacent to one of your Sorcerer regions"
        if state.box_left(troop.race) < 1:
            return "No Sorcerer token is left in the box"
        return conquest_refusal(state, seat, troop, region)

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        if state.phase not in (START, CONQUER):
            return []
        # Only regions next to a Sorcerer region qualify (refusal); ask about those alone.
        neighbours = state.board.neighbours
        near: set[int] = set()
        for i in state.regions_of(seat, troop.race):
            near |= neighbours[i]
        return [
            offer("convert", seat, i)
            for i in sorted(near)
            if state.regions[i].owner not in (-1, seat) and self.refusal(state, seat, troop, i) is None
        ]

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> dict[str, Any] | None:
        assert action.region is not None
        refusal = self.refusal(state, seat, troop, action.region)
        if refusal:
            raise IllegalAction(refusal)
        victim = state.regions[action.region].owner
        ready_troops(state, seat)
        troop = state.edit_player(seat).active  # type: ignore[assignment]
        t = state.edit_turn()
        t.converted.append(victim)
        t.ghouls_done = True
        if victim not in t.attacked:
            t.attacked.append(victim)
        t.conquests += 1
        t.conquered.append(action.region)
        t.nonempty_conquered += 1
        r = state.edit_region(action.region)
        r.clear_occupant()  # the converted token goes back to the box, the Lair or Fortress with it
        r.owner, r.race, r.tokens = seat, troop.race, 1
        return None
