"""Spirit: In Decline, never counts toward the one-race-In-Decline limit (rulebook, "Spirit")."""

from __future__ import annotations

from ..abilities import Power, register


class Spirit(Power):
    name = "Spirit"
    summary = "In Decline, does not count toward the one-race-In-Decline limit."
    description = (
        "When the Race tokens associated with your Spirit Special Power go into Decline, they never count toward "
        "the limit stated in Entering In Decline regarding having a single In Decline race on the map at any "
        "given time. You may thus end up with two different races In Decline on the map at the same time and "
        "score for them both. If a third race you control goes into Decline, your Spirits remain on the board, "
        "although the other race already In Decline disappears, as normal. In other words, your In Decline "
        "Spirits never leave the map (except when taking losses from opponents' conquests), though other races "
        "sent In Decline may go away when a new race goes into decline."
    )
    counts_toward_decline_limit = False


register(Spirit)
