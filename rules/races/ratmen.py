"""Ratmen: no benefit but their number (rulebook, "Ratmen")."""

from __future__ import annotations

from ..abilities import Race, register
from ..components import RACE_TOKENS


@register
class Ratmen(Race):
    name = "Ratmen"
    tokens = RACE_TOKENS["Ratmen"][0]
