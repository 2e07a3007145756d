"""Elves: no token discarded when a region is conquered (rulebook, "Elves")."""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS


@register
class Elves(Race):
    name = "Elves"
    tokens = RACE_TOKENS["Elves"][0]
    keeps_tokens_when_conquered = True  # not against Sorcerers (rulings: a converted Elf is lost)
