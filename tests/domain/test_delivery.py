"""service.domain.delivery: the parts of a drain that need no database (links, envelope)."""

from __future__ import annotations

from service.domain import delivery
from service.domain.links import CALENDAR, CHOICES, LinkMaker, signer_for

BASE = "https://smallworld.example"


def test_a_players_untimed_links_are_signed_once_and_are_those_the_link_maker_signs() -> None:
    links = LinkMaker(signer_for("a key of this test"), BASE)
    for player in (1, 2, 77):
        assert delivery._untimed_url(links, CHOICES, player) == links.choices_url(player, serial=0)
        assert delivery._untimed_url(links, CALENDAR, player) == links.address_calendar_url(
            player, serial=0, calendar_serial=0
        )
    # Kept by the keys they are signed with: a new key signs anew, the old key's links are not served.
    rotated = LinkMaker(signer_for("a new key", ["a key of this test"]), BASE)
    assert (
        delivery._untimed_url(rotated, CHOICES, 1) == rotated.choices_url(1, serial=0) != links.choices_url(1, serial=0)
    )
    elsewhere = LinkMaker(signer_for("a key of this test"), "https://other.example")
    assert delivery._untimed_url(elsewhere, CALENDAR, 1) == elsewhere.address_calendar_url(
        1, serial=0, calendar_serial=0
    )
