"""Underworld: Cavern regions cost 1 token fewer (minimum 1) and, once the race holds a Cavern,
every Cavern counts as adjacent to every other; it does not make a Cavern a border region for a
first conquest (rulebook, "Underworld"; rulings). Caverns on the 2-player board: 3, 5, 14, 17; 14 is
inland."""

import pytest

from rules import IllegalAction, conquest_cost, legal_actions
from tests.rules.builder import Builder, act, region_of


def underworld(held=3, race="Ratmen"):
    return Builder(2).active(0, race, "Underworld", hand=6).empty(held).region(held, seat=0).at(0, "conquer").build()


def cost(state, region):
    return conquest_cost(state, 0, state.players[0].active, region)


def test_a_cavern_costs_one_token_fewer():
    state = underworld(held=9)
    assert cost(state, 14) == 2 + 1 - 1  # the Lost Tribe on 14
    assert cost(state, 10) == 3  # no Cavern


def test_caverns_are_adjacent_to_each_other_once_the_race_holds_one():
    state = underworld(held=3)
    offered = {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    assert {5, 14, 17} <= offered
    assert region_of(act(state, "conquer", 0, region=17), 17)["race"] == "Ratmen"


def test_a_race_without_a_cavern_reaches_no_far_cavern():
    state = underworld(held=4)
    with pytest.raises(IllegalAction, match="not adjacent"):
        act(state, "conquer", 0, region=14)


def test_a_cavern_is_no_border_region_for_the_first_conquest():
    state = Builder(2).combos(("Ratmen", "Underworld"), ("Humans", "Hill")).at(0, "pick").build()
    state = act(state, "pick", 0, combo=0)
    assert 14 not in {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    with pytest.raises(IllegalAction, match="first conquest must be on a border region"):
        act(state, "conquer", 0, region=14)


def test_the_cost_never_falls_below_one():
    # Giants on Mountain 8, next to Cavern 3: 2 - 1 (Giants) - 1 (Cavern).
    state = (
        Builder(2).clear_board().active(0, "Giants", "Underworld", hand=6).region(8, seat=0).at(0, "conquer").build()
    )
    assert cost(state, 3) == 1


def test_without_underworld_caverns_are_ordinary():
    state = Builder(2).active(0, "Ratmen", "Hill", hand=6).empty(3).region(3, seat=0).at(0, "conquer").build()
    assert cost(state, 14) == 3
    with pytest.raises(IllegalAction, match="not adjacent"):
        act(state, "conquer", 0, region=17)
