"""Wizards: +1 coin per Magic Source region (rulebook, "Wizards"). Magic on the 2-player board: 1,
10, 13, 16."""

from rules import turn_score
from tests.rules.builder import Builder, act


def test_each_magic_region_is_worth_one_more_coin():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Wizards", "Commando")
        .region(1, seat=0)
        .region(10, seat=0)
        .region(2, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0) == {"regions": 3, "bonus": {"Wizards": 2}, "total": 5}


def test_regions_without_magic_give_no_bonus():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Wizards", "Commando")
        .region(2, seat=0)
        .region(4, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0)["bonus"] == {}


def test_wizards_in_decline_give_nothing_for_magic():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Wizards")
        .active(0, "Ratmen", "Commando")
        .region(1, seat=0, declined=True)
        .region(10, seat=0, declined=True)
        .region(4, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0) == {"regions": 3, "bonus": {}, "total": 3}


def test_magic_held_by_another_of_the_players_races_gives_nothing():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ratmen")
        .active(0, "Wizards", "Commando", hand=0)
        .region(1, seat=0, declined=True)
        .region(4, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0)["bonus"] == {}
    assert act(state, "end_turn", 0).last["score"]["total"] == 2
