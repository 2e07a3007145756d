"""Forest: +1 coin per Forest region the Active race holds at the end of the turn (rulebook,
"Forest"). Forest regions on the 2-player board: 2, 10, 12, 21."""

from rules import turn_score
from tests.rules.builder import Builder, act


def test_each_forest_region_is_worth_one_more_coin():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Forest", hand=0)
        .region(2, seat=0)
        .region(10, seat=0)
        .region(4, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0) == {"regions": 3, "bonus": {"Forest": 2}, "total": 5}
    assert act(state, "end_turn", 0).last["score"]["bonus"] == {"Forest": 2}


def test_other_terrains_give_no_bonus():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Forest", hand=0)
        .region(4, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0)["bonus"] == {}


def test_nothing_on_the_turn_the_race_goes_in_decline():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Forest", hand=0)
        .region(2, seat=0, tokens=2)
        .region(10, seat=0)
        .at(0, "start")
        .build()
    )
    assert act(state, "decline", 0).last["score"] == {"regions": 2, "bonus": {}, "total": 2}


def test_in_decline_forest_regions_give_nothing_more():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ratmen", "Forest")
        .region(2, seat=0, declined=True)
        .active(0, "Humans", "Commando", hand=0)
        .region(12, seat=0)
        .at(0, "redeploy")
        .build()
    )
    # 12 is the Active Humans' and they have no Forest badge; 2 is In Decline.
    assert turn_score(state, 0)["bonus"].get("Forest") is None
