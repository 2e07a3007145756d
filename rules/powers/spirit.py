"""Spirit: In Decline, never counts toward the one-race-In-Decline limit (rulebook, "Spirit")."""

from __future__ import annotations

from ..abilities import Power, register
from ..components import POWER_TOKENS


@register
class Spirit(Power):
    name = "Spirit"
    tokens = POWER_TOKENS["Spirit"]
    counts_toward_decline_limit = False
