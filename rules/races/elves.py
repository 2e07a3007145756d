"""Elves: no token discarded when a region is conquered (rulebook, "Elves")."""

from __future__ import annotations

from ..abilities import Race, register


class Elves(Race):
    name = "Elves"
    summary = "Lose no token when a region of theirs is conquered."
    description = (
        "When the enemy conquers one of your Regions, keep all your Elf tokens in hand for redeployment at the "
        "end of the current player's turn, rather than discarding 1 Elf token back into the storage tray."
    )
    keeps_tokens_when_conquered = True  # not against Sorcerers (rulings: a converted Elf is lost)


register(Elves)
