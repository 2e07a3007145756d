"""Wealthy: +7 coins once, at the end of the turn the combo was picked (rulebook, "Wealthy")."""

from rules import auto_pass, turn_score
from tests.rules.builder import Builder, act
from tests.rules.playing import finish_turn


def picked_wealthy():
    state = Builder(2).combos(("Ratmen", "Wealthy"), ("Humans", "Hill")).at(0, "pick").build()
    return act(act(state, "pick", 0, combo=0), "conquer", 0, region=1)


def test_seven_coins_at_the_end_of_the_first_turn():
    state = finish_turn(picked_wealthy(), 0)
    assert state.last["score"] == {"regions": 1, "bonus": {"Wealthy": 7}, "total": 8}
    assert state.players[0].coins == 5 + 8


def test_only_once():
    state = finish_turn(picked_wealthy(), 0)
    state = auto_pass(state, 1)
    assert state.current == 0 and turn_score(state, 0)["bonus"] == {}
    state = finish_turn(state, 0)
    assert state.last["score"]["bonus"] == {}


def test_an_auto_passed_first_turn_still_earns_the_seven():
    assert auto_pass(picked_wealthy(), 0).last["score"]["bonus"] == {"Wealthy": 7}


def test_nothing_on_the_turn_the_race_goes_in_decline():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Wealthy", hand=0, picked_turn=1)
        .region(1, seat=0, tokens=2)
        .at(0, "start", turn=2)
        .build()
    )
    assert act(state, "decline", 0).last["score"]["bonus"] == {}
