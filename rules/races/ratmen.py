"""Ratmen: no benefit but their number (rulebook, "Ratmen")."""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS


@register
class Ratmen(Race):
    name = "Ratmen"
    tokens, box = RACE_TOKENS["Ratmen"]
    summary = "No power but their number."
    source = 'Rulebook, "Ratmen"'
    description = "No Race benefit; their sheer number of tokens is enough!"
