"""Swamp: +1 coin per Swamp region the Active race holds at the end of the turn (rulebook, "Swamp").
Swamp regions on the 2-player board: 3, 16, 18, 20."""

from rules import turn_score
from tests.rules.builder import Builder, act


def test_each_swamp_region_is_worth_one_more_coin():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Swamp", hand=0)
        .region(3, seat=0)
        .region(16, seat=0)
        .region(4, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0) == {"regions": 3, "bonus": {"Swamp": 2}, "total": 5}
    assert act(state, "end_turn", 0).last["score"]["bonus"] == {"Swamp": 2}


def test_other_terrains_give_no_bonus():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Swamp", hand=0)
        .region(4, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0)["bonus"] == {}


def test_nothing_on_the_turn_the_race_goes_in_decline():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Swamp", hand=0)
        .region(3, seat=0, tokens=2)
        .region(16, seat=0)
        .at(0, "start")
        .build()
    )
    assert act(state, "decline", 0).last["score"] == {"regions": 2, "bonus": {}, "total": 2}


def test_in_decline_swamp_regions_give_nothing_more():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ratmen", "Swamp")
        .region(3, seat=0, declined=True)
        .active(0, "Humans", "Commando", hand=0)
        .region(18, seat=0)
        .at(0, "redeploy")
        .build()
    )
    # 18 is the Active Humans' and they have no Swamp badge; 3 is In Decline.
    assert turn_score(state, 0)["bonus"].get("Swamp") is None
