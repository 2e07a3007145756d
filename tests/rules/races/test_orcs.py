"""Orcs: +1 coin per non-empty region conquered this turn (rulebook, "Orcs")."""

from rules import turn_score
from tests.rules.builder import Builder, act
from tests.rules.playing import finish_turn


def orcs(hand: int = 9):
    return (
        Builder(2)
        .active(0, "Orcs", "Commando", hand=hand)
        .empty(1, 2)
        .region(1, seat=0)
        .declined(0, "Ratmen")
        .region(2, seat=0, declined=True)
        .at(0, "conquer")
        .build()
    )


def test_each_non_empty_region_conquered_is_worth_one_more_coin():
    state = orcs()
    state = act(state, "conquer", 0, region=6)  # a Lost Tribe
    state = act(state, "conquer", 0, region=11)  # a Lost Tribe
    assert turn_score(state, 0)["bonus"] == {"Orcs": 2}


def test_empty_regions_conquered_give_no_bonus():
    state = orcs()
    state = act(state, "conquer", 0, region=5)  # a Mountain, but empty (rulebook: "considered empty")
    assert turn_score(state, 0)["bonus"] == {}


def test_the_players_own_in_decline_region_counts_as_non_empty():
    state = act(orcs(), "conquer", 0, region=2)
    assert turn_score(state, 0)["bonus"] == {"Orcs": 1}


def test_regions_held_from_earlier_turns_give_no_bonus():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Orcs", "Commando")
        .region(1, seat=0)
        .region(2, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0)["bonus"] == {}


def test_the_bonus_is_scored_only_at_the_end_of_the_turn_of_the_conquests():
    state = act(orcs(), "conquer", 0, region=6)
    state = finish_turn(state, 0)
    assert state.last["score"]["bonus"] == {"Orcs": 1}
    assert turn_score(state, 0)["bonus"] == {}
