"""Alchemist: +2 coins at the end of each turn while the race is Active (rulebook, "Alchemist")."""

from rules import turn_score
from tests.rules.builder import Builder, act


def test_two_coins_each_turn_while_active():
    state = (
        Builder(2).clear_board().active(0, "Ratmen", "Alchemist", hand=0).region(3, seat=0).at(0, "redeploy").build()
    )
    assert turn_score(state, 0) == {"regions": 1, "bonus": {"Alchemist": 2}, "total": 3}
    assert act(state, "end_turn", 0).last["score"]["bonus"] == {"Alchemist": 2}


def test_nothing_on_the_turn_the_race_goes_in_decline():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Alchemist", hand=0)
        .region(3, seat=0, tokens=2)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert state.last["score"] == {"regions": 1, "bonus": {}, "total": 1}


def test_nothing_from_an_in_decline_alchemist_race():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ratmen", "Alchemist")
        .region(3, seat=0, declined=True)
        .active(0, "Humans", "Forest", hand=0)
        .region(4, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0) == {"regions": 2, "bonus": {}, "total": 2}
