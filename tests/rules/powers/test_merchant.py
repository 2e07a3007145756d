"""Merchant: +1 coin per region the Active race holds at the end of the turn; nothing for In Decline
regions (rulebook, "Merchant")."""

from rules import turn_score
from tests.rules.builder import Builder, act


def test_each_region_of_the_active_race_is_worth_one_more_coin():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Merchant", hand=0)
        .region(3, seat=0)
        .region(4, seat=0)
        .region(9, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0) == {"regions": 3, "bonus": {"Merchant": 3}, "total": 6}


def test_in_decline_regions_give_the_merchant_nothing():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Orcs", "Swamp")
        .region(10, seat=0, declined=True)
        .region(14, seat=0, declined=True)
        .active(0, "Ratmen", "Merchant", hand=0)
        .region(3, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0) == {"regions": 3, "bonus": {"Merchant": 1}, "total": 4}


def test_an_in_decline_merchant_race_gives_nothing():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Merchant", hand=0)
        .region(3, seat=0, tokens=2)
        .region(4, seat=0)
        .at(0, "start")
        .build()
    )
    assert act(state, "decline", 0).last["score"] == {"regions": 2, "bonus": {}, "total": 2}
