"""Flying: conquer any land region, adjacent or not; never Seas or the Lake (rulebook, "Flying"; rulings:
the first conquest too may be on any land region).
"""

from __future__ import annotations

from ..abilities import Power, register


class Flying(Power):
    name = "Flying"
    summary = "Conquer any land region, adjacent or not."
    description = (
        "You may conquer any Region of the map except Seas and Lakes. These Regions do not need to be adjacent "
        "or contiguous to ones you already occupy."
    )
    flies = True
    enters_anywhere = True


register(Flying)
