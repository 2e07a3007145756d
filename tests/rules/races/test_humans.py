"""Humans: +1 coin per Farmland region (rulebook, "Humans"). Farmland on the 2-player board: 1, 9,
11, 13."""

from rules import turn_score
from tests.rules.builder import Builder, act


def test_each_farmland_region_is_worth_one_more_coin():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Humans", "Commando")
        .region(1, seat=0)
        .region(11, seat=0)
        .region(2, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0) == {"regions": 3, "bonus": {"Humans": 2}, "total": 5}


def test_other_terrains_give_no_bonus():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Humans", "Commando")
        .region(2, seat=0)
        .region(4, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0)["bonus"] == {}


def test_humans_in_decline_give_nothing_for_farmland():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Humans", "Commando")
        .region(1, seat=0, tokens=2)
        .region(11, seat=0)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert state.last["score"] == {"regions": 2, "bonus": {}, "total": 2}
    assert turn_score(state, 0)["bonus"] == {}
