"""Skeletons: 1 new token per 2 non-empty regions conquered, from the box (rulebook,
"Skeletons")."""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS
from ..state import GameState, Troop


@register
class Skeletons(Race):
    name = "Skeletons"
    tokens = RACE_TOKENS["Skeletons"][0]

    def on_conquests_end(self, state: GameState, seat: int, troop: Troop) -> None:
        # "If there are no more tokens in the storage tray, you do not receive any additional
        # tokens."
        troop.hand += min(state.t.nonempty_conquered // 2, state.box_left(troop.race))
