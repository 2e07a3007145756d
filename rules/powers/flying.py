"""Flying: conquer any land region, adjacent or not; never Seas or the Lake (rulebook, "Flying";
rulings: the first conquest too may be on any land region).
"""

from __future__ import annotations

from ..abilities import Power, register
from ..components import POWER_TOKENS


@register
class Flying(Power):
    name = "Flying"
    tokens = POWER_TOKENS["Flying"]
    flies = True
    enters_anywhere = True
