"""Pillaging: +1 coin per non-empty region conquered this turn (rulebook, "Pillaging")."""

from rules import turn_score
from tests.rules.builder import Builder, act
from tests.rules.playing import finish_turn


def pillaging():
    return (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Pillaging", hand=10)
        .region(3, seat=0)
        .region(4)
        .active(1, "Humans", "Hill", hand=0)
        .region(9, seat=1)
        .region(14, seat=1)
        .at(0, "conquer")
        .build()
    )


def test_each_non_empty_region_conquered_is_worth_one_more_coin():
    state = act(act(pillaging(), "conquer", 0, region=4), "conquer", 0, region=9)
    assert turn_score(state, 0)["bonus"] == {"Pillaging": 2}
    assert finish_turn(state, 0).last["score"]["bonus"] == {"Pillaging": 2}


def test_empty_regions_conquered_give_nothing():
    state = act(pillaging(), "conquer", 0, region=2)
    assert turn_score(state, 0)["bonus"] == {}


def test_the_bonus_counts_only_the_current_turn():
    state = finish_turn(act(pillaging(), "conquer", 0, region=4), 0)
    assert turn_score(state, 0)["bonus"] == {}


def test_an_in_decline_pillaging_race_gives_nothing():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Pillaging", hand=0)
        .region(3, seat=0, tokens=2)
        .at(0, "start")
        .build()
    )
    assert act(state, "decline", 0).last["score"]["bonus"] == {}
