"""Ghouls: all tokens stay going In Decline, and In Decline they go on conquering (rulebook, "Ghouls")."""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS


@register
class Ghouls(Race):
    name = "Ghouls"
    tokens = RACE_TOKENS["Ghouls"][0]
    keeps_all_in_decline = True
    conquers_in_decline = True  # before the Active race's conquests (rulings); the engine orders them
