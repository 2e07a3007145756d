"""Seafaring: while Active, conquer the Seas and the Lake as empty regions; keep and score them In
Decline (rulebook, "Seafaring"; rulings: a Sea on the edge of the board may take the first
conquest).
"""

from __future__ import annotations

from ..abilities import Power, register


class Seafaring(Power):
    name = "Seafaring"
    summary = "Conquer the Seas and the Lake, and keep them In Decline."
    description = (
        "As long as your Seafaring race is active, you may conquer the Seas and the Lake, considering them as 3 "
        "empty Regions. You keep these Regions even once you go into Decline, and continue scoring for them for "
        "as long as you have tokens there. Only Seafaring races may occupy the Seas and the Lake."
    )
    sails = True


register(Seafaring)
