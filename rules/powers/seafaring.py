"""Seafaring: while Active, conquer the Seas and the Lake as empty regions; keep and score them In
Decline (rulebook, "Seafaring"; rulings: a Sea on the edge of the board may take the first
conquest).
"""

from __future__ import annotations

from ..abilities import Power, register
from ..components import POWER_TOKENS


@register
class Seafaring(Power):
    name = "Seafaring"
    tokens = POWER_TOKENS["Seafaring"]
    sails = True
