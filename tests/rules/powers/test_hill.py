"""Hill: +1 coin per Hill region the Active race holds at the end of the turn (rulebook, "Hill").
Hill regions on the 2-player board: 4, 6, 14, 17."""

from rules import turn_score
from tests.rules.builder import Builder, act


def test_each_hill_region_is_worth_one_more_coin():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=0)
        .region(4, seat=0)
        .region(6, seat=0)
        .region(9, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0) == {"regions": 3, "bonus": {"Hill": 2}, "total": 5}
    assert act(state, "end_turn", 0).last["score"]["bonus"] == {"Hill": 2}


def test_other_terrains_give_no_bonus():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=0)
        .region(9, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0)["bonus"] == {}


def test_nothing_on_the_turn_the_race_goes_in_decline():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=0)
        .region(4, seat=0, tokens=2)
        .region(6, seat=0)
        .at(0, "start")
        .build()
    )
    assert act(state, "decline", 0).last["score"] == {"regions": 2, "bonus": {}, "total": 2}


def test_in_decline_hill_regions_give_nothing_more():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ratmen", "Hill")
        .region(4, seat=0, declined=True)
        .active(0, "Humans", "Commando", hand=0)
        .region(14, seat=0)
        .at(0, "redeploy")
        .build()
    )
    # 14 is the Active Humans' and they have no Hill badge; 4 is In Decline.
    assert turn_score(state, 0)["bonus"].get("Hill") is None
