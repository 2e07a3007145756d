"""Amazons: four tokens serve only for conquest (rulebook, "Amazons"; rulings).

Their state: the 4 tokens held off the board between the end of a redeployment and the next Ready your
Troops (``"Amazons": {"held": 4}``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..abilities import Race, Slot, register
from ..components import RACE_TOKENS
from ..regions import vacate
from ..schema import schema_1_troop_field
from ..state import DEFEND, GameState, Troop
from ..telling import Step, plural
from ..troops import total_tokens

CONQUEST_ONLY = 4


@dataclass(frozen=True, slots=True)
class Held(Slot):
    #: Tokens off the board until troops are readied (they count against the box, not for the tie-break).
    held: int = 0


class Amazons(Race):
    name = "Amazons"
    tokens = RACE_TOKENS["Amazons"][0] + CONQUEST_ONLY
    summary = "+4 tokens for conquering only; they leave the map at redeployment."
    description = (
        "Four of your Amazon tokens may only be used for conquest, not for defense, as indicated by the +4 on "
        "the banner itself. So you start your initial turn with 10 Amazon tokens (plus any additional ones "
        "that may be granted to you by the Special Power associated with the Amazons, depending on your "
        "combo). At the end of each of your Troop Redeployments, remove four tokens from the map, making sure "
        "to leave at least one Amazon token in each of your Regions if possible, and only take these four "
        "tokens back in hand to redeploy on the map once you Ready your Troops at the start of your next turn."
    )
    slot = Held
    schema_1_fields = frozenset({"held"})

    def aside(self, state: GameState, troop: Troop) -> int:
        return self.read(state, Held).held

    def on_ready(self, state: GameState, seat: int, troop: Troop) -> None:
        # The 4 come back in hand only when troops are readied at the start of the next turn.
        held = self.read(state, Held).held
        if held:
            troop.hand += held
            self.write(state, Held())

    def kept_off_board(self, state: GameState, seat: int, troop: Troop) -> int:
        # The 4 leave the map at the end of each redeployment; those still held back (troops not readied
        # this turn) are not taken a second time.
        held = self.read(state, Held).held
        total = total_tokens(state, seat, troop) + held
        return max(0, min(CONQUEST_ONLY, total) - held)

    def on_end_turn(self, state: GameState, seat: int, troop: Troop) -> None:
        """After redeployment remove 4 tokens, leaving one per region where possible (rulings)."""
        held = self.read(state, Held).held
        owed = min(CONQUEST_ONLY, held + troop.hand + _on_board(state, seat, troop)) - held
        take = min(owed, troop.hand)
        troop.hand -= take
        held += take
        owed -= take
        regions = state.regions_of(seat, troop.race)
        while owed > 0 and regions:
            # From the biggest stack first (ties: highest region), emptying a region only if it must be.
            region = max(regions, key=lambda i: (state.regions[i].tokens, i))
            r = state.edit_region(region)
            r.tokens -= 1
            held += 1
            owed -= 1
            if r.tokens == 0:
                vacate(state, region)  # the region is abandoned, its markers with it
                regions.remove(region)
        self.write(state, Held(held))

    def on_decline(self, state: GameState, seat: int, troop: Troop) -> None:
        self.write(state, Held())  # back to the box

    def note(self, step: Step) -> str | None:
        if step.kind not in ("end_turn", "auto_pass", "decline") or step.before.phase == DEFEND:
            return None
        held = self.read(step.after, Held).held
        return f"{plural(held, 'Amazon')} leave the map until the next turn" if held else None

    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        for _, troop, held in schema_1_troop_field(old, "held"):
            if held and troop["race"] == self.name and not troop.get("declined"):
                self.write(state, Held(held))


register(Amazons)


def _on_board(state: GameState, seat: int, troop: Troop) -> int:
    return sum(state.regions[i].tokens for i in state.regions_of(seat, troop.race))
