"""Ghouls: all tokens stay going In Decline, and In Decline they go on conquering (rulebook,
"Ghouls").

In Decline they conquer (``conquer`` / ``final_conquest`` with ``troop: "declined"``) before or
after the pick, but before any conquest of the Active race (rulings); abandoning a region is
readying, not a conquest, so it does not end their moment. Having conquered, they redeploy freely
like an Active race ("playing exactly as if they were still Active"); their special power no longer
applies.
"""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS


@register
class Ghouls(Race):
    name = "Ghouls"
    tokens = RACE_TOKENS["Ghouls"][0]
    keeps_all_in_decline = True
    conquers_in_decline = True  # before the Active race's conquests (rulings); the engine orders them
