"""Ghouls: all tokens stay going In Decline, and In Decline they go on conquering (rulebook, "Ghouls").

In Decline they conquer (``conquer`` / ``final_conquest`` with ``troop: "declined"``) before or after the
pick, but before any conquest of the Active race (rulings); abandoning a region is readying, not a
conquest, so it does not end their moment. Having conquered, they redeploy freely like an Active race
("playing exactly as if they were still Active"); their special power no longer applies.

Their state, for the turn only: ``"Ghouls": {"readied": true, "done": true}`` (their tokens were readied;
their moment is over).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..abilities import Race, Slot, register
from ..conquest import ready_tokens
from ..schema import schema_1_turn_field
from ..state import GameState, Troop
from ..troops import conquering_declined


@dataclass(frozen=True, slots=True)
class Moment(Slot):
    #: The In Decline Ghouls were readied this turn (one token left per region, the others in hand).
    readied: bool = False
    #: Their conquests are over for this turn: their final conquest was tried, or the Active race began.
    done: bool = False


class Ghouls(Race):
    name = "Ghouls"
    summary = "All tokens stay going In Decline, and In Decline they still conquer."
    description = (
        "Your Ghoul tokens all stay on the map when going into Decline, instead of the usual 1 token per "
        "Region. In addition, unlike other Races, once In Decline, your Ghouls can continue to conquer new "
        "Regions in the following turns, playing exactly as if they were still Active tokens. However these "
        "conquests must be done at the start of your turn, before any conquest by your Active race. You may "
        "even attack your own currently Active race with your In Decline Ghouls, if you wish."
    )
    keeps_all_in_decline = True
    conquers_in_decline = True
    turn_slot = Moment
    schema_1_fields = frozenset({"ghouls_readied", "ghouls_done"})

    def declined_refusal(self, state: GameState, seat: int, troop: Troop) -> str | None:
        # Rulings: "before or after the turn's pick, but before any conquest of the Active race".
        if self.read_turn(state, Moment).done or state.t.conquests:
            return "In Decline Ghouls conquer before your Active race; that moment has passed"
        return None

    def ready_declined(self, state: GameState, seat: int, troop: Troop) -> None:
        moment = self.read_turn(state, Moment)
        if not moment.readied:
            ready_tokens(state, seat, troop)  # rulebook, "Ready your Troops", as an Active race
            self.write_turn(state, replace(moment, readied=True))

    def declined_readied(self, state: GameState) -> bool:
        return self.read_turn(state, Moment).readied

    def end_declined_conquests(self, state: GameState, seat: int, troop: Troop) -> None:
        moment = self.read_turn(state, Moment)
        if not moment.done:
            self.write_turn(state, replace(moment, done=True))

    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        # Schema 1 marked the moment over for every player; it matters only to In Decline Ghouls on turn.
        if conquering_declined(state, state.current) is not None:
            readied = schema_1_turn_field(old, "ghouls_readied") is True
            done = schema_1_turn_field(old, "ghouls_done") is True
            self.write_turn(state, Moment(readied, done))


register(Ghouls)
