"""Ratmen: no benefit but their number (rulebook, "Ratmen")."""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS


class Ratmen(Race):
    name = "Ratmen"
    tokens = RACE_TOKENS["Ratmen"][0]
    box = RACE_TOKENS["Ratmen"][1]
    summary = "No power but their number."
    source = 'Rulebook, "Ratmen"'
    description = "No Race benefit; their sheer number of tokens is enough!"


register(Ratmen)
