"""Skeletons: 1 new token per 2 non-empty regions conquered, from the box (rulebook, "Skeletons").

Their state, for the turn only: ``"Skeletons": {"added": 2}``, the new tokens taken this turn (once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..abilities import Race, Slot, register
from ..schema import schema_1_turn_field
from ..state import GameState, Troop
from ..telling import Step, plural
from ..troops import box_left


@dataclass(frozen=True, slots=True)
class Reinforced(Slot):
    #: New tokens taken from the box this turn; None: not yet.
    added: int | None = None


class Skeletons(Race):
    name = "Skeletons"
    summary = "1 new token for every 2 non-empty regions conquered."
    description = (
        "During your Troop Redeployment, take 1 new Skeleton token from the storage tray for every 2 non-empty "
        "Regions you conquered this turn, and add it to the troops you redeploy at the end of your turn. If "
        "there are no more tokens in the storage tray, you do not receive any additional tokens."
    )
    turn_slot = Reinforced
    schema_1_fields = frozenset({"skeletons_added"})

    def on_conquests_end(self, state: GameState, seat: int, troop: Troop) -> None:
        if self.read_turn(state, Reinforced).added is not None:
            return  # once a turn
        # "If there are no more tokens in the storage tray, you do not receive any additional tokens."
        added = min(state.t.nonempty_conquered // 2, box_left(state, troop.race))
        troop.hand += added
        self.write_turn(state, Reinforced(added))

    def note(self, step: Step) -> str | None:
        if self.read_turn(step.before, Reinforced).added is not None:
            return None
        added = self.read_turn(step.after, Reinforced).added
        return f"{plural(added, 'new Skeleton')} from the box" if added else None

    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        # Schema 1 marked it for every player; it matters only to Active Skeletons on turn.
        active = state.players[state.current].active
        if active is not None and active.race == self.name and schema_1_turn_field(old, "skeletons_added"):
            # Taken already; how many, schema 1 did not say (the turn's tellings only ask whether).
            self.write_turn(state, Reinforced(state.t.nonempty_conquered // 2))


register(Skeletons)
