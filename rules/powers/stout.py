"""Stout: may go In Decline at the end of a turn of conquests, after scoring (rulebook, "Stout";
rulings: the pick turn included). Offered as ``end_turn`` with ``decline: true``.
"""

from __future__ import annotations

from ..abilities import Power, register


class Stout(Power):
    name = "Stout"
    summary = "May go In Decline at the end of a turn of conquests."
    description = (
        "You may go In Decline at the end of a regular turn of conquests, after scoring, instead of spending an "
        "entire turn going into Decline."
    )
    declines_after_scoring = True


register(Stout)
