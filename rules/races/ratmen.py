"""Ratmen: no benefit but their number (rulebook, "Ratmen")."""

from __future__ import annotations

from ..abilities import Race, register


class Ratmen(Race):
    name = "Ratmen"
    summary = "No power but their number."
    description = "No Race benefit; their sheer number of tokens is enough!"


register(Ratmen)
